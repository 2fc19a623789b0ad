# Run 6 (session 2026-12-02): Triton bf16 `fused` past one wave of three programs per SM.
# tr2 = run 5's (byte permutes; 32 KB per iteration, 74 registers, three programs per SM; from
# 5 rows per SM capped at 72 registers, also three); tr3 = tr2 with 16 KB per iteration beyond
# 3 rows per SM for 16-bit rows too (paired bf16: 40 registers, six programs per SM) and no cap.
# `triton` (auto) at R = 512/768/1024/2048 (R <= 396 runs the same kernel in both), every V,
# bf16, every support, two rounds.
S=$OUT/run-6; mkdir -p $S; cp .ab/s11run6.sh $S/command.sh
run() { (cd .ab/$1 && python3 -c "from masks.compare import code_fingerprint; print('$2 code_sha256', code_fingerprint())" >> $S/env.txt
   s=$SECONDS; PYTHONPATH=/tmp/site:$PWD timeout 130 python3 -m masks compare --backends triton --num-reqs 512,768,1024,2048 --vocab 128256,151936,262144 --dtypes bf16 --budget-ms 20 --time-limit-s 115 --no-progress --out-dir $S/$2 > $S/$2.txt 2>&1; echo "$2 rc $? $((SECONDS-s)) s" >> $S/times.txt); }
for round in 1 2; do run tr2 tr2-$round; run tr3 tr3-$round; done
for round in 1 2; do python3 benchmarks/ab_table.py $S/tr2-$round/compare.json $S/tr3-$round/compare.json > $S/ab-$round-tr3.md; done
rm -f $S/*/*.png $S/*/compare.csv; tar -czf $OUT/s.tgz -C $OUT run-6
cat $S/times.txt $S/env.txt; grep -h "mismatch\|rror" $S/t*.txt | head; for f in $S/ab-*.md; do echo $f; cat $f | tail -n 42; done
