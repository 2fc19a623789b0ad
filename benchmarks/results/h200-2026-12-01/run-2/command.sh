python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 || exit
S=$OUT/s; mkdir -p $S; R=$PWD; P=/tmp/site:$R
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $S/env.txt
PYTHONPATH=$P timeout 200 python3 -m pytest -q -rs -p no:cacheprovider -k "cupy or numba" tests/test_cupy_backend.py tests/test_numba_backend.py tests/test_conformance.py tests/test_fuzz.py --junitxml $S/junit.xml > $S/pytest.log 2>&1
tail -n 1 $S/pytest.log
A="--num-reqs 256,512,1024 --vocab 128256,151936,262144 --dtypes fp32,bf16 --budget-ms 20 --no-progress"
B="--num-reqs 1,4,16 --vocab 151936 --dtypes fp32,bf16 --budget-ms 20 --no-progress"
for v in base new; do
  (cd .ab/$v && python3 -c "from masks.compare import code_fingerprint; print('$v code_sha256', code_fingerprint())" >> $S/env.txt
   timeout 150 python3 -m masks compare --backends cupy:fused,numba:fused $A --out-dir $S/$v > $S/$v.txt 2>&1
   timeout 60 python3 -m masks compare --backends cupy:split,numba:split $B --out-dir $S/$v-split > $S/$v-split.txt 2>&1)
done
python3 benchmarks/ab_table.py $S/base/compare.json $S/new/compare.json > $S/ab-base-new.md
python3 benchmarks/ab_table.py $S/base-split/compare.json $S/new-split/compare.json > $S/ab-base-new-split.md
ncu --version >> $S/env.txt
PYTHONPATH=$P timeout 100 ncu --clock-control none --profile-from-start off --kernel-name regex:fused --set full --import-source no -f -o /tmp/prof python3 benchmarks/profile_kernels.py --backends numba:fused,cupy:fused,triton:fused --num-reqs 256 --vocab 151936 --dtype bf16 --support 2048 > $S/ncu.log 2>&1
timeout 60 ncu -i /tmp/prof.ncu-rep --page source --csv --print-source sass > $S/source-2048.csv 2> $S/source.err; gzip $S/source-2048.csv
timeout 60 ncu -i /tmp/prof.ncu-rep --page details --section SpeedOfLight --section WarpStateStats --section MemoryWorkloadAnalysis --section SchedulerStats --section LaunchStats --section Occupancy > $S/details-2048.txt 2>&1
rm -f $S/*/*.png; tar -czf $OUT/s.tgz -C $OUT s
grep -c "|" $S/ab-base-new.md; grep "Duration" $S/details-2048.txt
