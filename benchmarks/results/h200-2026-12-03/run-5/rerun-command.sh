# Run 5's second call (the same warm machine, GPU b6574179): tests/test_triton_backend.py, the
# file that run 5's time limit stopped, natively and whole. The GPU's UUID went to the call's
# output (GPU-b6574179-c084-5b0c-7791-d19b07999f28), not to a file.
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1; mkdir -p $OUT/run-5b; cd /tmp && s=$SECONDS; timeout 300 python3 -m pytest -q -rs -p no:cacheprovider $OLDPWD/tests/test_triton_backend.py --rootdir $OLDPWD > $OUT/run-5b/pytest-triton.log 2>&1; echo "rc $? $((SECONDS-s)) s" | tee -a $OUT/run-5b/pytest-triton.log; nvidia-smi --query-gpu=uuid --format=csv,noheader; tail -3 $OUT/run-5b/pytest-triton.log
