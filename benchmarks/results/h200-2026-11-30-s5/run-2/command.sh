python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 || exit
S=$OUT/s; mkdir -p $S; R=$PWD; P=/tmp/site:$R
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $S/env.txt
PYTHONPATH=$P python3 -c "from masks.compare import code_fingerprint; print('code_sha256', code_fingerprint())" >> $S/env.txt
(cd .ab/base && python3 -c "from masks.compare import code_fingerprint; print('base code_sha256', code_fingerprint())") >> $S/env.txt
PYTHONPATH=$P timeout 150 python3 -m pytest -q -rs -p no:cacheprovider -k numba tests/test_conformance.py tests/test_numba_backend.py tests/test_gpu_reliability.py tests/test_fuzz.py --junitxml $S/junit.xml > $S/pytest.log 2>&1
tail -n 1 $S/pytest.log
A="--backends numba --num-reqs 1,16,256,1024 --vocab 128256,151936 --dtypes fp32,bf16,fp64 --budget-ms 20 --no-progress"
(cd .ab/base && timeout 100 python3 -m masks compare $A --out-dir $S/before > $S/before.txt 2>&1)
PYTHONPATH=$P timeout 100 python3 -m masks compare $A --out-dir $S/after > $S/after.txt 2>&1
python3 benchmarks/ab_table.py $S/before/compare.json $S/after/compare.json > $S/ab.md
for d in bf16 fp32; do PYTHONPATH=$P timeout 50 ncu --clock-control none --profile-from-start off --kernel-name regex:fused --section SpeedOfLight --section Occupancy --section WarpStateStats --section LaunchStats --section InstructionStats python3 benchmarks/profile_kernels.py --backends numba:fused,cupy:fused --num-reqs 256 --vocab 151936 --dtype $d > $S/ncu-r256-$d.txt 2>&1; done
rm -f $S/*/*.png; tar -czf $OUT/s.tgz -C $OUT s; rm -rf $S/before $S/after
grep -E "\| (1|16|256|1024) \| 151936" $S/ab.md
