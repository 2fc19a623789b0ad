python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 || exit
S=$OUT/s; mkdir -p $S; P=/tmp/site:$PWD
PYTHONPATH=$P python3 -c "from masks.compare import code_fingerprint; print('code_sha256', code_fingerprint())" > $S/env.txt
PYTHONPATH=$P timeout 170 python3 -m pytest -q -rs -p no:cacheprovider tests/test_cupy_backend.py tests/test_numba_backend.py --junitxml $S/junit.xml > $S/pytest.log 2>&1
tail -n 4 $S/pytest.log; tar -czf $OUT/s.tgz -C $OUT s
