"""Numba CUDA backend: the shared word-level design written with `numba.cuda`.

Kernels
    Every element is tested on its bit pattern (bf16/fp16 through an int16 view, fp32 through
    int32, fp64 through int64; "kept" means the exponent field is not all ones), so one kernel
    per integer width serves all four float dtypes. Each WARP owns a contiguous, SPAN-aligned
    range of columns (``fused``: 1/WARPS of the row; ``split``: 1/WARPS of a tile) and works in
    two passes with no block barrier inside either loop:
    1. stream the range (one element per lane per 32 columns, UNROLL loads in flight, any
       element strides, 64-bit offsets); a warp vote turns 32 flags into one mask word every
       lane holds, lanes 0..4*UNROLL-1 store the mask bytes, ``popc`` accumulates the warp's
       count. Ranges are byte aligned, so no mask byte is shared between warps.
    2. after one combine of the warp counts (``fused``: one barrier; ``split``: the tile and
       warp counts in a scratch ``tile_counts`` read by a second launch), re-read the range's
       MASK WORDS (1/32 of the fp32 bytes, cache-hot; 32-bit loads when mask rows are 4-byte
       aligned, bytes otherwise), rank = prefix + ``popc(word & ((1 << lane) - 1))`` for the
       lane's own column, and stop once the rank reaches W or the warp's last kept id (sparse
       rows and rows with more than W kept ids touch few words).
    ``fused`` runs one block per row in one launch (many rows). ``split`` (few rows: R = 1 must
    fill the GPU) launches one block per (row, chunk of columns) for pass 1, then one per tile
    for pass 2, which also sums the tile counts before it, writes counts[r] and its share of
    the -1 padding. ``auto`` picks ``fused`` once the rows alone give `_FUSED_MIN_WAVES` waves
    of resident blocks (SM count read once per device).

Dispatch (host cost is most of the time at R = 1, so it is designed, not defaulted)
    The kernels take raw pointers (``types.CPointer``) and int64 scalars only. numba-cuda
    passes a CPointer argument as a plain integer, so a launch needs no device-array wrapper,
    no ``__cuda_array_interface__`` parsing and no per-array (meminfo, parent, nitems, itemsize,
    data, shape, strides) marshalling (measured: a trivial kernel costs ~30 us per call with a
    cached device array, 54 us with a torch tensor, 80 us through ``cuda.as_cuda_array``).
    Each signature is compiled explicitly once (``dispatcher.compile(sig)`` under a lock, on
    first use of a (logits dtype, num_sampled_tokens dtype) pair; 3 kernels x 3 int widths x
    2 count dtypes at most); the resulting ``cuda.core`` kernel of the device's context,
    the ``LaunchConfig`` and the argument prefix are cached per shape in a `_Plan`, and the
    stream object is cached per raw stream pointer. A call is then a dict lookup, a few
    ``data_ptr()`` reads and ``cuda.core.launch`` per kernel - the same primitive numba's
    ``_Kernel.launch`` ends in, without its per-argument Python loop. Python ints travel as
    intptr-sized parameters, which is why every scalar parameter is int64.

Simulator (NUMBA_ENABLE_CUDASIM=1, for CI without a GPU)
    The same kernel code runs on CPU tensors through zero-copy ``.numpy()`` views (flat,
    indexed with the same element offsets as the pointers). The simulator runs one block at a
    time with a Python thread per GPU thread and has no warp vote, so `launch_constants` picks
    a small block there, and `warp_words` (the only warp intrinsic, ``ballot_sync``) resolves
    to `warp_words_atomic` (shared-memory atomic OR + barriers), whose equivalence to the
    ballot is tested on the GPU (tests/test_numba_backend.py); its barriers are why every
    warp of a block runs the same number of pass-1 steps. ``cuda.popc`` exists in the
    simulator and is only applied to non-negative words. The simulator copies each array
    argument per launch, so simulated ``fused`` ranks from mask bytes, not a uint32 alias.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass

import numpy as np
import torch
from numba import cuda, types

from masks.result import SamplingMask

VARIANTS = ("auto", "split", "fused")

SIMULATED = os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"


def launch_constants(simulated: bool) -> tuple[int, int]:
    """``(BLOCK, UNROLL)``: threads per block and 32-column groups each warp loads per step.

    GPU: 256 threads, 4 loads in flight per thread, overridable for tuning sweeps with
    ``MASKS_NUMBA_LAUNCH="BLOCK,UNROLL"`` (read once at import; UNROLL <= 8 so a warp's mask
    bytes fit its 32 lanes). Simulator: 64 threads (two warps, so the cross-warp paths run),
    since every simulated thread is a Python thread (~0.2 ms per element: keep inputs small).
    """
    if simulated:
        return 64, 4
    block, unroll = os.environ.get("MASKS_NUMBA_LAUNCH", "256,4").split(",")
    return int(block), int(unroll)


BLOCK, UNROLL = launch_constants(SIMULATED)
WARPS = BLOCK // 32
SPAN = 32 * UNROLL
"""Consecutive columns a warp covers per step."""
SEGMENT = BLOCK * UNROLL
"""Columns a block covers per step (`split`: a tile is a multiple of it)."""
TILE_ENTRIES = 1 + WARPS
"""`split` scratch per tile: its count, then its warps' counts."""
VOTE_SLOTS = WARPS * UNROLL  # shared words of `warp_words_atomic`
_TOTALS_START = 2 * BLOCK
_VOTE_START = _TOTALS_START + WARPS
SHARED_WORDS = _VOTE_START + VOTE_SLOTS
SHARED_BYTES = 4 * SHARED_WORDS
"""Dynamic shared memory of every kernel: [0, 2 * BLOCK) block sums, then WARPS warp totals,
then VOTE_SLOTS vote words. Dynamic (one buffer carved by slices) rather than static arrays
because the simulator allocates static shared arrays lazily per call site without a lock, so
two of a block's threads can race and get private copies."""
_RESIDENT_BLOCKS_PER_SM = 1 if SIMULATED else 2048 // BLOCK
_SPLIT_WAVES = 1
"""`split` aims for this many waves of resident tiles (1: at R = 16 a tile streams 3 steps
per warp and each tile's prefix sums 50 tile counts, instead of 2.25 waves of 1-step tiles
that each sum 149; R = 1 gets one step per warp either way)."""
_FUSED_MIN_WAVES = 2
"""`auto` runs `fused` when the rows alone fill this many waves of resident blocks."""

