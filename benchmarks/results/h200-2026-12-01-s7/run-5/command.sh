# Run 5: after a review, the GPU tests whose code changed since run 4 (Triton's capped launch
# checks the compiled kernel's registers; Numba's plan test starts from an empty cache; the
# fused launch returns its CompiledKernel, and caps only rows read by 16-byte loads): the whole
# Triton backend file, the CSR tests and the Numba plan test.
S=$OUT/run-5; mkdir -p $S; R=$PWD; P=/tmp/site:$R; cp .ab/s7run5.sh $S/command.sh
(cd /tmp && PYTHONPATH=$P python3 -c "from masks.compare import code_fingerprint; print('code_sha256', code_fingerprint())") > $S/env.txt
PYTHONPATH=$P timeout 200 python3 -m pytest -q -rs -p no:cacheprovider tests/test_triton_backend.py tests/test_csr.py tests/test_numba_backend.py::test_plans_are_cached_and_concurrent_first_calls_agree --junitxml $S/junit.xml > $S/pytest.log 2>&1
echo "pytest rc $?" >> $S/env.txt
tar -czf $OUT/s.tgz -C $OUT run-5; tail -n 4 $S/pytest.log; cat $S/env.txt
