# Run 3 (session 2026-12-03): where the time of Triton `fused`'s pass 2 goes on bf16 rows at
# one wave (R = 256, V = 128256): Nsight Compute's per-instruction stall sampling (SourceCounters)
# of one call on sparse rows (50 kept ids) and one on full rows, committed package.
S=$OUT/run-3; mkdir -p $S; R=$PWD; P=/tmp/site:$R; cp .ab/s24run3.sh $S/command.sh
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $S/env.txt; hostname >> $S/env.txt
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1); echo "ncu $NCU $($NCU --version | tail -1)" >> $S/env.txt
for sup in 50 full 2048; do
  s=$SECONDS; PYTHONPATH=$P timeout 150 $NCU --clock-control none --profile-from-start off --kernel-name regex:fused --section SourceCounters --section WarpStateStats --section SpeedOfLight --section LaunchStats --section Occupancy -o $S/ncu-triton-$sup -f python3 benchmarks/profile_kernels.py --backends triton:fused --num-reqs 256 --vocab 128256 --dtype bf16 --support $sup > $S/ncu-triton-$sup.log 2>&1; echo "ncu $sup rc $? $((SECONDS-s)) s" >> $S/env.txt
  $NCU --import $S/ncu-triton-$sup.ncu-rep --page details > $S/details-$sup.txt 2>&1
  $NCU --import $S/ncu-triton-$sup.ncu-rep --page source --csv --print-source sass > $S/sass-$sup.csv 2>&1; echo "source $sup rc $?" >> $S/env.txt
done
ls -la $S; tar -czf $OUT/s.tgz -C $OUT run-3; cat $S/env.txt; head -c 1500 $S/sass-50.csv; grep -E "Duration|Warp Cycles Per Issued|Achieved Occupancy|Registers" $S/details-*.txt
