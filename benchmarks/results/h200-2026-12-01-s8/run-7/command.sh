# Run 7 (session 2026-12-01-s8): the Numba backend's test file on the GPU after its warp-kernel
# checks share one launcher (test code only; the package is run 6's).
S=$OUT/run-7; mkdir -p $S; R=$PWD; cp .ab/s8run7.sh $S/command.sh
(cd /tmp && PYTHONPATH=/tmp/site:$R python3 -c "from masks.compare import code_fingerprint; print('code_sha256', code_fingerprint())") >> $S/env.txt
PYTHONPATH=/tmp/site:$R timeout 150 python3 -m pytest -q -rs -p no:cacheprovider tests/test_numba_backend.py > $S/pytest.log 2>&1; echo "pytest rc $?" >> $S/env.txt
tar -czf $OUT/s.tgz -C $OUT run-7; tail -n 4 $S/pytest.log; cat $S/env.txt
