# Run 1 (session 2026-12-01-s10): CuPy fused probes at R = 256/512 (.ab/tq: compact.cu with PROBE_*
# switches passed through NVRTC options). runs = a group whose columns are all kept is recorded
# as a pending run of consecutive ids, written after the barrier (warp 0's by the whole block,
# 16-byte stores; other warps' in their staged copy) instead of by the warp during pass 1;
# vecfill = the -1 padding with 16-byte stores; prmt = 16-bit kept bytes gathered with two
# byte permutes and one multiply (191 -> 167 instructions a bf16 group before the vote).
S=$OUT/run-1; mkdir -p $S; cp .ab/s10run1.sh $S/command.sh
C=masks.backends.cupy; O='("-std=c++17"'
(cd .ab/tq && PYTHONPATH=/tmp/site:$PWD python3 -c "from masks.compare import code_fingerprint; print('code_sha256', code_fingerprint())") > $S/env.txt
(cd .ab/tq && PYTHONPATH=/tmp/site:$PWD timeout 280 python3 explore.py $S/tq.json 2 256,512 128256,151936 bf16,fp32 \
  "base=cupy:fused" "runs=cupy:fused;$C._OPTIONS=$O,\"-DPROBE_RUNS\")" "vecfill=cupy:fused;$C._OPTIONS=$O,\"-DPROBE_VECFILL\")" \
  "prmt=cupy:fused;$C._OPTIONS=$O,\"-DPROBE_PRMT\")" "all3=cupy:fused;$C._OPTIONS=$O,\"-DPROBE_RUNS\",\"-DPROBE_VECFILL\",\"-DPROBE_PRMT\")" \
  "all3+384=cupy:fused;$C.FUSED_THREADS=384;$C._OPTIONS=$O,\"-DPROBE_RUNS\",\"-DPROBE_VECFILL\",\"-DPROBE_PRMT\")" > $S/tq.txt 2>&1; echo "tq rc $?" >> $S/env.txt)
tar -czf $OUT/s.tgz -C $OUT run-1
cat $S/env.txt; tail -n 26 $S/tq.txt
