"""Numba backend specifics: the simulator-safe warp scan, ballot and byte permute, ``fused``'s
staged ids at their limit and its regrouped ranking for every group width, launch geometry,
dispatch caching, and the GPU compilation of every kernel signature.

Run under the simulator (``NUMBA_ENABLE_CUDASIM=1``) on CPU-only machines; the GPU-marked tests
compare the hardware forms with their simulator-safe equivalents, the plans, and ``split`` on
shapes with many tiles per row (several look-back rounds, flags that are not yet published) on a
real GPU; the PTX test compiles every kernel for sm_90 wherever numba-cuda can compile (no GPU
needed).
"""

from __future__ import annotations

import os
import re

import numpy as np
import pytest
import torch

nb = pytest.importorskip("masks.backends.numba", reason="numba-cuda is not installed")
from numba import cuda, types  # noqa: E402

from masks.backends import scratch, tiling  # noqa: E402
from masks.backends import torch as reference  # noqa: E402
from masks.backends.cuda_state import sm_count  # noqa: E402
from masks.result import SamplingMask  # noqa: E402
from masks.testing import assert_masks_equal, make_logits  # noqa: E402

HAS_GPU = not nb.SIMULATED and torch.cuda.is_available() and cuda.is_available()
RUNNABLE = nb.SIMULATED or HAS_GPU
needs_kernels = pytest.mark.skipif(
    not RUNNABLE, reason="needs a CUDA GPU or the simulator (NUMBA_ENABLE_CUDASIM=1)"
)
DEVICE = "cuda" if HAS_GPU else "cpu"
warp_scan_shuffle, warp_scan_shared = nb.warp_scan_shuffle, nb.warp_scan_shared


def test_launch_override_takes_whole_warps_and_whole_groups_only(monkeypatch) -> None:
    """Block sizes from MASKS_NUMBA_LAUNCH are 32..1024 whole warps (`_warp_prefix` reads one
    warp count per lane) and LOADS is 8 or 16 (`_rank_bytes` ranks groups of 1, 2, 4 or 8
    segments); the simulator ignores the override."""
    monkeypatch.setenv("MASKS_NUMBA_LAUNCH", "256,64,8")
    assert nb.launch_constants(simulated=False) == (256, 64, 8)
    assert nb.launch_constants(simulated=True) == (64, 64, 16)
    for bad, reason in [
        ("512,48,16", "whole warps"),
        ("2048,128,16", "whole warps"),
        ("16,128,16", "whole warps"),
        ("512,128,32", "LOADS"),
        ("512,128,4", "LOADS"),
    ]:
        monkeypatch.setenv("MASKS_NUMBA_LAUNCH", bad)
        with pytest.raises(ValueError, match=reason):
            nb.launch_constants(simulated=False)
    with pytest.raises(ValueError, match="groups of 1, 2, 4 or 8"):
        nb._rank_bytes(16)


def _scan_kernel(values, hardware, before, total):
    """``before[i], total[i]`` = the warp scan of ``values`` at thread i."""
    tid = cuda.threadIdx.x
    i = cuda.blockIdx.x * cuda.blockDim.x + tid
    warp = tid // 32
    scratch = cuda.shared.array(0, types.int32)[32 * warp : 32 * warp + 32]
    if hardware:
        b, t = warp_scan_shuffle(values[i], tid % 32, scratch)
    else:
        b, t = warp_scan_shared(values[i], tid % 32, scratch)
    before[i] = b
    total[i] = t


def _run_warp_kernel(kernel, blocks: int, values, hardware: bool, *outputs):
    """Launch ``kernel(values, hardware, *outputs)`` on blocks of SPLIT_THREADS threads with
    one shared word per thread, on the GPU or in the simulator; return the outputs, on the
    host."""
    launch = cuda.jit(kernel)[blocks, nb.SPLIT_THREADS, 0, 4 * nb.SPLIT_THREADS]
    if nb.SIMULATED:
        launch(values, hardware, *outputs)
        return outputs
    on_device = [cuda.to_device(out) for out in outputs]
    launch(cuda.to_device(values), hardware, *on_device)
    return tuple(out.copy_to_host() for out in on_device)


