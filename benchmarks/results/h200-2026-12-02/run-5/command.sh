# Run 5 (session 2026-12-02): Triton's paired 16-bit pass-1 test by byte permutes (.ab/tr2: the
# working tree; `_top_bits` = prmt + mask, one multiply gathers a unit's 8 flags, popc counts
# them: the pass-1 loop 342 -> 258 SASS instructions per 8 vector loads, 104 -> 74 registers)
# against run 4's tr (fp32 ranked in pass 1, 16-bit unchanged). First Triton GPU tests on tr2
# (the backend file's 16-bit and plan checks, the conformance suite's 16-bit triton cases), then
# `triton` (auto) at R = 256/384/512/1024/2048, every V, bf16, every support, two rounds.
S=$OUT/run-5; mkdir -p $S; cp .ab/s11run5.sh $S/command.sh
(cd .ab/tr2 && PYTHONPATH=/tmp/site:$PWD timeout 200 python3 -m pytest -q -p no:cacheprovider tests/test_triton_backend.py tests/test_conformance.py -k "two_per_word or capped or bit_helpers or planned or halves or (triton and (bfloat16 or float16))" > $S/pytest-tr2.log 2>&1; echo "pytest rc $?" >> $S/env.txt); tail -n 3 $S/pytest-tr2.log
run() { (cd .ab/$1 && python3 -c "from masks.compare import code_fingerprint; print('$2 code_sha256', code_fingerprint())" >> $S/env.txt
   s=$SECONDS; PYTHONPATH=/tmp/site:$PWD timeout 130 python3 -m masks compare --backends triton --num-reqs 256,384,512,1024,2048 --vocab 128256,151936,262144 --dtypes bf16 --budget-ms 20 --time-limit-s 115 --no-progress --out-dir $S/$2 > $S/$2.txt 2>&1; echo "$2 rc $? $((SECONDS-s)) s" >> $S/times.txt); }
for round in 1 2; do run tr tr-$round; run tr2 tr2-$round; done
for round in 1 2; do python3 benchmarks/ab_table.py $S/tr-$round/compare.json $S/tr2-$round/compare.json > $S/ab-$round-tr2.md; done
rm -f $S/*/*.png $S/*/compare.csv; tar -czf $OUT/s.tgz -C $OUT run-5
cat $S/times.txt $S/env.txt; grep -h "mismatch\|rror" $S/t*.txt | head; for f in $S/ab-*.md; do echo $f; cat $f | tail -n 50; done
