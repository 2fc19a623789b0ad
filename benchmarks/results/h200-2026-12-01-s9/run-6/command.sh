# Run 6 (session 2026-12-01-s9): Numba's _rank_bytes regrouped through shared memory as CUDA C's
# (run 5), .ab/tr, against the committed package of the session's start, .ab/ta. First the Numba
# GPU tests and the conformance suite's Numba cases on tr, then `numba` (auto) over
# R = 1/4/16/256/512/1024, every V, fp32 and bf16, every support, two rounds; then Nsight Compute
# on tr's CuPy fused kernel (run 4's cases).
S=$OUT/run-6; mkdir -p $S; cp .ab/s9run6.sh $S/command.sh
(cd .ab/tr && PYTHONPATH=/tmp/site:$PWD timeout 200 python3 -m pytest -q -p no:cacheprovider tests/test_numba_backend.py tests/test_conformance.py -k numba > $S/pytest-tr.log 2>&1; echo "pytest rc $?" >> $S/env.txt); tail -n 3 $S/pytest-tr.log
run() { (cd .ab/$1 && python3 -c "from masks.compare import code_fingerprint; print('$2 code_sha256', code_fingerprint())" >> $S/env.txt
   s=$SECONDS; PYTHONPATH=/tmp/site:$PWD timeout 130 python3 -m masks compare --backends numba --num-reqs 1,4,16,256,512,1024 --vocab 128256,151936,262144 --dtypes bf16,fp32 --budget-ms 20 --time-limit-s 115 --no-progress --out-dir $S/$2 > $S/$2.txt 2>&1; echo "$2 rc $? $((SECONDS-s)) s" >> $S/times.txt); }
for round in 1 2; do run ta ta-$round; run tr tr-$round; done
for round in 1 2; do python3 benchmarks/ab_table.py $S/ta-$round/compare.json $S/tr-$round/compare.json > $S/ab-$round-tr.md; done
rm -f $S/*/*.png; tar -czf $OUT/s.tgz -C $OUT run-6
(cd .ab/tr && PYTHONPATH=/tmp/site:$PWD timeout 120 ncu --clock-control none --kernel-name regex:compact_fused --launch-skip 4 --launch-count 4 --section SpeedOfLight \
  --metrics smsp__inst_executed.sum,dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum python3 prof.py > $S/ncu-cupy.txt 2>&1; echo "ncu rc $?" >> $S/env.txt)
rm -f $OUT/s.tgz; tar -czf $OUT/s.tgz -C $OUT run-6
cat $S/times.txt $S/env.txt; grep -h "mismatch\|rror" $S/t*.txt | head; for f in $S/ab-*.md; do echo $f; tail -n 3 $f; done
grep -h "| numba | \(256\|512\) " $S/ab-1-tr.md | grep -v 262144 | head -40; grep -h "| numba | \(1\|4\|16\) " $S/ab-1-tr.md | grep 151936 | grep float32
grep -E "compact_fused|inst_executed|Duration" $S/ncu-cupy.txt
