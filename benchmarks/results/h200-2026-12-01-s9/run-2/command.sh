# Run 2 (session 2026-12-01-s9): where CuPy fused's time goes at R = 256/512 (.ab/tp: compact.cu
# with PROBE_* switches passed through NVRTC options). "!" configs skip the conformance check
# (they leave outputs out on purpose): norank = pass 1 without ranking and nothing after the
# barrier but the counts; nopost = ranking, padding, no staged copy; nofill = no padding.
# prefill = warp 0 writes the row's -1 padding before pass 1 (checked). t256 = 256-thread blocks.
S=$OUT/run-2; mkdir -p $S; cp .ab/s9run2.sh $S/command.sh
C=masks.backends.cupy; O='("-std=c++17","-DPROBE_'
(cd .ab/tp && PYTHONPATH=/tmp/site:$PWD timeout 250 python3 explore.py $S/tp.json 2 256,512 128256,151936 bf16,fp32 \
  "base=cupy:fused" "prefill=cupy:fused;$C._OPTIONS=${O}PREFILL\")" "!norank=cupy:fused;$C._OPTIONS=${O}NORANK\")" \
  "!nopost=cupy:fused;$C._OPTIONS=${O}NOPOST\")" "!nofill=cupy:fused;$C._OPTIONS=${O}NOFILL\")" \
  "t256=cupy:fused;$C.FUSED_THREADS=256" "t256+prefill=cupy:fused;$C.FUSED_THREADS=256;$C._OPTIONS=${O}PREFILL\")" > $S/tp.txt 2>&1; echo "tp rc $?" >> $S/env.txt)
tar -czf $OUT/s.tgz -C $OUT run-2
cat $S/env.txt; tail -n 26 $S/tp.txt
