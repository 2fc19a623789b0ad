# Run 1 (session 2026-12-02-s5): each GPU backend's `split` against its `fused` at one and two
# waves of rows (R = 256, 512), V = 128256/151936, bf16, every support, two rounds, on the
# committed package: does the dynamically scheduled `split` now beat `fused` where `auto` picks
# `fused` and its bf16 cells miss 80%?
S=$OUT/run-1; mkdir -p $S; R=$PWD; P=/tmp/site:$R; cp .ab/s15run1.sh $S/command.sh
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $S/env.txt; hostname >> $S/env.txt
(cd /tmp && PYTHONPATH=$P python3 -c "from masks.compare import code_fingerprint; print('code_sha256', code_fingerprint())") >> $S/env.txt
for round in 1 2; do
  s=$SECONDS; (cd /tmp && PYTHONPATH=$P timeout 140 python3 -m masks compare --backends cupy:split,cupy:fused,numba:split,numba:fused,triton:split,triton:fused --num-reqs 256,512 --vocab 128256,151936 --dtypes bf16 --budget-ms 20 --time-limit-s 120 --no-progress --out-dir $S/v-$round > $S/v-$round.txt 2>&1); echo "v-$round rc $? $((SECONDS-s)) s" >> $S/env.txt
done
rm -f $S/*/*.png $S/*/compare.csv; tar -czf $OUT/s.tgz -C $OUT run-1
cat $S/env.txt
