python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 || exit
S=$OUT/s; mkdir -p $S; R=$PWD; P=/tmp/site:$R
PYTHONPATH=$P python3 -c "from masks.compare import code_fingerprint; print('code_sha256', code_fingerprint())" >> $S/env.txt
ncu --version >> $S/env.txt
for sup in 50 full; do
PYTHONPATH=$P timeout 90 ncu --clock-control none --profile-from-start off --kernel-name regex:fused --set full --import-source no -f -o /tmp/prof-$sup python3 benchmarks/profile_kernels.py --backends numba:fused,cupy:fused,triton:fused --num-reqs 256 --vocab 151936 --dtype bf16 --support $sup > $S/ncu-$sup.log 2>&1
timeout 60 ncu -i /tmp/prof-$sup.ncu-rep --page source --csv --print-source sass > $S/source-$sup.csv 2> $S/source-$sup.err
timeout 60 ncu -i /tmp/prof-$sup.ncu-rep --page details --section SpeedOfLight --section WarpStateStats --section MemoryWorkloadAnalysis --section SchedulerStats > $S/details-$sup.txt 2>&1
done
ls -la $S; tar -czf $OUT/s.tgz -C $OUT s
