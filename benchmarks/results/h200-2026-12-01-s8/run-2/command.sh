# Run 2 (session 2026-12-01-s8): the Numba backend's pass-1 loop recompiled (helper's SASS
# analysis: bf16 fused 250 -> 192 instructions per group of 8 loads, all 8 loads issued before
# the first test). Two trees from inside their folders, interleaved twice: .ab/ta = the working
# tree before it, .ab/tn = ta with the new numba.py. `numba` (auto: split at few rows, fused at
# many), R = 1/4/16/256/512/1024, V = 128256/151936/262144, fp32 and bf16, every support.
S=$OUT/run-2; mkdir -p $S; R=$PWD; cp .ab/s8run2.sh $S/command.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $S/env.txt
run() { (cd .ab/$1 && python3 -c "from masks.compare import code_fingerprint; print('$2 code_sha256', code_fingerprint())" >> $S/env.txt
   s=$SECONDS; PYTHONPATH=/tmp/site:$PWD timeout 130 python3 -m masks compare --backends numba --num-reqs 1,4,16,256,512,1024 --vocab 128256,151936,262144 --dtypes bf16,fp32 --budget-ms 20 --time-limit-s 115 --no-progress --out-dir $S/$2 > $S/$2.txt 2>&1; echo "$2 rc $? $((SECONDS-s)) s" >> $S/times.txt); }
for round in 1 2; do run ta ta-$round; run tn tn-$round; done
for round in 1 2; do python3 benchmarks/ab_table.py $S/ta-$round/compare.json $S/tn-$round/compare.json > $S/ab-$round-tn.md; done
rm -f $S/*/*.png; tar -czf $OUT/s.tgz -C $OUT run-2
cat $S/times.txt $S/env.txt; grep -h "mismatch\|rror" $S/t*.txt | head; for f in $S/ab-*.md; do echo $f; tail -n 3 $f; done
grep -h "| numba | \(256\|512\) " $S/ab-1-tn.md | head -40
