python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 || exit
S=$OUT/s; mkdir -p $S
python3 -c "from masks.compare import code_fingerprint; print('code_sha256', code_fingerprint())" > $S/env.txt
timeout 330 python3 -m pytest -q -rs -p no:cacheprovider tests --junitxml $S/junit.xml > $S/pytest.log 2>&1
tail -n 2 $S/pytest.log; tar -czf $OUT/s.tgz -C $OUT s
