"""Numba backend specifics: the simulator-safe warp scan, launch geometry, dispatch caching, and
the GPU compilation of every kernel signature.

Run under the simulator (``NUMBA_ENABLE_CUDASIM=1``) on CPU-only machines; the GPU-marked tests
compare the shuffle scan with its simulator-safe equivalent and the plans on a real GPU, and the
PTX test compiles every kernel for sm_90 wherever numba-cuda can compile (no GPU needed).
"""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch

nb = pytest.importorskip("masks.backends.numba", reason="numba-cuda is not installed")
from numba import cuda, types  # noqa: E402

from masks.backends import torch as reference  # noqa: E402
from masks.result import SamplingMask  # noqa: E402
from masks.testing import assert_masks_equal, make_logits  # noqa: E402

HAS_GPU = not nb.SIMULATED and torch.cuda.is_available() and cuda.is_available()
RUNNABLE = nb.SIMULATED or HAS_GPU
needs_kernels = pytest.mark.skipif(
    not RUNNABLE, reason="needs a CUDA GPU or the simulator (NUMBA_ENABLE_CUDASIM=1)"
)
DEVICE = "cuda" if HAS_GPU else "cpu"
warp_scan_shuffle, warp_scan_shared = nb.warp_scan_shuffle, nb.warp_scan_shared


def _scan_kernel(values, use_shuffle, before, total):
    """``before[i], total[i]`` = the warp scan of ``values`` at thread i."""
    tid = cuda.threadIdx.x
    i = cuda.blockIdx.x * cuda.blockDim.x + tid
    warp = tid // 32
    scratch = cuda.shared.array(0, types.int32)[32 * warp : 32 * warp + 32]
    if use_shuffle:
        b, t = warp_scan_shuffle(values[i], tid % 32, scratch)
    else:
        b, t = warp_scan_shared(values[i], tid % 32, scratch)
    before[i] = b
    total[i] = t


def _run_scan(use_shuffle: bool, blocks: int = 3, seed: int = 0):
    """(got, want): each an array of (before, total) per thread."""
    threads = nb.SPLIT_THREADS
    rng = np.random.default_rng(seed)
    values = rng.integers(0, 33, blocks * threads).astype(np.int32)  # word popcounts
    values[:32] = 32
    values[32:64] = rng.integers(0, 10**6, 32)  # unit counts
    groups = values.reshape(-1, 32).astype(np.int64)
    want = np.stack([(np.cumsum(groups, axis=1) - groups).ravel(), groups.sum(1).repeat(32)])
    before = np.zeros_like(values)
    total = np.zeros_like(values)
    kernel = cuda.jit(_scan_kernel)[blocks, threads, 0, 4 * threads]
    if nb.SIMULATED:
        kernel(values, use_shuffle, before, total)
    else:
        d_before, d_total = cuda.to_device(before), cuda.to_device(total)
        kernel(cuda.to_device(values), use_shuffle, d_before, d_total)
        before, total = d_before.copy_to_host(), d_total.copy_to_host()
    return np.stack([before, total]), want


@needs_kernels
def test_simulator_safe_scan_prefixes_and_totals() -> None:
    got, want = _run_scan(use_shuffle=False)
    np.testing.assert_array_equal(got, want)


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_GPU, reason="needs a CUDA GPU (outside the simulator)")
def test_shuffle_scan_matches_simulator_safe_scan() -> None:
    shuffle, want = _run_scan(use_shuffle=True, blocks=64, seed=1)
    shared, _ = _run_scan(use_shuffle=False, blocks=64, seed=1)
    np.testing.assert_array_equal(shuffle, want)
    np.testing.assert_array_equal(shared, shuffle)


def test_geometry_split_fills_the_gpu_and_fused_takes_many_rows() -> None:
    sms, vocab = 132, 151_936
    warps = nb.SPLIT_THREADS // 32
    for num_reqs in (1, 16, 64):
        split = nb.geometry(num_reqs, vocab, "auto", sms)
        assert not split.fused
        assert 1 <= split.segs_per_unit <= nb.MAX_SEGS_PER_UNIT
        unit_cols = split.segs_per_unit * nb.SEGMENT
        units = split.tiles_per_row * warps
        assert units * unit_cols >= vocab > (units - warps) * unit_cols  # no empty tile
        if split.segs_per_unit > 1:  # units only grow while the GPU stays filled
            assert num_reqs * split.tiles_per_row >= nb.SPLIT_TILES_PER_SM * sms
    per_sm = max(1, nb._RESIDENT_THREADS // nb.FUSED_THREADS)
    rows = int(np.ceil(nb.FUSED_MIN_WAVES * sms * per_sm))
    assert nb.geometry(rows, vocab, "auto", sms).fused
    assert not nb.geometry(rows - 1, vocab, "auto", sms).fused
    assert not nb.geometry(10**6, 100, "split", sms).fused
    assert nb.geometry(1, 100, "fused", sms).fused


@needs_kernels
@pytest.mark.parametrize("variant", nb.VARIANTS)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.float64])
@pytest.mark.parametrize(
    ("tail", "stride"), [(5, 2), (32, 1)], ids=["bytes-strided", "words-wide"]
)  # fmt: skip
def test_multi_segment_rows(variant: str, dtype: torch.dtype, tail: int, stride: int) -> None:
    """Whole groups and the one-segment tail loop per warp (fused), several tiles and units
    per row (split), W inside/beyond a warp's range; a column-strided view (scalar loads) whose
    mask rows are not 4-byte aligned (ranking reads bytes), and 8-byte aligned contiguous rows
    (wide loads) with 4-byte aligned mask rows (ranking reads 32-bit mask words)."""
    num_reqs, vocab = 2, 5 * nb.SEGMENT + tail
    logits = make_logits(
        num_reqs, stride * vocab, supports=[40, stride * vocab], dtype=dtype, junk=True
    )
    logits = logits.to(DEVICE)[:, ::stride]
    assert nb._wide_layout(logits) == (stride == 1)
    counts = torch.tensor([3, 1], dtype=torch.int32, device=DEVICE)
    for width in (0, 17, nb.SEGMENT + 3):
        want = SamplingMask.empty(num_reqs, vocab, width)
        reference.compact(logits.cpu(), counts.cpu(), want)
        got = SamplingMask.empty(num_reqs, vocab, width, device=DEVICE)
        nb.compact(logits, counts, got, variant)
        assert_masks_equal(got, want)


