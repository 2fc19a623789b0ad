#!/usr/bin/env bash
# One device session on a CUDA machine: environment, the whole test suite natively on CUDA
# (conformance of every backend and variant, the GPU reliability tests), the host step, an
# Nsight Compute profile of the fused kernels at R=256, and the comparison harness.
# Usage (repository root): OUT=results-dir [STAGE=tests|compare] [NCU=0] bash benchmarks/gpu_session.sh
#   [compare options...]   (tests: pytest + ncu, about 8 minutes; compare: the host step and
#   the harness, about 7 minutes with --time-limit-s 300)
# Everything lands in $OUT; the bulky outputs are packed into $OUT/session.tgz.
set -uo pipefail
OUT=${OUT:?set OUT to an output folder}
STAGE=${STAGE:-all}   # all | tests | compare
mkdir -p "$OUT/session"
if [ -d .whl ]; then  # numba-cuda 0.30.4 needs numpy < 2.5 (np.row_stack)
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site
fi
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
S="$OUT/session"
{
  date -u; git rev-parse HEAD 2>/dev/null || true
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,memory.used --format=csv
  python3 -c "import sys, torch, numpy; print(sys.version); print('torch', torch.__version__, 'cuda', torch.version.cuda, 'numpy', numpy.__version__)"
  for m in triton cupy numba numba_cuda; do python3 -c "import $m; print('$m', getattr($m, '__version__', '?'))" 2>&1 | tail -1; done
  python3 -c "import masks; print('available', masks.available_backends('cuda')); print('unavailable', masks.unavailable_reasons('cuda'))"
  python3 -c "from masks.compare import code_fingerprint; print('code_sha256', code_fingerprint())"
} > "$S/env.txt" 2>&1
cat "$S/env.txt"
status=0
if [ "$STAGE" = all ] || [ "$STAGE" = tests ]; then
  MASKS_RELIABILITY_LOG="$S/reliability.jsonl" timeout 480 python3 -m pytest tests -q -rs \
    -p no:cacheprovider --junitxml "$S/junit.xml" > "$S/pytest.log" 2>&1 || status=1
  tail -n 40 "$S/pytest.log"
  if [ "${NCU:-1}" = 1 ] && command -v ncu > /dev/null; then  # fused kernels at R=256
    for dtype in bf16 fp32; do
      timeout 45 ncu --clock-control none --profile-from-start off --kernel-name regex:fused \
        --section SpeedOfLight --section Occupancy --section WarpStateStats \
        python3 benchmarks/profile_kernels.py --num-reqs 256 --dtype $dtype \
        > "$S/ncu-r256-$dtype.txt" 2>&1 || status=1
    done
  fi
fi
if [ "$STAGE" = all ] || [ "$STAGE" = compare ]; then
  timeout 150 python3 benchmarks/host_step.py --backend "${HOST_STEP_BACKEND:-auto}" \
    --out "$S/host_step.json" | tee "$S/host_step.txt" || status=1
  python3 -m masks compare --out-dir "$S" "$@" 2> "$S/compare-stderr.log" > "$S/compare.txt" \
    || status=1
  tail -n 25 "$S/compare.txt"
fi
tar -czf "$OUT/session.tgz" -C "$OUT" session && rm -rf "$S"
exit $status
