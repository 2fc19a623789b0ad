# Run 4 (session 2026-12-03-s2): Numba `fused` pass 1 after run 3's profile (dense bf16 rows at
# R = 256, V = 128256: 12% more instructions than CuPy before the barrier; NVVM sank the id sink
# and the regroup offset into every ranked group, rereading the thread index and rebuilding a
# generic shared address each time). B = the working tree: both `held` in registers by an
# opaque copy, and the regroup stores indexed so that their offsets fold into STS; A = HEAD
# (.ab/A, a9aaf02). numba:fused at R = 256 and 512, every V, fp32 and bf16, every support, each
# build in its own process, A B A B; then the Numba tests natively (B), then the full default
# grid with B.
S=$OUT/run-4; mkdir -p $S; R=$PWD; cp .ab/s25run4.sh $S/command.sh
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader > $S/env.txt; hostname >> $S/env.txt
for t in A B; do P=/tmp/site:$R; [ $t = A ] && P=/tmp/site:$R/.ab/A; (cd /tmp && PYTHONPATH=$P python3 -c "from masks.compare import code_fingerprint; import masks; print('$t', masks.__file__, 'code_sha256', code_fingerprint())") >> $S/env.txt; done
run() {  # name, tree
  P=/tmp/site:$R; [ $2 = A ] && P=/tmp/site:$R/.ab/A
  s=$SECONDS; (cd /tmp && PYTHONPATH=$P timeout 75 python3 -m masks compare --backends numba:fused --num-reqs 256,512 --dtypes fp32,bf16 --budget-ms 15 --time-limit-s 60 --no-progress --out-dir $S/$1 > $S/$1.txt 2>&1); echo "$1 [$2] rc $? $((SECONDS-s)) s" >> $S/env.txt
  rm -f $S/$1/*.png $S/$1/compare.csv; tar -czf $OUT/s.tgz -C $OUT run-4
}
run A1 A; run B1 B; run A2 A; run B2 B
for v in 1 2; do PYTHONPATH=/tmp/site:$R python3 benchmarks/ab_table.py $S/A$v/compare.json $S/B$v/compare.json | tail -4; done
s=$SECONDS; (cd /tmp && PYTHONPATH=/tmp/site:$R timeout 200 python3 -m pytest -q -rs -p no:cacheprovider --rootdir $R $R/tests -k numba > $S/tests-numba.txt 2>&1); echo "tests -k numba rc $? $((SECONDS-s)) s" >> $S/env.txt
tar -czf $OUT/s.tgz -C $OUT run-4; tail -3 $S/tests-numba.txt
s=$SECONDS; PYTHONPATH=/tmp/site:$R timeout 150 python3 -m masks compare --out-dir $S/final --time-limit-s 130 --budget-ms 20 --no-progress > $S/final.txt 2> $S/final.err
echo "compare rc $? $((SECONDS-s)) s" >> $S/env.txt
PYTHONPATH=/tmp/site:$R python3 benchmarks/summarize.py $S/final/compare.json > $S/summary.md; rm -f $OUT/s.tgz; tar -czf $OUT/s.tgz -C $OUT run-4
cat $S/summary.md; tail -n 3 $S/final.err; cat $S/env.txt
