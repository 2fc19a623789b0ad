# Run 4 (session 2026-12-02): Triton `fused` ranking fp32/fp64 rows in pass 1 (.ab/tr, the working
# tree: `_rank_words` per block, 32 KB per iteration up to 3 rows per SM, 16 KB beyond) against
# HEAD c9d1a7c (.ab/ta). First the Triton GPU tests on tr, then `triton` (auto) at
# R = 256/384/512/1024/2048, every V, fp32, every support, two rounds, interleaved by tree.
S=$OUT/run-4; mkdir -p $S; cp .ab/s11run4.sh $S/command.sh
(cd .ab/tr && PYTHONPATH=/tmp/site:$PWD timeout 240 python3 -m pytest -q -p no:cacheprovider tests/test_triton_backend.py tests/test_conformance.py tests/test_fuzz.py -k "triton" > $S/pytest-tr.log 2>&1; echo "pytest rc $?" >> $S/env.txt); tail -n 3 $S/pytest-tr.log
run() { (cd .ab/$1 && python3 -c "from masks.compare import code_fingerprint; print('$2 code_sha256', code_fingerprint())" >> $S/env.txt
   s=$SECONDS; PYTHONPATH=/tmp/site:$PWD timeout 130 python3 -m masks compare --backends triton --num-reqs 256,384,512,1024,2048 --vocab 128256,151936,262144 --dtypes fp32 --budget-ms 20 --time-limit-s 115 --no-progress --out-dir $S/$2 > $S/$2.txt 2>&1; echo "$2 rc $? $((SECONDS-s)) s" >> $S/times.txt); }
for round in 1 2; do run ta ta-$round; run tr tr-$round; done
for round in 1 2; do python3 benchmarks/ab_table.py $S/ta-$round/compare.json $S/tr-$round/compare.json > $S/ab-$round-tr.md; done
rm -f $S/*/*.png $S/*/compare.csv; tar -czf $OUT/s.tgz -C $OUT run-4
cat $S/times.txt $S/env.txt; grep -h "mismatch\|rror" $S/t*.txt | head; for f in $S/ab-*.md; do echo $f; cat $f | tail -n 50; done