def _warp_counts(blocks: int, seed: int):
    """int32 values per thread for the warp scan and sum: word popcounts, a warp of full words
    and a warp of unit counts."""
    rng = np.random.default_rng(seed)
    values = rng.integers(0, 33, blocks * nb.SPLIT_THREADS).astype(np.int32)  # word popcounts
    values[:32] = 32
    values[32:64] = rng.integers(0, 10**6, 32)  # unit counts
    return values


def _run_scan(hardware: bool, blocks: int = 3, seed: int = 0):
    """(got, want): each an array of (before, total) per thread."""
    values = _warp_counts(blocks, seed)
    groups = values.reshape(-1, 32).astype(np.int64)
    want = np.stack([(np.cumsum(groups, axis=1) - groups).ravel(), groups.sum(1).repeat(32)])
    outputs = (np.zeros_like(values), np.zeros_like(values))
    return np.stack(_run_warp_kernel(_scan_kernel, blocks, values, hardware, *outputs)), want


def _sum_kernel(values, hardware, total):
    """``total[i]`` = the warp sum of ``values`` at thread i."""
    tid = cuda.threadIdx.x
    i = cuda.blockIdx.x * cuda.blockDim.x + tid
    warp = tid // 32
    scratch = cuda.shared.array(0, types.int32)[32 * warp : 32 * warp + 32]
    if hardware:
        total[i] = nb.warp_sum_redux(values[i], tid % 32, scratch)
    else:
        total[i] = nb.warp_sum_shared(values[i], tid % 32, scratch)


def _run_sum(hardware: bool, blocks: int = 3, seed: int = 0):
    """(got, want): each an array of the warp sum per thread (`_warp_counts`)."""
    values = _warp_counts(blocks, seed)
    want = values.reshape(-1, 32).astype(np.int64).sum(1).repeat(32)
    outputs = (np.zeros_like(values),)
    (got,) = _run_warp_kernel(_sum_kernel, blocks, values, hardware, *outputs)
    return got.astype(np.int64), want


def _vote_kernel(values, hardware, lanes):
    """``lanes[i]`` = the warp ballot of ``values & 1`` at thread i."""
    tid = cuda.threadIdx.x
    i = cuda.blockIdx.x * cuda.blockDim.x + tid
    warp = tid // 32
    scratch = cuda.shared.array(0, types.int32)[32 * warp : 32 * warp + 32]
    if hardware:
        lanes[i] = nb.warp_ballot_shuffle(values[i] % 2 == 1, tid % 32, scratch)
    else:
        lanes[i] = nb.warp_ballot_shared(values[i] % 2 == 1, tid % 32, scratch)


def _run_vote(hardware: bool, blocks: int = 3, seed: int = 0):
    """(got, want): each an array of the ballot per thread."""
    threads = nb.SPLIT_THREADS
    rng = np.random.default_rng(seed)
    values = rng.integers(0, 10**6, blocks * threads).astype(np.int64)
    values[:32] = 2 * values[:32] + 1  # a full ballot
    values[32:64] = 2 * values[32:64]  # an empty one
    want = ((values.reshape(-1, 32) % 2) << np.arange(32)).sum(1).repeat(32)
    outputs = (np.zeros(blocks * threads, dtype=np.uint32),)
    (got,) = _run_warp_kernel(_vote_kernel, blocks, values, hardware, *outputs)
    return got.astype(np.int64), want


