python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 || exit
S=$OUT/s; mkdir -p $S; R=$PWD; P=/tmp/site:$R
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $S/env.txt
PYTHONPATH=$P python3 -c "from masks.compare import code_fingerprint; print('code_sha256', code_fingerprint())" >> $S/env.txt
PYTHONPATH=$P timeout 120 python3 benchmarks/host_step.py --out $S/host_step.json > $S/host_step.txt 2>&1
PYTHONPATH=$P python3 -m masks compare --out-dir $S/final --time-limit-s 230 --budget-ms 20 --no-progress > $S/final.txt 2> $S/final.err
A="--num-reqs 1,16,256,1024 --vocab 128256,151936 --dtypes fp32,bf16 --budget-ms 20 --no-progress"
(cd .ab/base && timeout 100 python3 -m masks compare --backends cupy,numba,triton $A --out-dir $S/base > $S/base.txt 2>&1)
(cd .ab/mid && timeout 60 python3 -m masks compare --backends numba $A --out-dir $S/mid > $S/mid.txt 2>&1)
python3 benchmarks/ab_table.py $S/base/compare.json $S/final/compare.json > $S/ab-session.md
python3 benchmarks/ab_table.py $S/mid/compare.json $S/final/compare.json > $S/ab-numba-rank.md
PYTHONPATH=$P timeout 90 python3 benchmarks/tune.py --sweeps fused --out $S/tune.json > $S/tune.txt 2>&1
rm -f $S/*/*.png; tar -czf $OUT/s.tgz -C $OUT s
head -n 2 $S/final.txt; tail -n 3 $S/final.err; grep -E "^\| numba \| (256|1024) \| 151936" $S/ab-numba-rank.md; tail -n 24 $S/tune.txt
