# Run 3: Triton's fused kernel, three trees run from inside their folders, interleaved twice:
# .ab/ta = the candidate (the paired 16-bit kernel capped at 72 registers from R >= 5 x SMs),
# .ab/tb = ta with 16 warps per program (and 16 ranges), .ab/tc = ta with the cap at 80.
# triton:fused, R = 256/512/1024, V = 128256/151936/262144, fp32 and bf16, every support.
S=$OUT/run-3; mkdir -p $S; R=$PWD; cp .ab/s7run3.sh $S/command.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $S/env.txt
run() { (cd .ab/$1 && python3 -c "from masks.compare import code_fingerprint; print('$2 code_sha256', code_fingerprint())" >> $S/env.txt
   s=$SECONDS; PYTHONPATH=/tmp/site:$PWD timeout 110 python3 -m masks compare --backends triton:fused --num-reqs 256,512,1024 --vocab 128256,151936,262144 --dtypes bf16,fp32 --budget-ms 20 --time-limit-s 95 --no-progress --out-dir $S/$2 > $S/$2.txt 2>&1; echo "$2 rc $? $((SECONDS-s)) s" >> $S/times.txt); }
for round in 1 2; do run ta ta-$round; run tb tb-$round; run tc tc-$round; done
for round in 1 2; do for t in tb tc; do python3 benchmarks/ab_table.py $S/ta-$round/compare.json $S/$t-$round/compare.json > $S/ab-$round-$t.md; done; done
rm -f $S/*/*.png; tar -czf $OUT/s.tgz -C $OUT run-3
cat $S/times.txt; grep -h "mismatch\|rror" $S/t*.txt | head; for f in $S/ab-*.md; do echo $f; tail -n 3 $f; done
