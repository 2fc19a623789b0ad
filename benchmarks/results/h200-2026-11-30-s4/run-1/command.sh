python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 || exit
O=$OUT/r1; mkdir -p $O; R=$PWD
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $O/env.txt
A="--backends cupy,numba,triton --num-reqs 1,16,256,1024 --vocab 128256,151936 --dtypes fp32,bf16 --budget-ms 20 --no-progress"
(cd .ab/base && timeout 150 python3 -m masks compare $A --out-dir $O/before > $O/before.txt 2> $O/before.err)
PYTHONPATH=/tmp/site:$R timeout 150 python3 -m masks compare $A --out-dir $O/after > $O/after.txt 2> $O/after.err
python3 benchmarks/ab_table.py $O/before/compare.json $O/after/compare.json > $O/ab.md
PYTHONPATH=/tmp/site:$R timeout 100 python3 benchmarks/tune.py --sweeps fused --out $O/tune.json > $O/tune.txt 2>&1
PYTHONPATH=/tmp/site:$R timeout 270 python3 -m pytest tests -q -rs -p no:cacheprovider --junitxml $O/junit.xml > $O/pytest.log 2>&1
tail -n 6 $O/pytest.log; tail -n 3 $O/before.err $O/after.err; grep -E "^\| (cupy|numba|triton) \| (1|16|256|1024) \| 151936" $O/ab.md; tail -n 20 $O/tune.txt
