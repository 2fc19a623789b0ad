# Device run 1 (session 2026-12-01-s5): Triton `fused` variants side by side, interleaved twice,
# each run from inside its tree (.ab/t*, copies of masks/ that differ only in
# masks/backends/triton.py): tbase = HEAD 73be6ff; tnp = 16-bit logits read two per int32 (SWAR
# test) and pass 1 without the one-block-ahead load; tpf = the same with the one-block-ahead load
# kept (104 registers); tnm = tnp plus the rank loop bounded by the row's fullest word (no
# block-wide maximum per step).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 || exit
S=$OUT/s; mkdir -p $S; R=$PWD; cp .ab/s5run1.sh $S/command.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $S/env.txt
A="--num-reqs 256,512,1024 --vocab 128256,151936,262144 --dtypes fp32,bf16 --budget-ms 20 --no-progress"
run() { (cd .ab/$1 && python3 -c "from masks.compare import code_fingerprint; print('$2 code_sha256', code_fingerprint())" >> $S/env.txt
   s=$SECONDS; PYTHONPATH=/tmp/site:$PWD timeout 120 python3 -m masks compare --backends triton:fused $A --out-dir $S/$2 > $S/$2.txt 2>&1; echo "$2 rc $? $((SECONDS-s)) s" >> $S/times.txt); }
for round in 1 2; do
  for t in tbase tnp tpf tnm; do run $t $t-$round; done
done
for round in 1 2; do for t in tnp tpf tnm; do python3 benchmarks/ab_table.py $S/tbase-$round/compare.json $S/$t-$round/compare.json > $S/ab-$t-$round.md; done; done
rm -f $S/*/*.png; tar -czf $OUT/s.tgz -C $OUT s
cat $S/times.txt; for t in tnp tpf tnm; do tail -n 4 $S/ab-$t-1.md; tail -n 4 $S/ab-$t-2.md; done
