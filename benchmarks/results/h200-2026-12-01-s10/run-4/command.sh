# Run 4 (session 2026-12-01-s10): Numba's regroup indexed with unsigned integers (numba emits
# negative-index wraparound code for signed ones: bf16's ranked pass-1 loop 364 -> 341 SASS
# instructions, fp32 296 -> 289), .ab/tr, against the package of run 3's tr (c1a87db), .ab/ta.
# First the Numba GPU tests on tr, then `numba` (auto) over R = 1/4/16/256/512/1024, every V,
# fp32 and bf16, every support, three rounds, interleaved by tree.
S=$OUT/run-4; mkdir -p $S; cp .ab/s10run4.sh $S/command.sh
(cd .ab/tr && PYTHONPATH=/tmp/site:$PWD timeout 200 python3 -m pytest -q -p no:cacheprovider tests/test_numba_backend.py > $S/pytest-tr.log 2>&1; echo "pytest rc $?" >> $S/env.txt); tail -n 3 $S/pytest-tr.log
run() { (cd .ab/$1 && python3 -c "from masks.compare import code_fingerprint; print('$2 code_sha256', code_fingerprint())" >> $S/env.txt
   s=$SECONDS; PYTHONPATH=/tmp/site:$PWD timeout 130 python3 -m masks compare --backends numba --num-reqs 1,4,16,256,512,1024 --vocab 128256,151936,262144 --dtypes bf16,fp32 --budget-ms 20 --time-limit-s 115 --no-progress --out-dir $S/$2 > $S/$2.txt 2>&1; echo "$2 rc $? $((SECONDS-s)) s" >> $S/times.txt); }
for round in 1 2 3; do run ta ta-$round; run tr tr-$round; done
for round in 1 2 3; do python3 benchmarks/ab_table.py $S/ta-$round/compare.json $S/tr-$round/compare.json > $S/ab-$round-tr.md; done
rm -f $S/*/*.png $S/*/compare.csv; tar -czf $OUT/s.tgz -C $OUT run-4
cat $S/times.txt $S/env.txt; grep -h "mismatch\|rror" $S/t*.txt | head; for f in $S/ab-*.md; do echo $f; tail -n 2 $f; done
