# Run 6 (session 2026-12-01-s10): the review's byte-permute test (odd threads' selectors now take
# every byte position 0-7), with the rest of the Numba GPU tests, on the final tree.
S=$OUT/run-6; mkdir -p $S; cp .ab/s10run6.sh $S/command.sh
(cd /tmp && PYTHONPATH=/tmp/site:$OLDPWD python3 -c "from masks.compare import code_fingerprint; print('code_sha256', code_fingerprint())") > $S/env.txt
PYTHONPATH=/tmp/site:$PWD timeout 150 python3 -m pytest -q -rs -p no:cacheprovider tests/test_numba_backend.py > $S/pytest.log 2>&1; echo "pytest rc $?" >> $S/env.txt
tar -czf $OUT/s.tgz -C $OUT run-6; cat $S/env.txt; tail -n 3 $S/pytest.log
