# Run 6: the review mends (Triton's launcher fallback and _PTX, CuPy's plan) on the GPU: the
# Triton and CuPy backend tests, their conformance and reliability tests.
S=$OUT/run-6; mkdir -p $S; R=$PWD; P=/tmp/site:$R; cp .ab/s6run6.sh $S/command.sh
(cd /tmp && PYTHONPATH=$P python3 -c "from masks.compare import code_fingerprint; print('code_sha256', code_fingerprint())") > $S/env.txt
PYTHONPATH=$P timeout 280 python3 -m pytest -q -rs -p no:cacheprovider tests/test_triton_backend.py tests/test_cupy_backend.py tests/test_conformance.py tests/test_gpu_reliability.py -k "triton or cupy" --junitxml $S/junit.xml > $S/pytest.log 2>&1
echo "pytest rc $?" >> $S/env.txt
tar -czf $OUT/s.tgz -C $OUT run-6; tail -n 4 $S/pytest.log; cat $S/env.txt
