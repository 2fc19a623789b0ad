# Run 5 (session 2026-12-01-s8): Numba's fused kernel ranking during pass 1 (a port of CUDA C's
# rank_bytes written in 32-bit arithmetic: 808 SASS instructions per group of 8 bf16 loads
# against CUDA C's 840; fp32 495 against 464), .ab/tr, against the committed package, .ab/ta.
# First the Numba GPU tests and the conformance suite's Numba cases on tr, then `numba` (auto),
# R = 1/4/16/256/512/1024, every V, fp32 and bf16, every support, interleaved twice.
S=$OUT/run-5; mkdir -p $S; R=$PWD; cp .ab/s8run5.sh $S/command.sh
(cd .ab/tr && PYTHONPATH=/tmp/site:$PWD timeout 200 python3 -m pytest -q -p no:cacheprovider tests/test_numba_backend.py tests/test_conformance.py -k numba > $S/pytest-tr.log 2>&1; echo "pytest rc $?" >> $S/env.txt); tail -n 3 $S/pytest-tr.log
run() { (cd .ab/$1 && python3 -c "from masks.compare import code_fingerprint; print('$2 code_sha256', code_fingerprint())" >> $S/env.txt
   s=$SECONDS; PYTHONPATH=/tmp/site:$PWD timeout 130 python3 -m masks compare --backends numba --num-reqs 1,4,16,256,512,1024 --vocab 128256,151936,262144 --dtypes bf16,fp32 --budget-ms 20 --time-limit-s 115 --no-progress --out-dir $S/$2 > $S/$2.txt 2>&1; echo "$2 rc $? $((SECONDS-s)) s" >> $S/times.txt); }
for round in 1 2; do run ta ta-$round; run tr tr-$round; done
for round in 1 2; do python3 benchmarks/ab_table.py $S/ta-$round/compare.json $S/tr-$round/compare.json > $S/ab-$round-tr.md; done
rm -f $S/*/*.png; tar -czf $OUT/s.tgz -C $OUT run-5
cat $S/times.txt $S/env.txt; grep -h "mismatch\|rror" $S/t*.txt | head; for f in $S/ab-*.md; do echo $f; tail -n 3 $f; done
grep -h "| numba | \(256\|512\) " $S/ab-1-tr.md | head -40