_EXPONENT_MASKS = {
    torch.float32: (torch.int32, 0x7F800000),
    torch.float16: (torch.int16, 0x7C00),
    torch.bfloat16: (torch.int16, 0x7F80),
    torch.float64: (torch.int64, 0x7FF0000000000000),
}
_NUMBA_INTS = {torch.int16: types.int16, torch.int32: types.int32, torch.int64: types.int64}


# ---------------------------------------------------------------------------------------------
# Device helpers shared by every kernel
# ---------------------------------------------------------------------------------------------


@cuda.jit(device=True)
def _kept(logits, offset, exponent):
    """The element's exponent field is not all ones (finite)."""
    return (logits[offset] & exponent) != exponent


@cuda.jit(device=True)
def warp_words_ballot(flags, words, scratch):
    """``words[k]`` bit i = lane i's ``flags[k]`` (warp vote; ``scratch`` unused)."""
    for k in range(UNROLL):
        words[k] = cuda.ballot_sync(0xFFFFFFFF, flags[k])


@cuda.jit(device=True)
def warp_words_atomic(flags, words, scratch):
    """Simulator-safe `warp_words_ballot` through shared ``scratch[VOTE_SLOTS]`` (uint32).

    Block-wide call (three barriers): lanes OR their bit into their warp's slots.
    """
    tid = cuda.threadIdx.x
    lane = tid % 32
    slot = (tid // 32) * UNROLL
    if lane < UNROLL:
        scratch[slot + lane] = 0
    cuda.syncthreads()
    for k in range(UNROLL):
        if flags[k]:
            cuda.atomic.or_(scratch, slot + k, types.uint32(1) << lane)
    cuda.syncthreads()
    for k in range(UNROLL):
        words[k] = scratch[slot + k]
    cuda.syncthreads()


warp_words = warp_words_atomic if SIMULATED else warp_words_ballot


@cuda.jit(device=True)
def _block_sums(first, second, scratch):
    """Sums of ``first`` and ``second`` over the block, returned to every thread.

    Block-wide call; one tree over ``scratch[:2 * BLOCK]`` for both (log2(BLOCK) + 2 barriers).
    """
    tid = cuda.threadIdx.x
    cuda.syncthreads()
    scratch[tid] = first
    scratch[BLOCK + tid] = second
    cuda.syncthreads()
    step = BLOCK // 2
    while step > 0:
        if tid < step:
            scratch[tid] += scratch[tid + step]
            scratch[BLOCK + tid] += scratch[BLOCK + tid + step]
        cuda.syncthreads()
        step //= 2
    return scratch[0], scratch[BLOCK]


@cuda.jit(device=True)
def _load_words(logits, row_offset, col_stride, first_col, vocab, exponent, lane, words, vote):
    """``words[k]``: kept-bits of columns ``first_col + 32k + [0, 32)`` (all loads first)."""
    flags = cuda.local.array(UNROLL, types.boolean)
    for k in range(UNROLL):
        col = first_col + k * 32 + lane
        flags[k] = col < vocab and _kept(logits, row_offset + col * col_stride, exponent)
    warp_words(flags, words, vote)


@cuda.jit(device=True)
def _read_words(mask, mask_words, aligned, mask_row, first_byte, num_bytes, words):
    """``words[k]``: the 4 mask bytes at ``first_byte + 4k`` (little endian), 0 past ``num_bytes``.

    ``aligned`` (mask rows start at multiples of 4 bytes): one 32-bit load per word through
    ``mask_words`` (the same buffer viewed as uint32; ``first_byte`` is a multiple of 16, and
    the bits past ``num_bytes`` in a row's last word are padding zeros).
    """
    for k in range(UNROLL):
        b = first_byte + 4 * k
        word = types.uint32(0)
        if aligned != 0:
            if b < num_bytes:
                word = mask_words[(mask_row + b) // 4]
        else:
            for j in range(4):
                if b + j < num_bytes:
                    word |= types.uint32(mask[mask_row + b + j]) << (8 * j)
        words[k] = word


@cuda.jit(device=True)
def _write_words(mask, mask_row, first_byte, num_bytes, words, lane):
    """Lane l < 4 * UNROLL stores byte l of the warp's words (bit j of byte b = column 8b+j)."""
    b = first_byte + lane
    if lane < 4 * UNROLL and b < num_bytes:
        value = 0
        for k in range(UNROLL):
            if k == lane // 4:
                value = (words[k] >> (8 * (lane % 4))) & 0xFF
        mask[mask_row + b] = value


@cuda.jit(device=True)
def _popc_words(words):
    """Number of set bits in ``words[:UNROLL]``."""
    total = 0
    for k in range(UNROLL):
        total += cuda.popc(words[k])
    return total


@cuda.jit(device=True)
def _combine_warps(value, lane, warp, totals):
    """``(sum of value over warps before this one, sum over all warps)`` (one barrier).

    ``value`` is warp-uniform; lane 0 publishes it in ``totals[warp]``.
    """
    if lane == 0:
        totals[warp] = value
    cuda.syncthreads()
    before = 0
    total = 0
    for w in range(WARPS):
        count = totals[w]
        total += count
        if w < warp:
            before += count
    return before, total


@cuda.jit(device=True)
def _rank_words(ids, id_row, width, rank, first_col, words, lane):
    """Write the ids (< width) of the warp's words of columns ``first_col + [0, SPAN)``.

    ``rank`` is the row's count of kept columns before ``first_col``; returns it plus the
    words' count. A lane only tests its own column of each word (no per-column scan).
    """
    below_lane = (1 << lane) - 1
    col = first_col + lane
    for k in range(UNROLL):
        word = words[k]
        if (word >> lane) & 1 and rank < width:
            slot = rank + cuda.popc(word & below_lane)
            if slot < width:
                ids[id_row + slot] = col + 32 * k
        rank += cuda.popc(word)
    return rank


@cuda.jit(device=True)
def _stream_range(
    logits, row_offset, col_stride, exponent, start, stop, steps, mask, mask_row, lane, words, vote
):  # fmt: skip
    """Warp call: mask bytes of columns ``[start, stop)``; returns the warp's kept count.

    ``steps * SPAN >= stop - start`` is the same for every warp of the block (the simulated
    vote has barriers); ``start`` is a multiple of SPAN so no mask byte is shared by warps.
    """
    stop_byte = (stop + 7) // 8
    count = 0
    for step in range(steps):
        first_col = start + step * SPAN
        _load_words(logits, row_offset, col_stride, first_col, stop, exponent, lane, words, vote)
        _write_words(mask, mask_row, first_col // 8, stop_byte, words, lane)
        count += _popc_words(words)
    return count


@cuda.jit(device=True)
def _rank_range(
    mask, mask_words, aligned, mask_row, start, stop, steps, ids, id_row, width, rank, limit,
    lane, words,
):  # fmt: skip
    """Warp call: write the ids < width of ``[start, stop)`` from its mask words.

    ``rank``: kept columns of the row before ``start``; stops once it reaches ``limit``
    (min of width and the range's last rank + 1), so sparse ranges and full rows end early.
    """
    stop_byte = (stop + 7) // 8
    limit = min(width, limit)
    for step in range(steps):
        if rank >= limit:
            break
        first_col = start + step * SPAN
        _read_words(mask, mask_words, aligned, mask_row, first_col // 8, stop_byte, words)
        rank = _rank_words(ids, id_row, width, rank, first_col, words, lane)


@cuda.jit(device=True)
def _is_inactive(num_sampled, has_num_sampled, row):
    return has_num_sampled != 0 and num_sampled[row] <= 0


# ---------------------------------------------------------------------------------------------
# Kernels
# ---------------------------------------------------------------------------------------------


def _fused_kernel(
    logits, row_stride, col_stride, exponent, num_sampled, has_num_sampled,
    vocab, width, num_bytes, ids, counts, mask, mask_words, aligned,
):  # fmt: skip
    """One block per row, warp w owning columns ``[w * span, (w + 1) * span)``.

    Pass 1 streams the warp's range (mask bytes, warp count; no block barrier on the GPU),
    one barrier combines the warp counts, pass 2 ranks from the mask words the warp wrote
    (1/32 of the fp32 bytes, cache-hot) and stops at ``width`` or at the warp's last kept id.
    """
    row = cuda.blockIdx.x
    tid = cuda.threadIdx.x
    lane = tid % 32
    warp = tid // 32
    totals = cuda.shared.array(0, types.int32)[_TOTALS_START:_VOTE_START]
    vote = cuda.shared.array(0, types.uint32)[_VOTE_START:SHARED_WORDS]
    words = cuda.local.array(UNROLL, types.uint32)
    mask_row = row * num_bytes
    id_row = row * width
    total = 0
    if not _is_inactive(num_sampled, has_num_sampled, row):
        steps = -(-vocab // (WARPS * SPAN))
        start = warp * steps * SPAN
        stop = min(vocab, start + steps * SPAN)
        count = _stream_range(
            logits, row * row_stride, col_stride, exponent, start, stop, steps, mask, mask_row,
            lane, words, vote,
        )  # fmt: skip
        before, total = _combine_warps(count, lane, warp, totals)
        _rank_range(
            mask, mask_words, aligned, mask_row, start, stop, steps, ids, id_row, width,
            before, before + count, lane, words,
        )  # fmt: skip
    else:
        for b in range(tid, num_bytes, BLOCK):
            mask[mask_row + b] = 0
    if tid == 0:
        counts[row] = total
    for slot in range(min(total, width) + tid, width, BLOCK):
        ids[id_row + slot] = -1


def _split_count_kernel(
    logits, row_stride, col_stride, exponent, num_sampled, has_num_sampled,
    vocab, num_bytes, chunk, num_tiles, mask, tile_counts,
):  # fmt: skip
    """Block per (row, chunk), warp w streaming sub-range w of the chunk.

    ``tile_counts[tile, 0]`` = the tile's count, ``tile_counts[tile, 1 + w]`` = warp w's
    (``TILE_ENTRIES`` per tile); one barrier, after the streaming loop.
    """
    tile_id = cuda.blockIdx.x
    row = tile_id // num_tiles
    tile = tile_id - row * num_tiles
    tid = cuda.threadIdx.x
    lane = tid % 32
    warp = tid // 32
    totals = cuda.shared.array(0, types.int32)[_TOTALS_START:_VOTE_START]
    vote = cuda.shared.array(0, types.uint32)[_VOTE_START:SHARED_WORDS]
    words = cuda.local.array(UNROLL, types.uint32)
    mask_row = row * num_bytes
    count = 0
    if _is_inactive(num_sampled, has_num_sampled, row):
        start = tile * chunk
        for b in range(start // 8 + tid, min(num_bytes, (start + chunk) // 8), BLOCK):
            mask[mask_row + b] = 0
    else:
        steps = chunk // SEGMENT
        start = tile * chunk + warp * steps * SPAN
        stop = min(vocab, start + steps * SPAN)
        count = _stream_range(
            logits, row * row_stride, col_stride, exponent, start, stop, steps, mask, mask_row,
            lane, words, vote,
        )  # fmt: skip
    entry = tile_id * TILE_ENTRIES
    if lane == 0:
        tile_counts[entry + 1 + warp] = count
    total = _combine_warps(count, lane, warp, totals)[1]
    if tid == 0:
        tile_counts[entry] = total


def _split_rank_kernel(
    vocab, width, num_bytes, chunk, num_tiles, mask, mask_words, aligned, tile_counts, ids,
    counts,
):  # fmt: skip
    """Block per (row, chunk): prefix of the tile counts, count, padding, ranked ids."""
    tile_id = cuda.blockIdx.x
    row = tile_id // num_tiles
    tile = tile_id - row * num_tiles
    tid = cuda.threadIdx.x
    lane = tid % 32
    warp = tid // 32
    scratch = cuda.shared.array(0, types.int32)[:_TOTALS_START]
    words = cuda.local.array(UNROLL, types.uint32)
    first_tile = row * num_tiles
    before = 0
    total = 0
    for t in range(tid, num_tiles, BLOCK):
        count = tile_counts[(first_tile + t) * TILE_ENTRIES]
        total += count
        if t < tile:
            before += count
    before, total = _block_sums(before, total, scratch)
    id_row = row * width
    if tile == 0 and tid == 0:
        counts[row] = total
    for slot in range(min(total, width) + tile * BLOCK + tid, width, num_tiles * BLOCK):
        ids[id_row + slot] = -1
    entry = tile_id * TILE_ENTRIES + 1
    for w in range(warp):
        before += tile_counts[entry + w]
    steps = chunk // SEGMENT
    start = tile * chunk + warp * steps * SPAN
    _rank_range(
        mask, mask_words, aligned, row * num_bytes, start, min(vocab, start + steps * SPAN),
        steps, ids, id_row, width, before, before + tile_counts[entry + warp], lane, words,
    )  # fmt: skip


_fused = cuda.jit(_fused_kernel)
_split_count = cuda.jit(_split_count_kernel)
_split_rank = cuda.jit(_split_rank_kernel)


def _signatures(int_type, count_type):
    """Explicit signatures of the three kernels for one logits int width / counts dtype."""
    p = types.CPointer
    i64 = types.int64
    ids, counts, mask = p(types.int32), p(types.int32), p(types.uint8)
    masks = (mask, p(types.uint32), i64)  # bytes, the same bytes as words, words usable
    head = (p(int_type), i64, i64, i64, p(count_type), i64)
    tiles = (i64, i64, i64, i64, i64)
    return {
        "fused": types.void(*head, i64, i64, i64, ids, counts, *masks),
        "split_count": types.void(*head, i64, i64, i64, i64, mask, p(types.int32)),
        "split_rank": types.void(*tiles, *masks, p(types.int32), ids, counts),
    }


_DISPATCHERS = {"fused": _fused, "split_count": _split_count, "split_rank": _split_rank}


# ---------------------------------------------------------------------------------------------
# Launch geometry (same function on the GPU and in the simulator)
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Geometry:
    """How one shape is launched: ``fused`` (grid = rows) or ``split`` (grid = rows * tiles)."""

    fused: bool
    chunk: int
    num_tiles: int


def geometry(num_reqs: int, vocab: int, variant: str, sm_count: int) -> Geometry:
    """Pick the variant for ``auto`` and the split chunk (a multiple of SEGMENT) by shape."""
    wave = sm_count * _RESIDENT_BLOCKS_PER_SM
    if variant == "fused" or (variant == "auto" and num_reqs >= _FUSED_MIN_WAVES * wave):
        return Geometry(True, vocab, 1)
    tiles_per_row = max(1, -(-_SPLIT_WAVES * wave // num_reqs))
    segments = -(-vocab // SEGMENT)
    chunk = SEGMENT * max(1, -(-segments // tiles_per_row))
    return Geometry(False, chunk, -(-vocab // chunk))


# ---------------------------------------------------------------------------------------------
# Backend interface
# ---------------------------------------------------------------------------------------------


def unavailable_reason(device: torch.device) -> str | None:
    if SIMULATED:
        if device.type != "cpu":
            return "the Numba CUDA simulator (NUMBA_ENABLE_CUDASIM=1) runs on CPU tensors only"
        return None
    if device.type != "cuda":
        return f"Numba CUDA kernels need CUDA tensors, got device {device}"
    if not cuda.is_available():
        return "Numba sees no CUDA GPU (driver or device missing)"
    return None


def compact(
    logits: torch.Tensor,
    num_sampled_tokens: torch.Tensor | None,
    out: SamplingMask,
    variant: str = VARIANTS[0],
) -> None:
    if SIMULATED:
        _compact_simulated(logits, num_sampled_tokens, out, variant)
        return
    device = logits.device.index
    if device is None:
        device = torch.cuda.current_device()
    count_dtype = None if num_sampled_tokens is None else num_sampled_tokens.dtype
    key = (device, logits.dtype, count_dtype, *logits.shape, *logits.stride(), out.width, variant)
    plan = _plans.get(key)
    if plan is None:
        plan = _make_plan(key, logits, num_sampled_tokens, out, variant)
    plan.run(logits, num_sampled_tokens, out)


# ---------------------------------------------------------------------------------------------
# GPU dispatch
# ---------------------------------------------------------------------------------------------

_lock = threading.RLock()
_kernels: dict[tuple, object] = {}
_sm_counts: dict[int, int] = {}
_streams: dict[tuple[int, int], object] = {}
_plans: dict[tuple, _Plan] = {}
_thread = threading.local()

try:  # the raw stream pointer without building a torch.cuda.Stream object (~1 us less)
    _raw_stream = torch._C._cuda_getCurrentRawStream
except AttributeError:  # pragma: no cover - older/newer torch

    def _raw_stream(device: int) -> int:
        return torch.cuda.current_stream(device).cuda_stream


def _kernel(name: str, device: int, int_type, count_type):
    """The ``cuda.core`` kernel of ``name`` for these types in ``device``'s context (cached)."""
    key = (name, device, int_type, count_type)
    kernel = _kernels.get(key)
    if kernel is None:
        with _lock:
            kernel = _kernels.get(key)
            if kernel is None:
                with cuda.gpus[device]:
                    compiled = _DISPATCHERS[name].compile(_signatures(int_type, count_type)[name])
                    kernel = compiled._codelibrary.get_cufunc().kernel
                _kernels[key] = kernel
    return kernel


def _stream(device: int):
    """``cuda.core`` stream for torch's current stream on ``device`` (cached per pointer)."""
    pointer = _raw_stream(device)
    stream = _streams.get((device, pointer))
    if stream is None:
        from numba.cuda.cudadrv.driver import _to_core_stream

        with _lock, cuda.gpus[device]:
            stream = _streams.setdefault(
                (device, pointer), _to_core_stream(cuda.external_stream(pointer))
            )
    return stream


def _sm_count(device: int) -> int:
    count = _sm_counts.get(device)
    if count is None:
        count = _sm_counts.setdefault(
            device, torch.cuda.get_device_properties(device).multi_processor_count
        )
    return count


@dataclass
class _Plan:
    """Everything a shape needs except the data pointers and the stream."""

    device: int
    fused: bool
    kernels: tuple
    configs: tuple
    head: tuple
    """(row_stride, col_stride, exponent)"""
    has_counts: int
    vocab: int
    width: int
    num_bytes: int
    chunk: int
    num_tiles: int
    scratch_size: int

    def run(self, logits, num_sampled_tokens, out) -> None:
        device = self.device
        if getattr(_thread, "device", None) != device:
            # cuda.core launches in the calling thread's current context: make sure a thread
            # that never touched the CUDA runtime has the device's primary context (once).
            get_context(device)
            _thread.device = device
        if torch.cuda.current_device() != device:  # multi-GPU: another device is current
            with torch.cuda.device(device):
                self._launch(logits, num_sampled_tokens, out)
        else:
            self._launch(logits, num_sampled_tokens, out)

    def _launch(self, logits, num_sampled_tokens, out) -> None:
        stream = _stream(self.device)
        counts_ptr = 0 if num_sampled_tokens is None else num_sampled_tokens.data_ptr()
        ids, counts, mask = (
            out.token_ids.data_ptr(),
            out.counts.data_ptr(),
            out.packed_mask.data_ptr(),
        )
        aligned = int(self.num_bytes % 4 == 0 and mask % 4 == 0)
        if self.fused:
            _core_launch(
                stream, self.configs[0], self.kernels[0],
                logits.data_ptr(), *self.head, counts_ptr, self.has_counts,
                self.vocab, self.width, self.num_bytes, ids, counts, mask, mask, aligned,
            )  # fmt: skip
            return
        tile_counts = torch.empty(self.scratch_size, dtype=torch.int32, device=logits.device)
        scratch = tile_counts.data_ptr()
        _core_launch(
            stream, self.configs[0], self.kernels[0],
            logits.data_ptr(), *self.head, counts_ptr, self.has_counts,
            self.vocab, self.num_bytes, self.chunk, self.num_tiles, mask, scratch,
        )  # fmt: skip
        _core_launch(
            stream, self.configs[1], self.kernels[1],
            self.vocab, self.width, self.num_bytes, self.chunk, self.num_tiles,
            mask, mask, aligned, scratch, ids, counts,
        )  # fmt: skip


def _make_plan(key, logits, num_sampled_tokens, out, variant) -> _Plan:
    from cuda.core import LaunchConfig, launch
    from numba.cuda.cudadrv.devices import get_context as numba_context

    global _core_launch, get_context
    get_context = numba_context
    _core_launch = launch
    device = key[0]
    int_dtype, exponent = _EXPONENT_MASKS[logits.dtype]
    int_type = _NUMBA_INTS[int_dtype]
    count_type = (
        types.int32 if num_sampled_tokens is None else _NUMBA_INTS[num_sampled_tokens.dtype]
    )
    num_reqs, vocab = logits.shape
    shape = geometry(num_reqs, vocab, variant, _sm_count(device))
    names = ("fused",) if shape.fused else ("split_count", "split_rank")
    grid = num_reqs * shape.num_tiles
    plan = _Plan(
        device=device,
        fused=shape.fused,
        kernels=tuple(_kernel(name, device, int_type, count_type) for name in names),
        configs=tuple(LaunchConfig(grid=grid, block=BLOCK, shmem_size=SHARED_BYTES) for _ in names),
        head=(logits.stride(0), logits.stride(1), exponent),
        has_counts=int(num_sampled_tokens is not None),
        vocab=vocab,
        width=out.width,
        num_bytes=out.packed_mask.shape[1],
        chunk=shape.chunk,
        num_tiles=shape.num_tiles,
        scratch_size=grid * TILE_ENTRIES,
    )
    with _lock:
        return _plans.setdefault(key, plan)


# Bound by the first `_make_plan` (`import masks.backends.numba` stays free of cuda.core):
_core_launch = None  # cuda.core.launch
get_context = None  # numba.cuda.cudadrv.devices.get_context


# ---------------------------------------------------------------------------------------------
# Simulator dispatch (CPU tensors, zero-copy NumPy views, same kernels)
# ---------------------------------------------------------------------------------------------


def _flat(tensor: torch.Tensor):
    """A 1-D NumPy view of the storage span of ``tensor`` (index = element offset)."""
    span = 1 + sum(
        (size - 1) * stride for size, stride in zip(tensor.shape, tensor.stride(), strict=True)
    )
    return torch.as_strided(tensor, (span,), (1,), tensor.storage_offset()).numpy()


def _compact_simulated(logits, num_sampled_tokens, out, variant) -> None:
    int_dtype, exponent = _EXPONENT_MASKS[logits.dtype]
    bits = _flat(logits.view(int_dtype))
    num_reqs, vocab = logits.shape
    row_stride, col_stride = logits.stride()
    if num_sampled_tokens is None:
        counts_in, has_counts = torch.zeros(1, dtype=torch.int32).numpy(), 0
    else:
        counts_in, has_counts = _flat(num_sampled_tokens), 1
    ids = out.token_ids.view(-1).numpy()
    counts = out.counts.numpy()
    mask = out.packed_mask.view(-1).numpy()
    width, num_bytes = out.width, out.packed_mask.shape[1]
    shape = geometry(num_reqs, vocab, variant, sm_count=4)  # a few tiles per row, as on a GPU
    # The simulator copies each array argument in and out of a launch, so a uint32 view of the
    # mask does not see the same launch's byte stores: `fused` reads bytes here (the word path
    # is exercised by `split`, whose ranking is a second launch, and by `fused` on a GPU).
    aligned = int(not shape.fused and num_bytes % 4 == 0 and mask.ctypes.data % 4 == 0)
    masks = (mask, mask.view(np.uint32) if aligned else np.zeros(1, np.uint32), aligned)
    head = (bits, row_stride, col_stride, exponent, counts_in, has_counts)
    if shape.fused:
        _fused[num_reqs, BLOCK, 0, SHARED_BYTES](
            *head, vocab, width, num_bytes, ids, counts, *masks
        )
        return
    grid = num_reqs * shape.num_tiles
    tile_counts = np.empty(grid * TILE_ENTRIES, dtype=np.int32)
    tiles = (vocab, num_bytes, shape.chunk, shape.num_tiles)
    _split_count[grid, BLOCK, 0, SHARED_BYTES](*head, *tiles, mask, tile_counts)
    _split_rank[grid, BLOCK, 0, SHARED_BYTES](
        vocab, width, *tiles[1:], *masks, tile_counts, ids, counts
    )
