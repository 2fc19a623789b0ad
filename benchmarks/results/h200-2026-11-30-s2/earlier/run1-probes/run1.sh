#!/usr/bin/env bash
# Device run 1 (exploration): GPU conformance, quick compare, host step, probes.
set -uo pipefail
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site
export PYTHONPATH="$PWD:$PYTHONPATH" PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv; which ncu nsys
timeout 150 python3 -m pytest -q -x tests/test_conformance.py tests/test_triton_backend.py tests/test_cupy_backend.py tests/test_numba_backend.py -p no:cacheprovider 2>&1 | tail -15 | tee $OUT/pytest.txt
timeout 60 python3 benchmarks/host_step.py --backend cupy --shapes 64x151936,512x151936,1024x151936 --repeats 25 2>&1 | tee $OUT/host_step.txt
timeout 180 python3 scratch/tune1.py 2>&1 | tee $OUT/tune1.txt
timeout 140 python3 -m masks compare --backends triton,triton:split,triton:fused,cupy,cupy:split,cupy:fused,numba,numba:split,numba:fused --num-reqs 1,4,16,256 --vocab 151936 --dtypes fp32,bf16 --supports sparse,full --out-dir $OUT/c1 --no-progress > $OUT/compare.txt 2>&1; tail -60 $OUT/compare.txt
