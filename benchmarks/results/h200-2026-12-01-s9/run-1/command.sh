# Run 1 (session 2026-12-01-s9): at R = 256/512 (V = 128256/151936, bf16/fp32, every support),
# CuPy's fused against split with larger tiles, and Numba fused/split, on the committed package
# (.ab/ta); then the masked last group + equal warp ranges of pass 1 (.ab/tm). Two rounds each.
S=$OUT/run-1; mkdir -p $S; cp .ab/s9run1.sh $S/command.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $S/env.txt
C=masks.backends.cupy; T=masks.backends.tiling
(cd .ab/ta && PYTHONPATH=/tmp/site:$PWD timeout 250 python3 explore.py $S/ta.json 2 256,512 128256,151936 bf16,fp32 \
  "fused=cupy:fused" "split=cupy:split" "split/m8=cupy:split;$T.MAX_SEGS_PER_UNIT=8" "split/m32=cupy:split;$T.MAX_SEGS_PER_UNIT=32" \
  "s256=cupy:split;$C.SPLIT_THREADS=256" "s256/m8=cupy:split;$C.SPLIT_THREADS=256;$T.MAX_SEGS_PER_UNIT=8" \
  "s512/m8=cupy:split;$C.SPLIT_THREADS=512;$T.MAX_SEGS_PER_UNIT=8" "s512/m4=cupy:split;$C.SPLIT_THREADS=512;$T.MAX_SEGS_PER_UNIT=4" \
  "nb:fused=numba:fused" "nb:split=numba:split" > $S/ta.txt 2>&1; echo "ta rc $?" >> $S/env.txt)
tar -czf $OUT/s.tgz -C $OUT run-1
(cd .ab/tm && PYTHONPATH=/tmp/site:$PWD timeout 150 python3 explore.py $S/tm.json 2 256,512 128256,151936 bf16,fp32 \
  "fused=cupy:fused" "split=cupy:split" "s256=cupy:split;$C.SPLIT_THREADS=256" > $S/tm.txt 2>&1; echo "tm rc $?" >> $S/env.txt)
rm -f $OUT/s.tgz; tar -czf $OUT/s.tgz -C $OUT run-1
cat $S/env.txt; tail -n 26 $S/ta.txt; tail -n 26 $S/tm.txt
