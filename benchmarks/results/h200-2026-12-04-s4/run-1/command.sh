# Run 1 (session 2026-12-04-s4): Numba's pass 2 (`_rank_range`) writing ids through the 32-bit
# `_emit_ids`/`_fill_consecutive` of pass 1 (one pair of helpers, B = the working tree) against
# HEAD's int64 pair (A = .ab/A, git archive HEAD masks). numba:split at R = 1-64 and numba:fused
# at R = 256 and 1024, V = 128256/151936, fp32 and bf16, every support; each build in its own
# process, A B A B; then the Numba tests natively (B).
S=$OUT/run-1; mkdir -p $S; R=$PWD; cp .ab/s30run1.sh $S/command.sh
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv > $S/env.txt; hostname >> $S/env.txt
for t in A B; do P=/tmp/site:$R; [ $t = A ] && P=/tmp/site:$R/.ab/A; (cd /tmp && PYTHONPATH=$P python3 -c "from masks.compare import code_fingerprint; import masks; print('$t', masks.__file__, 'code_sha256', code_fingerprint())") >> $S/env.txt; done
run() {  # name, tree
  P=/tmp/site:$R; [ $2 = A ] && P=/tmp/site:$R/.ab/A
  s=$SECONDS; (cd /tmp && PYTHONPATH=$P timeout 80 python3 -m masks compare --backends numba:split --num-reqs 1,4,16,64 --vocab 128256,151936 --dtypes fp32,bf16 --budget-ms 15 --time-limit-s 70 --no-progress --out-dir $S/$1-split > $S/$1-split.txt 2>&1); echo "$1-split [$2] rc $? $((SECONDS-s)) s" >> $S/env.txt
  s=$SECONDS; (cd /tmp && PYTHONPATH=$P timeout 60 python3 -m masks compare --backends numba:fused --num-reqs 256,1024 --vocab 128256,151936 --dtypes fp32,bf16 --budget-ms 15 --time-limit-s 50 --no-progress --out-dir $S/$1-fused > $S/$1-fused.txt 2>&1); echo "$1-fused [$2] rc $? $((SECONDS-s)) s" >> $S/env.txt
  rm -f $S/$1-*/*.png $S/$1-*/compare.csv; tar -czf $OUT/s.tgz -C $OUT run-1
}
run A1 A; run B1 B; run A2 A; run B2 B
s=$SECONDS; (cd /tmp && PYTHONPATH=/tmp/site:$R timeout 120 python3 -m pytest -q -p no:cacheprovider --rootdir $R $R/tests/test_numba_backend.py $R/tests/test_tiling.py > $S/tests-numba.txt 2>&1); echo "tests rc $? $((SECONDS-s)) s" >> $S/env.txt
rm -f $OUT/s.tgz; tar -czf $OUT/s.tgz -C $OUT run-1
cat $S/env.txt; tail -3 $S/tests-numba.txt
for k in split fused; do for v in 1 2; do echo "== $k round $v"; (cd $R/benchmarks && PYTHONPATH=/tmp/site:$R python3 ab_table.py $S/A$v-$k/compare.json $S/B$v-$k/compare.json > $S/ab-$k-$v.md; tail -n 4 $S/ab-$k-$v.md); done; done
