# Run 1 (session 2026-12-04-s3): the changed and new tests natively first, the host step's
# copy-out A/B, then the whole test suite natively on CUDA.
S=$OUT/run-1; mkdir -p $S; R=$PWD; P=/tmp/site:$R; cp .ab/s29run1.sh $S/command.sh; cp .ab/csr_copy_ab.py $S/
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $S/env.txt; hostname >> $S/env.txt
(cd /tmp && PYTHONPATH=$P python3 -c "from masks.compare import code_fingerprint; print('code_sha256', code_fingerprint())") >> $S/env.txt
which nvcc >> $S/env.txt 2>&1
s=$SECONDS; PYTHONPATH=$P timeout 200 python3 -m pytest -v -s -rs -p no:cacheprovider tests/test_registry.py tests/test_csr.py tests/test_cupy_backend.py tests/test_errors.py "tests/test_gpu_reliability.py::test_shapes_do_not_compile_a_kernel_each" tests/test_conformance.py -k "not test_conformance or float64 or inactive" tests/test_triton_backend.py::test_mask_words_and_bytes > $S/pytest-changed.log 2>&1
echo "pytest changed rc $? $((SECONDS-s)) s" >> $S/env.txt
s=$SECONDS; PYTHONPATH=$P timeout 100 python3 .ab/csr_copy_ab.py > $S/csr_copy_ab.txt 2>&1
echo "ab rc $? $((SECONDS-s)) s" >> $S/env.txt
tar -czf $OUT/s.tgz -C $OUT run-1
s=$SECONDS; PYTHONPATH=$P timeout $((585-SECONDS)) python3 -m pytest -q -rs -p no:cacheprovider tests --durations=15 > $S/pytest.log 2>&1
echo "pytest rc $? $((SECONDS-s)) s" >> $S/env.txt
rm -f $OUT/s.tgz; tar -czf $OUT/s.tgz -C $OUT run-1
grep -E "^(FAILED|ERROR)|passed|failed" $S/pytest-changed.log | tail -n 12; grep -E "compile_a_kernel|figures" $S/pytest-changed.log | head; cat $S/csr_copy_ab.txt; grep -E "^(FAILED|ERROR)|passed|failed" $S/pytest.log | tail -n 12; cat $S/env.txt
