# Run 3 (session 2026-12-02): Triton fused probes (.ab/tq: triton.py with a _FUSED_RANKED knob).
# Run 2's probes again, 16-bit units now ranked as words (four lanes' mask bytes combined by
# shuffles; bf16 (pairs) 117 registers at 32 KB, 64 at 16 KB, 64 with 16 warps; ranked8k = 8 KB).
# ranked = pass 1 ranks each block as it streams (one block-wide scan of the unit counts, a bit
# loop bounded by the block's fullest unit, ids straight to the row's slots; no pass 2 and no
# barrier after pass 1): bf16 (pairs) 128 registers, fp32 80 (sm_90, triton 3.6). ranked16k =
# 16 KB per iteration (66 / 61 registers); rankedw16 = 16 warps (64 / 61).
S=$OUT/run-3; mkdir -p $S; cp .ab/s11run3.sh $S/command.sh
T=masks.backends.triton
(cd .ab/tq && PYTHONPATH=/tmp/site:$PWD python3 -c "from masks.compare import code_fingerprint; print('code_sha256', code_fingerprint())") > $S/env.txt
(cd .ab/tq && PYTHONPATH=/tmp/site:$PWD timeout 400 python3 explore.py $S/tq.json 2 256,512,1024 128256,151936 bf16,fp32 \
  "base=triton:fused" "ranked=triton:fused;$T._FUSED_RANKED=True" "ranked16k=triton:fused;$T._FUSED_RANKED=True;$T._FUSED_BLOCK_BYTES=16384" \
  "rankedw16=triton:fused;$T._FUSED_RANKED=True;$T._FUSED_NUM_WARPS=16" "ranked8k=triton:fused;$T._FUSED_RANKED=True;$T._FUSED_BLOCK_BYTES=8192" > $S/tq.txt 2>&1; echo "tq rc $?" >> $S/env.txt)
tar -czf $OUT/s.tgz -C $OUT run-3
cat $S/env.txt; grep MISMATCH $S/tq.txt | head; tail -n 38 $S/tq.txt
