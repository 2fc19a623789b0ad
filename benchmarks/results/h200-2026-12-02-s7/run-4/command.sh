# Run 4 (session 2026-12-02-s7): Numba's launch through cuda.core against the driver's
# cuLaunchKernel with a prepared parameter block, in one process (numba_launch_ab.py, copied
# here): exactness of the second on fused and split shapes, then host dispatch at R = 1,
# V = 151936, fp32 and bf16, beside CuPy and a one-element fill; then the Numba and CuPy tests.
S=$OUT/run-4; mkdir -p $S; R=$PWD; P=/tmp/site:$R; cp .ab/s17run4.sh $S/command.sh; cp .ab/numba_launch_ab.py $S/
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $S/env.txt; hostname >> $S/env.txt
(cd /tmp && PYTHONPATH=$P python3 -c "from masks.compare import code_fingerprint; print('code_sha256', code_fingerprint()); import cuda.core, cuda.bindings; print('cuda.core', cuda.core.__version__, 'cuda.bindings', cuda.bindings.__version__)") >> $S/env.txt
s=$SECONDS; (cd /tmp && PYTHONPATH=$P timeout 220 python3 $R/.ab/numba_launch_ab.py $S/launch_ab.json > $S/launch_ab.txt 2>&1); echo "ab rc $? $((SECONDS-s)) s" >> $S/env.txt
tar -czf $OUT/s.tgz -C $OUT run-4
cat $S/env.txt; tail -n 30 $S/launch_ab.txt
# then the working tree's Numba and CuPy launches (ParamBlock) through their tests natively
s=$SECONDS; (cd /tmp && MASKS_FUZZ_SECONDS=10 PYTHONPATH=$P timeout 300 python3 -m pytest -q -p no:cacheprovider -k "numba or cupy" $R/tests/test_numba_backend.py $R/tests/test_cupy_backend.py $R/tests/test_conformance.py $R/tests/test_gpu_reliability.py $R/tests/test_fuzz.py > $S/pytest.log 2>&1); echo "pytest rc $? $((SECONDS-s)) s" >> $S/env.txt
tar -czf $OUT/s.tgz -C $OUT run-4
tail -n 4 $S/pytest.log; tail -n 2 $S/env.txt
