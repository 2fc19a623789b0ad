python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 || exit
S=$OUT/s; mkdir -p $S; R=$PWD; P=/tmp/site:$R
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $S/env.txt
PYTHONPATH=$P python3 -c "from masks.compare import code_fingerprint; print('code_sha256', code_fingerprint())" >> $S/env.txt
PYTHONPATH=$P timeout 170 python3 -m pytest -q -rs -p no:cacheprovider -k triton tests/test_conformance.py tests/test_triton_backend.py tests/test_gpu_reliability.py tests/test_fuzz.py --junitxml $S/junit-triton.xml > $S/pytest-triton.log 2>&1
tail -n 3 $S/pytest-triton.log
PYTHONPATH=$P python3 -m masks compare --out-dir $S/final --time-limit-s 200 --budget-ms 20 --no-progress > $S/final.txt 2> $S/final.err
A="--num-reqs 1,16,256,512,1024 --vocab 128256,151936 --dtypes fp32,bf16 --budget-ms 20 --no-progress"
(cd .ab/base && timeout 60 python3 -m masks compare --backends triton $A --out-dir $S/base > $S/base.txt 2>&1)
python3 benchmarks/ab_table.py $S/base/compare.json $S/final/compare.json > $S/ab-session-triton.md
PYTHONPATH=$P timeout 80 python3 benchmarks/tune.py --sweeps fused --out $S/tune.json > $S/tune.txt 2>&1
rm -f $S/*/*.png; tar -czf $OUT/s.tgz -C $OUT s; rm -rf $S
