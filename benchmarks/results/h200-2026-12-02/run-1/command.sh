# Run 1 (session 2026-12-02): CuPy fused probes at R = 256/512 (.ab/tq: compact.cu with PROBE_*
# switches passed through NVRTC options). prefill = every thread writes -1 to its share of the
# row's W slots (16-byte stores) before pass 1 and one barrier orders them before any id store;
# the padding after the final barrier is dropped. prefill0 = warp 0 alone prefills (no extra
# barrier). lookback = prefill, and the final barrier replaced by per-warp flags in shared
# memory: a warp waits only for the counts of the warps before it (the last warp for all).
S=$OUT/run-1; mkdir -p $S; cp .ab/s11run1.sh $S/command.sh
C=masks.backends.cupy; O='("-std=c++17"'
(cd .ab/tq && PYTHONPATH=/tmp/site:$PWD python3 -c "from masks.compare import code_fingerprint; print('code_sha256', code_fingerprint())") > $S/env.txt
(cd .ab/tq && PYTHONPATH=/tmp/site:$PWD timeout 300 python3 explore.py $S/tq.json 2 256,512 128256,151936 bf16,fp32 \
  "base=cupy:fused" "prefill=cupy:fused;$C._OPTIONS=$O,\"-DPROBE_PREFILL\")" "prefill0=cupy:fused;$C._OPTIONS=$O,\"-DPROBE_PREFILL0\")" \
  "lookback=cupy:fused;$C._OPTIONS=$O,\"-DPROBE_LOOKBACK\")" > $S/tq.txt 2>&1; echo "tq rc $?" >> $S/env.txt)
tar -czf $OUT/s.tgz -C $OUT run-1
cat $S/env.txt; grep MISMATCH $S/tq.txt | head; tail -n 26 $S/tq.txt
