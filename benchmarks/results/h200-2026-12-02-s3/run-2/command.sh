# Run 2 (session 2026-12-02-s3): where Triton `fused` spends pass 2 -- Nsight Compute's
# per-instruction warp-stall samples (SourceCounters) on one call at R = 256, V = 128256, bf16,
# dense (2048 ids per row) and sparse (50) rows, for .ab/tr (the per-thread PTX loop) and
# dense for .ab/ta (HEAD c61de8b); the SASS page exported as CSV.
S=$OUT/run-2; mkdir -p $S; R=$PWD; cp .ab/s13run2.sh $S/command.sh
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $S/env.txt; hostname >> $S/env.txt
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1); echo "ncu $NCU" >> $S/env.txt; $NCU --version | tail -1 >> $S/env.txt
prof() { (cd .ab/$1 && PYTHONPATH=/tmp/site:$PWD timeout 150 $NCU --clock-control none --profile-from-start off --kernel-name regex:fused --section SourceCounters --section WarpStateStats --section SpeedOfLight --import-source no -o /tmp/ncu-$1-$2 python3 $R/benchmarks/profile_kernels.py --backends triton:fused --num-reqs 256 --vocab 128256 --dtype bf16 --support $3 > $S/ncu-$1-$2.log 2>&1; echo "ncu $1 $2 rc $?" >> $S/env.txt
  $NCU -i /tmp/ncu-$1-$2.ncu-rep --page source --csv --print-source sass > $S/sass-$1-$2.csv 2> $S/sass-$1-$2.err; echo "source page rc $?" >> $S/env.txt
  $NCU -i /tmp/ncu-$1-$2.ncu-rep --page details > $S/details-$1-$2.txt 2>&1 ); }
prof tr dense 2048; prof tr sparse 50; prof ta dense 2048
tar -czf $OUT/s.tgz -C $OUT run-2
cat $S/env.txt; head -c 1500 $S/sass-tr-dense.csv; wc -l $S/*.csv; grep -h "Duration\|Warp Cycles Per Issued" $S/details-*.txt
