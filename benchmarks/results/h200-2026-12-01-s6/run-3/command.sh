# Run 3: Triton's bit helpers as inline PTX (popc; brev + clz) against 248f1f3, interleaved
# twice, each tree run from inside its folder (.ab/ta = 248f1f3's masks/, .ab/tb = the working
# tree's, differing only in masks/backends/triton.py): `fused` at R >= 256 and `split` at
# R = 1, 4, 16, fp32 and bf16, every support; the harness gates every cell bit-exact first.
S=$OUT/run-3; mkdir -p $S; R=$PWD; cp .ab/s6run3.sh $S/command.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $S/env.txt
run() { (cd .ab/$1 && python3 -c "from masks.compare import code_fingerprint; print('$2 code_sha256', code_fingerprint())" >> $S/env.txt
   s=$SECONDS; PYTHONPATH=/tmp/site:$PWD timeout 150 python3 -m masks compare --backends triton:fused --num-reqs 256,512,1024 --vocab 128256,151936,262144 --dtypes fp32,bf16 --budget-ms 20 --no-progress --out-dir $S/$2-fused > $S/$2-fused.txt 2>&1; echo "$2 fused rc $? $((SECONDS-s)) s" >> $S/times.txt
   s=$SECONDS; PYTHONPATH=/tmp/site:$PWD timeout 100 python3 -m masks compare --backends triton:split --num-reqs 1,4,16 --vocab 128256,151936,262144 --dtypes fp32,bf16 --budget-ms 20 --no-progress --out-dir $S/$2-split > $S/$2-split.txt 2>&1; echo "$2 split rc $? $((SECONDS-s)) s" >> $S/times.txt); }
for round in 1 2; do run ta ta-$round; run tb tb-$round; done
for round in 1 2; do for v in fused split; do python3 benchmarks/ab_table.py $S/ta-$round-$v/compare.json $S/tb-$round-$v/compare.json > $S/ab-$v-$round.md; done; done
rm -f $S/*/*.png; tar -czf $OUT/s.tgz -C $OUT run-3
cat $S/times.txt; grep -h "mismatch\|error" $S/*-fused.txt $S/*-split.txt | head; for f in $S/ab-*.md; do echo $f; tail -n 4 $f; done
