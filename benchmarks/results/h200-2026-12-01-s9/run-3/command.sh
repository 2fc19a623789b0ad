# Run 3 (session 2026-12-01-s9): CuPy pass 1 software-pipelined (a group tested, the next
# group's loads issued, then the tested group ranked; 32-bit segment and column arithmetic; a
# range's last partial group loaded together), .ab/tm, against the committed package, .ab/ta:
# `cupy` (auto) over R = 1/4/16/256/512/1024, every V, fp32 and bf16, every support, two rounds.
S=$OUT/run-3; mkdir -p $S; cp .ab/s9run3.sh $S/command.sh
run() { (cd .ab/$1 && python3 -c "from masks.compare import code_fingerprint; print('$2 code_sha256', code_fingerprint())" >> $S/env.txt
   s=$SECONDS; PYTHONPATH=/tmp/site:$PWD timeout 130 python3 -m masks compare --backends cupy --num-reqs 1,4,16,256,512,1024 --vocab 128256,151936,262144 --dtypes bf16,fp32 --budget-ms 20 --time-limit-s 115 --no-progress --out-dir $S/$2 > $S/$2.txt 2>&1; echo "$2 rc $? $((SECONDS-s)) s" >> $S/times.txt); }
for round in 1 2; do run ta ta-$round; run tm tm-$round; done
for round in 1 2; do python3 benchmarks/ab_table.py $S/ta-$round/compare.json $S/tm-$round/compare.json > $S/ab-$round-tm.md; done
rm -f $S/*/*.png; tar -czf $OUT/s.tgz -C $OUT run-3
cat $S/times.txt $S/env.txt; grep -h "mismatch\|rror" $S/t*.txt | head; for f in $S/ab-*.md; do echo $f; tail -n 3 $f; done
grep -h "| cupy | \(256\|512\) " $S/ab-1-tm.md | head -40; grep -h "| cupy | \(1\|4\|16\) " $S/ab-1-tm.md | grep 151936 | grep float32
