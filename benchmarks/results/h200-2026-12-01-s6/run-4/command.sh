# Run 4: the paired 16-bit pass 1 with one shifted flag per half and a hardware popcount per
# byte, against 3ab8618, interleaved twice, each tree run from inside its folder (.ab/ta =
# 3ab8618's masks/, .ab/tb = the working tree's, differing only in masks/backends/triton.py):
# `triton:fused` at R >= 256, bf16 (fp32 compiles to the same kernel), every support.
S=$OUT/run-4; mkdir -p $S; R=$PWD; cp .ab/s6run4.sh $S/command.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $S/env.txt
run() { (cd .ab/$1 && python3 -c "from masks.compare import code_fingerprint; print('$2 code_sha256', code_fingerprint())" >> $S/env.txt
   s=$SECONDS; PYTHONPATH=/tmp/site:$PWD timeout 150 python3 -m masks compare --backends triton:fused --num-reqs 256,512,1024 --vocab 128256,151936,262144 --dtypes bf16 --budget-ms 20 --no-progress --out-dir $S/$2 > $S/$2.txt 2>&1; echo "$2 rc $? $((SECONDS-s)) s" >> $S/times.txt); }
for round in 1 2; do run ta ta-$round; run tb tb-$round; done
for round in 1 2; do python3 benchmarks/ab_table.py $S/ta-$round/compare.json $S/tb-$round/compare.json > $S/ab-$round.md; done
rm -f $S/*/*.png; tar -czf $OUT/s.tgz -C $OUT run-4
cat $S/times.txt; grep -h "mismatch\|error" $S/t*.txt | head; for f in $S/ab-*.md; do echo $f; tail -n 3 $f; done
