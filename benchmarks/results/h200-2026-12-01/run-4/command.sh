python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 || exit
S=$OUT/s; mkdir -p $S; R=$PWD; P=/tmp/site:$R
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $S/env.txt
PYTHONPATH=$P python3 -c "import torch,triton,cupy,numba,numpy;print(torch.__version__,triton.__version__,cupy.__version__,numba.__version__,numpy.__version__)" >> $S/env.txt
PYTHONPATH=$P python3 -c "from masks.compare import code_fingerprint; print('code_sha256', code_fingerprint())" >> $S/env.txt
PYTHONPATH=$P timeout 300 python3 -m pytest -q -rs -p no:cacheprovider tests --junitxml $S/junit.xml > $S/pytest.log 2>&1
tail -n 2 $S/pytest.log
PYTHONPATH=$P timeout 230 python3 -m masks compare --out-dir $S/final --time-limit-s 200 --budget-ms 20 --no-progress > $S/final.txt 2> $S/final.err
PYTHONPATH=$P timeout 120 python3 benchmarks/same_bytes_copy.py --out $S/same_bytes_copy.json > $S/same_bytes_copy.txt 2>&1
rm -f $S/*/*.png; tar -czf $OUT/s.tgz -C $OUT s
grep -A8 "summary per backend" $S/final.txt; tail -n 3 $S/final.err; tail -n 5 $S/same_bytes_copy.txt