@needs_kernels
def test_strided_num_sampled_tokens() -> None:
    logits = make_logits(3, 300, supports=[7, 300, 150], dtype=torch.float32).to(DEVICE)
    counts = torch.tensor([1, 9, 0, 9, 2, 9], dtype=torch.int64, device=DEVICE)[::2]
    want = SamplingMask.empty(3, 300, 64)
    reference.compact(logits.cpu(), counts.cpu(), want)
    for variant in ("split", "fused"):
        got = SamplingMask.empty(3, 300, 64, device=DEVICE)
        nb.compact(logits, counts, got, variant)
        assert_masks_equal(got, want)


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_GPU, reason="needs a CUDA GPU (outside the simulator)")
def test_plans_are_cached_and_concurrent_first_calls_agree() -> None:
    from concurrent.futures import ThreadPoolExecutor

    logits = make_logits(4, 4099, supports=[0, 5, 3000, 4099], device="cuda")
    want = SamplingMask.empty(4, 4099, 64)
    reference.compact(logits.cpu(), None, want)

    def call(_: int) -> SamplingMask:
        got = SamplingMask.empty(4, 4099, 64, device="cuda")
        nb.compact(logits, None, got, "split")
        torch.cuda.current_stream().synchronize()
        return got

    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(call, range(8)))
    for got in results:
        assert_masks_equal(got, want)
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        got = call(0)
    assert_masks_equal(got, want)
    assert len([key for key in nb._plans if key[-1] == "split"]) >= 1


def _ptx(name: str, itemsize: int, count_type) -> str:
    dispatcher = nb._dispatcher(name, itemsize)
    signature = nb._signatures(itemsize, count_type)[name]
    bounds = dispatcher.targetoptions["launch_bounds"]
    return cuda.compile_ptx(dispatcher.py_func, signature.args, cc=(9, 0), launch_bounds=bounds)[0]


@pytest.fixture
def sm90_compiler(monkeypatch: pytest.MonkeyPatch) -> None:
    """Skip (with the reason) where numba-cuda cannot compile; without a GPU, compile the
    device functions for sm_90 (numba-cuda compiles them for the current device's CC)."""
    if nb.SIMULATED:
        pytest.skip("the Numba CUDA simulator compiles nothing")
    try:
        cuda.compile_ptx(lambda a: None, (types.CPointer(types.uint8),), cc=(9, 0))
    except Exception as error:  # toolchain missing: NVVM, NVRTC (CUDA arch list)
        pytest.skip(f"numba-cuda cannot compile PTX here: {type(error).__name__}: {error}")
    if not cuda.is_available():
        import numba.cuda.dispatcher as dispatcher

        class Sm90:
            compute_capability = (9, 0)

        monkeypatch.setattr(dispatcher, "get_current_device", Sm90)


@pytest.mark.usefixtures("sm90_compiler")
@pytest.mark.parametrize("itemsize", [2, 4, 8])
def test_every_signature_compiles_for_sm90(itemsize: int) -> None:
    """Every kernel and signature compiles; pass 1 keeps its words in registers (no local
    memory) and a group's LOADS wide loads share one branch-free block (all in flight before
    the first test; ptxas then issues them back to back)."""
    group = max(1, nb.LOADS // itemsize) * itemsize
    for count_type in (types.int32, types.int64):
        for name in ("fused", "split_count", "split_rank"):
            ptx = _ptx(name, itemsize, count_type)
            assert ".local" not in ptx, name
            if name != "split_rank":  # the pass-1 kernels
                blocks = re.split(r"\n\$L__BB\w*:|\bbra\b", ptx)  # basic blocks
                assert max(block.count("ld.global.") for block in blocks) >= group, name
