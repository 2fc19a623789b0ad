"""pytest-benchmark suite: `compact_sampling_mask` per backend x shape, gated bit for bit first.

Each test first checks the backend against the reference on its shape (a wrong kernel fails
instead of being timed: the gate of `masks.compare.measure`, whose rejections
tests/test_compare.py checks with known-wrong kernels; the reference itself, the only backend
of a CPU-only install, defines the answer and is checked in tests/test_reference.py), then lets
pytest-benchmark time ``call + synchronize`` (host wall clock, so it includes dispatch), and
stores the device-side figures of `masks.compare.measure` (CUDA event medians after an L2
flush, host dispatch, GB/s, % of the copy ceiling measured once per session) in
``benchmark.extra_info``. Emulated backends run once, labelled "emulated: not
performance".

Shapes: ``MASKS_BENCH_SIZE=tiny`` (default on CPU: seconds, CI runs it with
``--benchmark-disable``) or ``full`` (default on CUDA: R 1..1024 x V 151936 x fp32/bf16 x
sparse/dense/full). Test ids read ``<backend>-R<num_reqs>-V<vocab>-<dtype>-<support>``, e.g.
``test_compact[triton:split-R256-V151936-float32-sparse]``.

    pytest benchmarks/test_compact_bench.py --benchmark-group-by=param:shape  # table per shape
    pytest benchmarks/test_compact_bench.py --benchmark-json=bench.json  # save, extra_info too
    pytest benchmarks/test_compact_bench.py --benchmark-autosave  # save under .benchmarks/
    pytest benchmarks/test_compact_bench.py --benchmark-compare  # against the last saved run
    pytest benchmarks/test_compact_bench.py --benchmark-disable  # correctness only (CI)

For the full side-by-side comparison (tables, CSV, plots) use ``python -m masks compare``.
"""

from __future__ import annotations

import dataclasses
import functools
import os

import pytest
import torch

from masks import compare, timing

DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")
GRIDS = {
    "tiny": compare.Grid((3,), (1027,), ("float32", "bfloat16"), ("sparse", "full"), width=256),
    "full": compare.Grid(
        (1, 16, 256, 1024), (151936,), ("float32", "bfloat16"), ("sparse", "dense", "full")
    ),
}
SIZE = os.environ.get("MASKS_BENCH_SIZE", "full" if DEVICE.type == "cuda" else "tiny")
if SIZE not in GRIDS:
    raise ValueError(f"MASKS_BENCH_SIZE must be one of {', '.join(GRIDS)}, got {SIZE!r}")
SHAPES = {shape.id: shape for shape in GRIDS[SIZE].shapes()}
BACKENDS = compare.default_backends(DEVICE)
BUDGET_S = 0.1
SEED = 0

# Shape-major order, so consecutive tests share one shape's inputs (see `_case`).
CASES = [
    pytest.param(backend, shape_id, id=f"{backend}-{shape_id}")
    for shape_id in SHAPES
    for backend in BACKENDS
]


@functools.lru_cache(maxsize=1)
def _case(shape_id: str) -> compare.Case:
    """Inputs and reference of one shape, kept while its backends run."""
    return compare.prepare_case(SHAPES[shape_id], DEVICE, SEED)


@pytest.mark.parametrize(("backend", "shape"), CASES)
def test_compact(benchmark, backend: str, shape: str, copy_ceiling: timing.CopyCeiling) -> None:
    case = _case(shape)
    candidate = compare.registry_candidate(backend)
    result = compare.measure(candidate, case, copy_ceiling, budget_s=BUDGET_S)
    if result.status == "skipped":
        pytest.skip(result.detail)
    assert result.status == "ok", f"{backend} on {shape}: {result.status}: {result.detail}"
    benchmark.extra_info.update(
        {key: value for key, value in dataclasses.asdict(result).items() if value is not None}
    )
    benchmark.extra_info["copy_ceiling_gbps"] = copy_ceiling.gbps

    out = compare.junk_filled_output(case.shape, DEVICE)

    def call_and_wait() -> None:
        candidate.run(case.logits, out)
        timing.synchronize(DEVICE)

    if candidate.emulated:
        benchmark.pedantic(call_and_wait, rounds=1, iterations=1)
    else:
        benchmark(call_and_wait)
