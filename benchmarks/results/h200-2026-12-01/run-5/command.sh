python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 || exit
S=$OUT/s; mkdir -p $S; R=$PWD; P=/tmp/site:$R
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $S/env.txt
PYTHONPATH=$P python3 -c "from masks.compare import code_fingerprint; print('code_sha256', code_fingerprint())" >> $S/env.txt
PYTHONPATH=$P timeout 150 python3 -m pytest -q -rs -p no:cacheprovider -k numba tests --junitxml $S/junit-numba.xml > $S/pytest-numba.log 2>&1
tail -n 1 $S/pytest-numba.log
A="--backends numba:fused --num-reqs 256,512,1024 --vocab 128256,151936,262144 --dtypes fp32,bf16 --budget-ms 20 --no-progress"
for v in base new; do
  (cd .ab/$v && python3 -c "from masks.compare import code_fingerprint; print('$v code_sha256', code_fingerprint())" >> $S/env.txt
   timeout 80 python3 -m masks compare $A --out-dir $S/$v > $S/$v.txt 2>&1)
done
python3 benchmarks/ab_table.py $S/base/compare.json $S/new/compare.json > $S/ab-base-new.md
PYTHONPATH=$P timeout 230 python3 -m masks compare --out-dir $S/final --time-limit-s 200 --budget-ms 20 --no-progress > $S/final.txt 2> $S/final.err
rm -f $S/*/*.png; tar -czf $OUT/s.tgz -C $OUT s
grep -A14 "summary per backend" $S/final.txt | cut -c1-140; tail -n 3 $S/final.err
