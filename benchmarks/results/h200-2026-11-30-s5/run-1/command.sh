python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 || exit
S=$OUT/s; mkdir -p $S; R=$PWD; P=/tmp/site:$R
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $S/env.txt
PYTHONPATH=$P python3 -c "from masks.compare import code_fingerprint; print('code_sha256', code_fingerprint())" >> $S/env.txt
(cd .ab/base && python3 -c "from masks.compare import code_fingerprint; print('base code_sha256', code_fingerprint())") >> $S/env.txt
PYTHONPATH=$P timeout 230 python3 -m pytest -q -rs -p no:cacheprovider -k "numba or triton" tests/test_conformance.py tests/test_numba_backend.py tests/test_triton_backend.py tests/test_gpu_reliability.py tests/test_fuzz.py --junitxml $S/junit.xml > $S/pytest.log 2>&1
tail -n 3 $S/pytest.log
A="--backends numba,triton --num-reqs 1,16,256,1024 --vocab 128256,151936 --dtypes fp32,bf16 --budget-ms 20 --no-progress"
(cd .ab/base && timeout 100 python3 -m masks compare $A --out-dir $S/before > $S/before.txt 2>&1)
PYTHONPATH=$P timeout 100 python3 -m masks compare $A --out-dir $S/after > $S/after.txt 2>&1
python3 benchmarks/ab_table.py $S/before/compare.json $S/after/compare.json > $S/ab.md
PYTHONPATH=$P timeout 60 ncu --clock-control none --profile-from-start off --kernel-name regex:fused --section SpeedOfLight --section Occupancy --section WarpStateStats --section LaunchStats --section InstructionStats python3 benchmarks/profile_kernels.py --backends numba:fused,triton:fused --num-reqs 256 --vocab 151936 --dtype bf16 > $S/ncu-r256-bf16.txt 2>&1
rm -f $S/*/*.png; tar -czf $OUT/s.tgz -C $OUT s
grep -E "\| (1|16|256|1024) \| 151936" $S/ab.md
