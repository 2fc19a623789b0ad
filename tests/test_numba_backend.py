"""Numba backend specifics: the simulator-safe warp vote, launch geometry, dispatch caching.

Run under the simulator (``NUMBA_ENABLE_CUDASIM=1``) on CPU-only machines; the GPU-marked test
compares the ballot intrinsic with its simulator-safe equivalent on a real GPU.
"""

from __future__ import annotations

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
UNROLL, WARPS, VOTE_SLOTS = nb.UNROLL, nb.WARPS, nb.VOTE_SLOTS  # compile-time constants
warp_words_ballot, warp_words_atomic = nb.warp_words_ballot, nb.warp_words_atomic


def _words_kernel(flags, use_ballot, out):
    """out[group, k] = the warp word of flags[group * 32 * UNROLL + 32 k + lane]."""
    tid = cuda.threadIdx.x
    group = cuda.blockIdx.x * WARPS + tid // 32
    vote = cuda.shared.array(0, types.uint32)[:VOTE_SLOTS]
    mine = cuda.local.array(UNROLL, types.boolean)
    words = cuda.local.array(UNROLL, types.uint32)
    for k in range(UNROLL):
        mine[k] = flags[group * 32 * UNROLL + 32 * k + tid % 32] != 0
    if use_ballot:
        warp_words_ballot(mine, words, vote)
    else:
        warp_words_atomic(mine, words, vote)
    for k in range(UNROLL):
        out[group * UNROLL + k] = words[k]


def _expected_words(flags: np.ndarray) -> np.ndarray:
    bits = flags.reshape(-1, 32).astype(np.uint64)
    return (bits << np.arange(32, dtype=np.uint64)).sum(axis=1).astype(np.uint32)


def _run_words(use_ballot: bool, blocks: int = 3, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    flags = (rng.random(blocks * nb.SEGMENT) < 0.4).astype(np.int32)
    flags[: 32 * nb.UNROLL] = 1  # a full word (bit 31 set) and, below, an empty one
    flags[32 * nb.UNROLL : 64 * nb.UNROLL] = 0
    out = np.zeros(blocks * nb.WARPS * nb.UNROLL, dtype=np.uint32)
    kernel = cuda.jit(_words_kernel)
    if nb.SIMULATED:
        kernel[blocks, nb.BLOCK, 0, 4 * VOTE_SLOTS](flags, use_ballot, out)
    else:
        d_out = cuda.to_device(out)
        kernel[blocks, nb.BLOCK, 0, 4 * VOTE_SLOTS](cuda.to_device(flags), use_ballot, d_out)
        out = d_out.copy_to_host()
    return out, _expected_words(flags)


@needs_kernels
def test_simulator_safe_vote_builds_warp_words() -> None:
    got, want = _run_words(use_ballot=False)
    np.testing.assert_array_equal(got, want)


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_GPU, reason="needs a CUDA GPU (outside the simulator)")
def test_ballot_intrinsic_matches_simulator_safe_vote() -> None:
    ballot, want = _run_words(use_ballot=True, blocks=64, seed=1)
    fallback, _ = _run_words(use_ballot=False, blocks=64, seed=1)
    np.testing.assert_array_equal(ballot, want)
    np.testing.assert_array_equal(fallback, ballot)


def test_geometry_split_fills_the_gpu_and_fused_takes_many_rows() -> None:
    wave = 132 * nb._RESIDENT_BLOCKS_PER_SM
    one = nb.geometry(1, 151_936, "auto", 132)
    assert not one.fused
    assert one.chunk % nb.SEGMENT == 0
    assert one.num_tiles * one.chunk >= 151_936 > (one.num_tiles - 1) * one.chunk
    many = nb.geometry(nb._FUSED_MIN_WAVES * wave, 151_936, "auto", 132)
    assert many.fused
    assert not nb.geometry(10**6, 100, "split", 132).fused
    assert nb.geometry(1, 100, "fused", 132).fused


@needs_kernels
@pytest.mark.parametrize("variant", nb.VARIANTS)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.float64])
@pytest.mark.parametrize("tail", [5, 32], ids=["bytes", "words"])
def test_multi_tile_rows_and_strides(variant: str, dtype: torch.dtype, tail: int) -> None:
    """Several tiles per row (split) and warp ranges per row (fused), W inside/beyond a warp
    range, a column-strided view; ``tail`` 32 makes mask rows 4-byte aligned (ranking reads
    32-bit mask words), 5 does not (byte reads)."""
    num_reqs, vocab = 2, 3 * nb.SEGMENT + tail
    logits = make_logits(num_reqs, 2 * vocab, supports=[40, 2 * vocab], dtype=dtype, junk=True)
    logits = logits.to(DEVICE)[:, ::2]
    counts = torch.tensor([3, 1], dtype=torch.int32, device=DEVICE)
    for width in (0, 17, nb.SEGMENT + 3):
        want = SamplingMask.empty(num_reqs, vocab, width)
        reference.compact(logits.cpu(), counts.cpu(), want)
        got = SamplingMask.empty(num_reqs, vocab, width, device=DEVICE)
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
