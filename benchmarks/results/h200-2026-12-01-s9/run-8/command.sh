# Run 8 (session 2026-12-01-s9): CuPy fused with 384-thread blocks (12 warps, two blocks per SM,
# 85 registers a thread) against the committed 512, R = 256/512, V = 128256/151936, bf16, every
# support, two rounds (explore.py on the final package).
S=$OUT/run-8; mkdir -p $S; cp .ab/s9run8.sh $S/command.sh
(cd /tmp && PYTHONPATH=/tmp/site:$OLDPWD python3 -c "from masks.compare import code_fingerprint; print('code_sha256', code_fingerprint())") > $S/env.txt
PYTHONPATH=/tmp/site:$PWD timeout 150 python3 benchmarks/results/h200-2026-12-01-s9/explore.py $S/t384.json 2 256,512 128256,151936 bf16 \
  "512=cupy:fused" "384=cupy:fused;masks.backends.cupy.FUSED_THREADS=384" > $S/t384.txt 2>&1; echo "explore rc $?" >> $S/env.txt
tar -czf $OUT/s.tgz -C $OUT run-8; cat $S/env.txt; tail -n 14 $S/t384.txt
