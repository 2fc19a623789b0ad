# Device run 5 (session 2026-12-01-s3): the committed package after review fixes (names, a gcd
# for the mask alignment, the bit-pattern cases split into every/boundary): the whole test
# suite natively, then numba:fused at R >= 256 once (same grid as runs 1-2).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 || exit
S=$OUT/s; mkdir -p $S; R=$PWD; P=/tmp/site:$R; cp .ab/run5.sh $S/command.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $S/env.txt
PYTHONPATH=$P python3 -c "from masks.compare import code_fingerprint; print('final code_sha256', code_fingerprint())" >> $S/env.txt
PYTHONPATH=$P timeout 400 python3 -m pytest -q -rs -p no:cacheprovider tests --junitxml $S/junit.xml > $S/pytest.log 2>&1
echo "pytest rc $?" >> $S/env.txt
PYTHONPATH=$P timeout 80 python3 -m masks compare --backends numba:fused --num-reqs 256,512,1024 --vocab 128256,151936,262144 --dtypes fp32,bf16 --budget-ms 20 --no-progress --out-dir $S/fused > $S/fused.txt 2>&1
rm -f $S/*/*.png; tar -czf $OUT/s.tgz -C $OUT s
tail -n 3 $S/pytest.log; cat $S/env.txt
