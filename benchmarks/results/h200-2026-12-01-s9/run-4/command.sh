# Run 4 (session 2026-12-01-s9): Nsight Compute on the committed CuPy fused kernel (.ab/ta) at
# R = 256, V = 128256: bf16 sparse / dense / full and fp32 dense (one launch each after warm-up).
S=$OUT/run-4; mkdir -p $S; cp .ab/s9run4.sh $S/command.sh
which ncu >> $S/env.txt; ncu --version >> $S/env.txt 2>&1
(cd .ab/ta && PYTHONPATH=/tmp/site:$PWD timeout 300 ncu --clock-control none --kernel-name regex:compact_fused --launch-skip 4 --launch-count 4 \
  --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section Occupancy --section LaunchStats --section MemoryWorkloadAnalysis --section InstructionStats \
  --metrics smsp__inst_executed.sum,smsp__cycles_active.avg,sm__cycles_elapsed.avg,dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum \
  python3 prof.py > $S/ncu.txt 2>&1; echo "ncu rc $?" >> $S/env.txt)
tar -czf $OUT/s.tgz -C $OUT run-4
cat $S/env.txt; grep -E "compact_fused|Duration|Throughput|Issue Slots|Issued Warp|No Eligible|Active Warps|Eligible Warps|Stall|Warp Cycles|Executed Instructions |inst_executed|dram__bytes|Registers|Achieved Occ|Theoretical Occ" $S/ncu.txt | head -150
