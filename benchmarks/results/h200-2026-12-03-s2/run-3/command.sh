# Run 3 (session 2026-12-03-s2): where Numba's `fused` still trails CuPy's on dense bf16 rows at
# one wave (R = 256, V = 128256, 2048 kept ids per row; run 2's grid: the cells Numba misses):
# Nsight Compute's per-instruction stall sampling (SourceCounters) of one call each of
# cupy:fused and numba:fused, committed package (HEAD a9aaf02). $TESTS: test files that run 2's
# time limit left, run natively first.
S=$OUT/run-3; mkdir -p $S; R=$PWD; P=/tmp/site:$R; cp .ab/s25run3.sh $S/command.sh
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv > $S/env.txt
if [ -n "$TESTS" ]; then s=$SECONDS; (cd /tmp && PYTHONPATH=$P timeout 200 python3 -m pytest -q -rs -p no:cacheprovider --rootdir $R $TESTS > $S/pytest-rest.log 2>&1); echo "pytest $TESTS rc $? $((SECONDS-s)) s" >> $S/env.txt; tail -3 $S/pytest-rest.log; fi
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
for b in cupy numba; do
  s=$SECONDS; PYTHONPATH=$P timeout 120 $NCU --clock-control none --profile-from-start off --kernel-name regex:fused --section SourceCounters --section WarpStateStats --section SpeedOfLight --section LaunchStats --section Occupancy -o $S/ncu-$b -f python3 benchmarks/profile_kernels.py --backends $b:fused --num-reqs 256 --vocab 128256 --dtype bf16 --support 2048 > $S/ncu-$b.log 2>&1; echo "ncu $b rc $? $((SECONDS-s)) s" >> $S/env.txt
  $NCU --import $S/ncu-$b.ncu-rep --page details > $S/details-$b.txt 2>&1
  $NCU --import $S/ncu-$b.ncu-rep --page source --csv --print-source sass > $S/sass-$b.csv 2>&1; gzip -9 -n $S/sass-$b.csv; rm -f $S/ncu-$b.ncu-rep
done
tar -czf $OUT/s.tgz -C $OUT run-3; cat $S/env.txt; grep -E "Duration|Registers Per|Executed Ipc A|Warp Cycles Per Issued|Achieved Occ" $S/details-*.txt
