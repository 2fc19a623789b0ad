# Device run 3 (session 2026-12-01-s3): the whole test suite natively on the H200, final package.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 || exit
S=$OUT/s; mkdir -p $S; R=$PWD; P=/tmp/site:$R; cp .ab/run3.sh $S/command.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $S/env.txt
PYTHONPATH=$P python3 -c "from masks.compare import code_fingerprint; print('final code_sha256', code_fingerprint())" >> $S/env.txt
PYTHONPATH=$P timeout 420 python3 -m pytest -q -rs -p no:cacheprovider tests --junitxml $S/junit.xml > $S/pytest.log 2>&1
echo "pytest rc $?" >> $S/env.txt
tar -czf $OUT/s.tgz -C $OUT s
tail -n 25 $S/pytest.log
