# Seventh session of 2026-12-01, run 1: the landed package (6384167) verified on the GPU (the whole
# test suite, host dispatch), and Nsight Compute on the fused kernels of the cells that miss 80%.
R=$PWD; P=/tmp/site:$R
O=$OUT/run-1; mkdir -p $O
cp .ab/s7run1.sh $O/command.sh
{
  date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv
  python3 -c "import torch, triton, cupy, numba_cuda, numpy; print('torch', torch.__version__, 'triton', triton.__version__, 'cupy', cupy.__version__, 'numba_cuda', numba_cuda.__version__, 'numpy', numpy.__version__)"
  (cd /tmp && PYTHONPATH=$P python3 -c "from masks.compare import code_fingerprint; print('code_sha256', code_fingerprint())")
} > $O/env.txt 2>&1
cat $O/env.txt
NCU="ncu --clock-control none --profile-from-start off --kernel-name regex:fused --section SpeedOfLight --section Occupancy --section WarpStateStats --section SchedulerStats --section LaunchStats"
for shape in "1024 151936 2048" "1024 151936 50" "256 128256 2048"; do
  set -- $shape
  PYTHONPATH=$P timeout 120 $NCU python3 benchmarks/profile_kernels.py --num-reqs $1 --vocab $2 --support $3 --dtype bf16 > $O/ncu-r$1-v$2-k$3-bf16.txt 2>&1
  grep -E "compact_fused|_fused_kernel|fused\[|Duration|DRAM Throughput|Issue Slots Busy|No Eligible|Achieved Occupancy|Registers Per|Warp Cycles Per Issued" $O/ncu-r$1-v$2-k$3-bf16.txt
done
PYTHONPATH=$P timeout 90 python3 benchmarks/dispatch_profile.py --out $O/dispatch_profile.txt --json $O/dispatch.json > $O/dispatch.log 2>&1
echo "dispatch rc $?" >> $O/env.txt; head -n 14 $O/dispatch_profile.txt
cd $OUT && tar -czf s.tgz run-1; cd $R
PYTHONPATH=$P timeout 350 python3 -m pytest -q -rs -p no:cacheprovider tests --junitxml $O/junit.xml > $O/pytest.log 2>&1
echo "pytest rc $?" >> $O/env.txt
cd $OUT && rm -f s.tgz && tar -czf s.tgz run-1
tail -n 5 $O/pytest.log; cat $O/env.txt
