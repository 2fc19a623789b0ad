# Run 2: two candidate changes against the working tree's baseline, each tree run from inside its
# folder, interleaved twice (.ab/ta = the working tree's masks/ with Triton's register cap off;
# .ab/tb = the cap on at every R, and CuPy's and Numba's fused kernels writing the -1 padding
# first). (A) triton:fused, bf16, R = 512-2048; (B) cupy:fused and numba:fused, R = 256 and 512.
S=$OUT/run-2; mkdir -p $S; R=$PWD; cp .ab/s7run2.sh $S/command.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $S/env.txt
run() { (cd .ab/$1 && python3 -c "from masks.compare import code_fingerprint; print('$2 code_sha256', code_fingerprint())" >> $S/env.txt
   s=$SECONDS; PYTHONPATH=/tmp/site:$PWD timeout 110 python3 -m masks compare --backends triton:fused --num-reqs 512,768,1024,2048 --vocab 128256,151936,262144 --dtypes bf16 --budget-ms 20 --time-limit-s 95 --no-progress --out-dir $S/$2-A > $S/$2-A.txt 2>&1; echo "$2 A rc $? $((SECONDS-s)) s" >> $S/times.txt
   s=$SECONDS; PYTHONPATH=/tmp/site:$PWD timeout 110 python3 -m masks compare --backends cupy:fused,numba:fused --num-reqs 256,512 --vocab 128256,151936 --dtypes bf16,fp32 --budget-ms 20 --time-limit-s 95 --no-progress --out-dir $S/$2-B > $S/$2-B.txt 2>&1; echo "$2 B rc $? $((SECONDS-s)) s" >> $S/times.txt); }
for round in 1 2; do run ta ta-$round; run tb tb-$round; done
for round in 1 2; do for g in A B; do python3 benchmarks/ab_table.py $S/ta-$round-$g/compare.json $S/tb-$round-$g/compare.json > $S/ab-$round-$g.md; done; done
rm -f $S/*/*.png; tar -czf $OUT/s.tgz -C $OUT run-2
cat $S/times.txt; grep -h "mismatch\|rror" $S/t*.txt | head; for f in $S/ab-*.md; do echo $f; tail -n 4 $f; done