def _byte_perm_kernel(values, hardware, permuted):
    """``permuted[i]`` = the byte permute of words 2i, 2i + 1 of ``values`` by the selector of
    kept_byte (0x7531) for even i, for odd i by selectors whose top nibble takes every byte
    position 0-7 across threads (the others 0, 2, 5, 7)."""
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    selector = 0x7531 if i % 2 == 0 else 0x0527 + 0x1000 * (i // 2 % 8)
    if hardware:
        permuted[i] = nb.byte_perm_prmt(values[2 * i], values[2 * i + 1], selector)
    else:
        permuted[i] = nb.byte_perm_shifts(values[2 * i], values[2 * i + 1], selector)


def _run_byte_perm(hardware: bool, blocks: int = 3, seed: int = 0):
    """(got, want): each an array of the permuted word per thread."""
    threads = blocks * nb.SPLIT_THREADS
    rng = np.random.default_rng(seed)
    values = rng.integers(0, 2**32, 2 * threads, dtype=np.uint64).astype(np.uint32)
    index = np.arange(threads)
    selectors = np.where(index % 2 == 0, 0x7531, 0x0527 + 0x1000 * (index // 2 % 8))
    both = values[1::2].astype(np.uint64) << np.uint64(32) | values[0::2].astype(np.uint64)
    want = np.zeros(threads, dtype=np.int64)
    for k in range(4):
        source = (selectors >> (4 * k)) & 7
        byte = (both >> (np.uint64(8) * source.astype(np.uint64))) & np.uint64(0xFF)
        want |= byte.astype(np.int64) << (8 * k)
    outputs = (np.zeros(threads, dtype=np.uint32),)
    (got,) = _run_warp_kernel(_byte_perm_kernel, blocks, values, hardware, *outputs)
    return got.astype(np.int64), want


INTRINSICS = [
    pytest.param(_run_scan, id="scan"),
    pytest.param(_run_sum, id="sum"),
    pytest.param(_run_vote, id="ballot"),
    pytest.param(_run_byte_perm, id="byte_perm"),
]
"""Runners of the intrinsics' checks: (got, want) of the hardware form (shuffle, REDUX, vote,
PRMT) or the simulator-safe one."""


@needs_kernels
@pytest.mark.parametrize("run", INTRINSICS)
def test_simulator_safe_intrinsic(run) -> None:
    got, want = run(hardware=False)
    np.testing.assert_array_equal(got, want)


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_GPU, reason="needs a CUDA GPU (outside the simulator)")
@pytest.mark.parametrize("run", INTRINSICS)
def test_hardware_form_matches_simulator_safe_form(run) -> None:
    hardware, want = run(hardware=True, blocks=64, seed=1)
    safe, _ = run(hardware=False, blocks=64, seed=1)
    np.testing.assert_array_equal(hardware, want)
    np.testing.assert_array_equal(safe, hardware)


def _check_widths(logits, counts, widths, variant: str) -> None:
    """``variant`` on ``logits`` (and ``counts``) equals the reference at every W in ``widths``."""
    num_reqs, vocab = logits.shape
    for width in widths:
        want = SamplingMask.empty(num_reqs, vocab, width)
        reference.compact(logits.cpu(), None if counts is None else counts.cpu(), want)
        got = SamplingMask.empty(num_reqs, vocab, width, device=DEVICE)
        nb.compact(logits.to(DEVICE), counts, got, variant)
        assert_masks_equal(got, want)


@needs_kernels
@pytest.mark.parametrize("variant", nb.VARIANTS)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.float64])
@pytest.mark.parametrize(
    ("tail", "stride"), [(5, 2), (32, 1)], ids=["bytes-strided", "words-wide"]
)  # fmt: skip
def test_multi_segment_rows(variant: str, dtype: torch.dtype, tail: int, stride: int) -> None:
    """Whole groups and the one-segment tail loop per warp (fused), several tiles and units
    per row (split), W inside/beyond a warp's range; a column-strided view (scalar loads) whose
    mask rows are not 4-byte aligned (ranking reads bytes), and 16-byte aligned contiguous rows
    (16-byte loads) with 4-byte aligned mask rows (on a GPU, ranking reads 32-bit mask words)."""
    num_reqs, vocab = 2, 5 * nb.SEGMENT + tail
    logits = make_logits(
        num_reqs, stride * vocab, supports=[40, stride * vocab], dtype=dtype, junk=True
    )
    logits = logits.to(DEVICE)[:, ::stride]
    assert tiling.wide_rows(logits) == (stride == 1)
    counts = torch.tensor([3, 1], dtype=torch.int32, device=DEVICE)
    _check_widths(logits, counts, (0, 17, nb.SEGMENT + 3), variant)


