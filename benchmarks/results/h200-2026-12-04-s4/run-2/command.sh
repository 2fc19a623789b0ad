# Run 2 (session 2026-12-04-s4): run 1's B made split's full rows 3-9% slower at R = 16-64; C =
# B with the shared `_fill_consecutive` as a range loop bounded once (rank < cap), as A's pass 2
# had it. A = HEAD (.ab/A), B = the working tree, C = .ab/C. numba:split at R = 1, 16, 64 and
# numba:fused at R = 256 and 1024, V = 128256/151936, fp32 and bf16, every support; each build
# in its own process, A B C A B C.
S=$OUT/run-2; mkdir -p $S; R=$PWD; cp .ab/s30run2.sh $S/command.sh
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv > $S/env.txt; hostname >> $S/env.txt
tree() { P=/tmp/site:$R; [ $1 = A ] && P=/tmp/site:$R/.ab/A; [ $1 = C ] && P=/tmp/site:$R/.ab/C; echo $P; }
for t in A B C; do (cd /tmp && PYTHONPATH=$(tree $t) python3 -c "from masks.compare import code_fingerprint; import masks; print('$t', masks.__file__, 'code_sha256', code_fingerprint())") >> $S/env.txt; done
run() {  # name, tree
  P=$(tree $2)
  s=$SECONDS; (cd /tmp && PYTHONPATH=$P timeout 70 python3 -m masks compare --backends numba:split --num-reqs 1,16,64 --vocab 128256,151936 --dtypes fp32,bf16 --budget-ms 15 --time-limit-s 60 --no-progress --out-dir $S/$1-split > $S/$1-split.txt 2>&1); echo "$1-split [$2] rc $? $((SECONDS-s)) s" >> $S/env.txt
  s=$SECONDS; (cd /tmp && PYTHONPATH=$P timeout 60 python3 -m masks compare --backends numba:fused --num-reqs 256,1024 --vocab 128256,151936 --dtypes fp32,bf16 --budget-ms 15 --time-limit-s 50 --no-progress --out-dir $S/$1-fused > $S/$1-fused.txt 2>&1); echo "$1-fused [$2] rc $? $((SECONDS-s)) s" >> $S/env.txt
  rm -f $S/$1-*/*.png $S/$1-*/compare.csv; tar -czf $OUT/s.tgz -C $OUT run-2
}
run A1 A; run B1 B; run C1 C; run A2 A; run B2 B; run C2 C
s=$SECONDS; (cd /tmp && PYTHONPATH=$(tree C) timeout 100 python3 -m pytest -q -p no:cacheprovider --rootdir $R $R/tests/test_numba_backend.py > $S/tests-numba-C.txt 2>&1); echo "tests C rc $? $((SECONDS-s)) s" >> $S/env.txt
for k in split fused; do for v in 1 2; do for t in B C; do (cd $R/benchmarks && PYTHONPATH=/tmp/site:$R python3 ab_table.py $S/A$v-$k/compare.json $S/$t$v-$k/compare.json > $S/ab-$k-$v-A$t.md); done; done; done
rm -f $OUT/s.tgz; tar -czf $OUT/s.tgz -C $OUT run-2
cat $S/env.txt; tail -2 $S/tests-numba-C.txt
for f in $S/ab-*.md; do echo "== $(basename $f)"; tail -n 2 $f; done