@needs_kernels
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_fused_staged_ids_at_their_limit(dtype: torch.dtype) -> None:
    """``fused``'s warps after the first stage up to STAGED_IDS ids during pass 1 and rank from
    the mask when they need more: rows of 100 kept columns in the first 3072 and 255, 256, 257
    or 300 in the last 768 (another warp's range in the simulator's two-warp blocks, for both
    dtypes), at widths that cut just before, at and after the staged limit."""
    vocab, early = 4_864, 100
    generator = torch.Generator().manual_seed(5)
    late_counts = (255, 256, 257, 300, 1)
    logits = torch.full((len(late_counts), vocab), float("-inf"))
    for row, late in enumerate(late_counts):
        kept = torch.cat(
            [
                torch.randperm(3_072, generator=generator)[:early],
                4_096 + torch.randperm(768, generator=generator)[:late],
            ]
        )
        logits[row, kept] = 1.0 + torch.rand(kept.numel(), generator=generator)
    widths = (2_048, early + 255, early + nb.STAGED_IDS, early + 257, 300, early)
    _check_widths(logits.to(dtype), None, widths, "fused")


@needs_kernels
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32, torch.float64])
def test_fused_regroups_every_group_width(dtype: torch.dtype) -> None:
    """Pass 1's regrouped ranking (`_rank_bytes`) for groups of 8 (16-bit), 4 (fp32) and 2
    (fp64) segments in every warp: one whole group per warp (V = warps x group), a full row
    (the consecutive-ids path), a row with holes at 33 and V/2 + 33 (a lane's upper 32 columns
    in 16-bit groups) and a row whose first half keeps no column; W cuts inside warp 0's group
    and where the later warps stage at most STAGED_IDS ids."""
    warps = nb.FUSED_THREADS // 32
    vocab = warps * (nb.LOADS // dtype.itemsize) * nb.SEGMENT
    half = vocab // 2
    logits = torch.full((3, vocab), float("-inf"), dtype=dtype)
    logits[:2] = 1.0
    logits[1, [33, half + 33]] = float("-inf")
    logits[2, [half + 1, half + 33, half + 64, vocab - 1]] = 2.0
    _check_widths(logits, None, (0, 40, half + 40, vocab), "fused")


def _check_past_one_batch(variant: str, vocab: int) -> None:
    """Full rows (consecutive ids), a full row with two holes and a sparse row of ``vocab``
    columns at widths cut inside a step and past the row, against the reference."""
    logits = make_logits(3, vocab, supports=[vocab, vocab, 4_000], seed=1)
    logits[1, 1_030] = logits[1, 5_000] = float("-inf")
    _check_widths(logits, None, (1_500, 5_000, vocab), variant)


@needs_kernels
@pytest.mark.parametrize("variant", ["fused", "split"])
@pytest.mark.parametrize(
    "tail",
    [
        pytest.param(808, id="mask-rows-unaligned"),
        pytest.param(832, id="mask-rows-words"),
        pytest.param(896, id="mask-rows-16-bytes"),
    ],
)
def test_ranges_longer_than_one_batch_of_rank_steps(variant: str, tail: int) -> None:
    """Warp ranges of more than RANK_STEPS steps of mask words (``fused``: a step is 4096
    columns): the next batch of steps, full steps next to steps with masked columns, and W cut
    inside a step, which the conformance suite's emulated vocabulary does not reach; mask rows
    of ``V / 8`` bytes that are multiples of 16 (896: 16-byte loads in ``fused``), of 4 only
    (832: word loads) and of neither (808: bytes), so every load path ranks rows with holes, on
    the GPU and in the simulator."""
    step_cols = 1024 * nb.FUSED_LANE_WORDS
    _check_past_one_batch(variant, nb.FUSED_THREADS // 32 * nb.RANK_STEPS * step_cols + tail)


@pytest.mark.skipif(
    not nb.SIMULATED,
    reason="simulator only: a GPU kernel compiles RANK_STEPS in (the test above covers 4 there)",
)
@pytest.mark.parametrize("variant", ["fused", "split"])
def test_batches_of_several_rank_steps_in_the_simulator(
    variant: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The simulator's RANK_STEPS is 1, so the indexing of a batch's later steps
    (``words[lane_words * k + i]``, k > 0) runs there only with a larger batch."""
    monkeypatch.setattr(nb, "RANK_STEPS", 2)
    monkeypatch.setattr(nb, "RANK_WORDS", 2 * nb.FUSED_LANE_WORDS)
    _check_past_one_batch(variant, nb.FUSED_THREADS // 32 * 2 * 1024 * nb.FUSED_LANE_WORDS + 896)


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


def _split_scratch() -> torch.Tensor:
    """A copy of the zeroed scratch `split` uses on the current stream (the simulator's lives
    on the CPU), ordered after the kernels queued on that stream."""
    if HAS_GPU:
        index = torch.cuda.current_device()  # an explicit index: `hold` allocates on it
        zeroed = scratch.for_stream(index, torch.cuda.current_stream(index).cuda_stream)
        device = torch.device("cuda", index)
    else:
        zeroed, device = scratch.for_stream(-1, 0), torch.device("cpu")
    with zeroed.hold(1, device) as buffer:  # the whole buffer (at least one entry)
        return buffer.cpu().clone()


def _tiles(num_reqs: int, vocab: int) -> int:
    sms = sm_count(torch.cuda.current_device()) if HAS_GPU else 4  # the simulator's
    return num_reqs * nb.launch_geometry(num_reqs, vocab, "split", sms).tiles_per_row


@needs_kernels
def test_split_leaves_its_zeroed_scratch_zero() -> None:
    """The ticket, the done counter and every tile's flag are back to zero after a call (the
    last block resets them), so the next call, or a graph replay, starts from zero."""
    num_reqs, vocab = 3, 1_500
    logits = make_logits(num_reqs, vocab, supports=[vocab, 0, 700], device=DEVICE)
    counts = torch.tensor([1, 0, 2], dtype=torch.int32, device=DEVICE)
    got = SamplingMask.empty(num_reqs, vocab, 8, device=DEVICE)
    nb.compact(logits, counts, got, "split")
    state = _split_scratch()
    assert state.numel() >= 2 + _tiles(num_reqs, vocab) > 2 + num_reqs  # several tiles per row
    assert not state.any(), state.tolist()
    want = SamplingMask.empty(num_reqs, vocab, 8)
    reference.compact(logits.cpu(), counts.cpu(), want)
    assert_masks_equal(got, want)


SPLIT_SHAPES = [(1, 700), (2, 1_285), (3, 300), (4, 1_100), (5, 520), (1, 2_101)]


@needs_kernels
def test_split_consecutive_shapes_match_the_reference() -> None:
    """Calls of different shapes one after another on the same scratch: R = 1..5, one to five
    tiles per row, inactive rows, W small (tiles past W rank nothing and their look-back
    stops) and W past the vocabulary; every call equals the reference, every call leaves the
    scratch zero."""
    for index, (num_reqs, vocab) in enumerate(SPLIT_SHAPES):
        supports = [(vocab, 0, vocab // 2, 3, vocab - 1)[(index + r) % 5] for r in range(num_reqs)]
        logits = make_logits(num_reqs, vocab, supports, seed=index, junk=True).to(DEVICE)
        for with_counts, width in ((False, 2_048), (True, 3), (True, 2_048)):
            counts = None
            if with_counts:  # rows 1, 4, ... inactive (0 or negative)
                values = [(2, 0, 1, 5, -1)[r % 5] for r in range(num_reqs)]
                counts = torch.tensor(values, dtype=torch.int64, device=DEVICE)
            want = SamplingMask.empty(num_reqs, vocab, width)
            reference.compact(logits.cpu(), None if counts is None else counts.cpu(), want)
            got = SamplingMask.empty(num_reqs, vocab, width, device=DEVICE)
            got.token_ids.fill_(0x5A5A5A5A)
            got.counts.fill_(12345)
            got.packed_mask.fill_(0xA5)
            nb.compact(logits, counts, got, "split")
            assert_masks_equal(got, want)
            assert not _split_scratch().any(), (num_reqs, vocab, with_counts, width)


@needs_kernels
def test_split_last_tile_sums_every_earlier_tile_past_w(monkeypatch) -> None:
    """A row's last tile writes ``counts[r]``, so its look-back runs past W over every earlier
    tile, through more than one round of ``blockDim`` flags in the simulator (67 one-unit tiles
    here, forced: the simulator's own tiling gives a few); the other tiles stop at W = 1."""
    tiles = 67
    vocab = (tiles - 1) * (nb.SPLIT_THREADS // 32) * tiling.SEGMENT + 100  # the last tile: 100
    geometry = tiling.Geometry(False, tiles_per_row=tiles, segs_per_unit=1)
    monkeypatch.setattr(nb, "launch_geometry", lambda *_: geometry)
    logits = torch.full((1, vocab), float("-inf"))
    logits[0, ::500] = 1.0  # an id or two a tile
    want = SamplingMask.empty(1, vocab, 1)
    reference.compact(logits, None, want)
    got = SamplingMask.empty(1, vocab, 1, device=DEVICE)
    nb.compact(logits.to(DEVICE), None, got, "split")
    assert_masks_equal(got, want)
    assert int(got.counts[0]) > tiles


def _look_back_kernel(state, first, end, whole, limit, out):
    warps = cuda.blockDim.x // 32
    warp = cuda.threadIdx.x // 32
    shared = cuda.shared.array(0, types.int32)
    scan = shared[2 * warps + warp * SCAN_SLOTS : 2 * warps + (warp + 1) * SCAN_SLOTS]
    out[cuda.threadIdx.x] = look_back(state, first, end, whole, limit, shared, scan)


SCAN_SLOTS = nb.SCAN_SLOTS
look_back = nb._look_back


@needs_kernels
@pytest.mark.parametrize(
    ("first", "end", "whole", "limit"),
    [(3, 140, True, 0), (3, 140, False, 10**9), (3, 140, False, 1), (3, 140, False, 0),
     (10, 11, False, 5), (0, 0, True, 0), (5, 5 + 2 * nb.SPLIT_THREADS, False, 250)],
)  # fmt: skip
def test_look_back_sum_and_early_stop(first: int, end: int, whole: bool, limit: int) -> None:
    """Published counts ``flag - 1`` of tiles ``[first, end)``, ``blockDim`` per round (several
    rounds here), stopping after the round where the sum reaches ``limit`` unless ``whole``;
    the same answer in every thread; flags untouched."""
    threads = nb.SPLIT_THREADS
    published = (np.arange(600) * 7919 % 13).astype(np.int32)
    state = np.concatenate([[0, 0], published + 1]).astype(np.int32)
    kept, i = 0, first
    while i < end and (whole or kept < limit):
        kept += int(published[i : min(i + threads, end)].sum())
        i += threads
    out = np.zeros(threads, dtype=np.int64)
    kernel = cuda.jit(_look_back_kernel)[1, threads, 0, nb.shared_bytes(threads)]
    if nb.SIMULATED:
        kernel(state, first, end, whole, limit, out)
        after = state
    else:
        d_state, d_out = cuda.to_device(state), cuda.to_device(out)
        kernel(d_state, first, end, whole, limit, d_out)
        out, after = d_out.copy_to_host(), d_state.copy_to_host()
    assert out.tolist() == [kept] * threads
    if end - first > threads and not whole and 0 < limit < published[first:end].sum():
        assert kept < published[first:end].sum()  # it stopped early
    np.testing.assert_array_equal(after[2:], published + 1)


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_GPU, reason="needs a CUDA GPU (outside the simulator)")
def test_split_many_tiles_per_row_and_repeated_calls() -> None:
    """The H200 shapes `split` is for (R = 1, 4, 16 at V = 151,936: up to ~150 tiles per row,
    several look-back rounds, tiles waiting for flags not yet published), 20 calls in a row on
    one scratch without a sync, each equal to the reference; the scratch ends zero."""
    vocab = 151_936
    for num_reqs in (1, 4, 16):
        supports = [(vocab, 0, 50, 3_000, vocab - 7)[r % 5] for r in range(num_reqs)]
        logits = make_logits(num_reqs, vocab, supports, device="cuda")
        counts = torch.tensor([(1, 1, 0, 2)[r % 4] for r in range(num_reqs)], device="cuda")
        for with_counts, width in ((False, 2_048), (True, 1), (True, vocab)):
            used = counts if with_counts else None
            want = SamplingMask.empty(num_reqs, vocab, width)
            reference.compact(logits.cpu(), None if used is None else used.cpu(), want)
            outs = [SamplingMask.empty(num_reqs, vocab, width, device="cuda") for _ in range(20)]
            for out in outs:
                nb.compact(logits, used, out, "split")
            for out in outs:
                assert_masks_equal(out, want)
            assert not _split_scratch().any()


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_GPU, reason="needs a CUDA GPU (outside the simulator)")
def test_plans_are_cached_and_concurrent_first_calls_agree(monkeypatch) -> None:
    from concurrent.futures import ThreadPoolExecutor

    monkeypatch.setattr(nb, "_plans", {})
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
    # one shape on two streams, from nine calls: one plan (the key holds no stream)
    assert [key for key in nb._plans if "split" in key] == list(nb._plans)
    assert len(nb._plans) == 1


def _ptx(name: str, itemsize: int, count_type) -> str:
    dispatcher = nb._dispatcher(name, itemsize)
    signature = nb._signatures(itemsize, count_type)[name]
    bounds = dispatcher.targetoptions["launch_bounds"]
    return cuda.compile_ptx(dispatcher.py_func, signature.args, cc=(9, 0), launch_bounds=bounds)[0]


@pytest.fixture
def sm90_compiler(monkeypatch: pytest.MonkeyPatch) -> None:
    """Skip (with the reason) where numba-cuda cannot compile, unless MASKS_REQUIRE_NUMBA_PTX=1
    (tox env numba-ptx, which installs NVRTC and NVVM) makes that a failure; without a GPU,
    compile the device functions for sm_90 (numba-cuda compiles them for the current device's
    CC)."""
    if nb.SIMULATED:
        pytest.skip("the Numba CUDA simulator compiles nothing")
    try:
        cuda.compile_ptx(lambda a: None, (types.CPointer(types.uint8),), cc=(9, 0))
    except Exception as error:  # toolchain missing: NVVM, NVRTC (CUDA arch list)
        reason = f"numba-cuda cannot compile PTX here: {type(error).__name__}: {error}"
        if os.environ.get("MASKS_REQUIRE_NUMBA_PTX") == "1":
            pytest.fail(reason)
        pytest.skip(reason)
    if not cuda.is_available():
        import numba.cuda.dispatcher as dispatcher

        class Sm90:
            compute_capability = (9, 0)

        monkeypatch.setattr(dispatcher, "get_current_device", Sm90)


def _atomic_spin_loops(ptx: str) -> list[str]:
    """Labels of the basic blocks that branch back to themselves and read by an atomic."""
    loops = []
    for label, body in re.findall(r"\n(\$L__BB\w+):\n(.*?)(?=\n\$L__BB|\Z)", ptx, re.S):
        if re.search(rf"\bbra(\.uni)?\s+{re.escape(label)};", body) and "atom.global." in body:
            loops.append(label)
    return loops


@pytest.mark.usefixtures("sm90_compiler")
@pytest.mark.parametrize("itemsize", [2, 4, 8])
def test_every_signature_compiles_for_sm90(itemsize: int) -> None:
    """Every kernel and signature compiles; pass 1 keeps its words in registers (no local
    memory) and a group's LOADS words are 16-byte streaming loads sharing one branch-free block
    (all in flight before the first test; ptxas then issues them back to back); ``fused`` ranks
    aligned mask rows by 16-byte loads of four words."""
    group = max(1, nb.LOADS // itemsize) * itemsize // 2
    for count_type in (types.int32, types.int64):
        for name in nb._signatures(itemsize, count_type):
            ptx = _ptx(name, itemsize, count_type)
            assert ".local" not in ptx, name
            if name == "split":  # flags are read by atomics in a loop, never by plain loads
                assert _atomic_spin_loops(ptx), "split: no flag loop of atomics"
            blocks = re.split(r"\n\$L__BB\w*:|\bbra\b", ptx)  # basic blocks
            assert max(block.count("ld.global.cs.v2.u64") for block in blocks) >= group, name
            assert ("ld.global.v4.u32" in ptx) == (name == "fused"), name
        assert set(nb._signatures(itemsize, count_type)) == {"fused", "split"}


def _pair_kernel(words, streaming, out):
    """``out[2i], out[2i + 1]`` = words ``2i, 2i + 1`` loaded by one of the two pair loads."""
    i = 2 * (cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x)
    if i < words.size:
        if streaming:
            out[i], out[i + 1] = nb.load_pair_streaming(words, i)
        else:
            out[i], out[i + 1] = nb.load_pair_plain(words, i)


def _quad_kernel(words, vector, out):
    """``out[4i: 4i + 4]`` = words ``4i .. 4i + 3`` by one `load_quad_vector` or by
    `load_quad_plain`."""
    i = 4 * (cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x)
    if i < words.size:
        if vector:
            out[i], out[i + 1], out[i + 2], out[i + 3] = nb.load_quad_vector(words, i)
        else:
            out[i], out[i + 1], out[i + 2], out[i + 3] = nb.load_quad_plain(words, i)


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_GPU, reason="needs a CUDA GPU (outside the simulator)")
def test_streaming_pair_load_matches_simulator_safe_load() -> None:
    """The 16-byte load the GPU kernels use returns what the simulator's two loads return."""
    words = np.random.default_rng(0).integers(0, 2**63, 4096, dtype=np.int64).view(np.uint64)
    loaded = {}
    for streaming in (True, False):
        out = cuda.device_array_like(words)
        cuda.jit(_pair_kernel)[16, 128](cuda.to_device(words), streaming, out)
        loaded[streaming] = out.copy_to_host()
    np.testing.assert_array_equal(loaded[True], words)
    np.testing.assert_array_equal(loaded[False], words)


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_GPU, reason="needs a CUDA GPU (outside the simulator)")
def test_quad_load_matches_simulator_safe_load() -> None:
    """The 16-byte mask-word load of ``fused``'s pass 2 returns four consecutive words, as the
    simulator's four loads do."""
    words = np.random.default_rng(1).integers(0, 2**32, 4096, dtype=np.int64).astype(np.uint32)
    for vector in (True, False):
        out = cuda.device_array_like(words)
        cuda.jit(_quad_kernel)[8, 128](cuda.to_device(words), vector, out)
        np.testing.assert_array_equal(out.copy_to_host(), words)
