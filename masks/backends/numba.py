"""Numba CUDA backend: the warp-segment design of ``compact.cu`` written with `numba.cuda`.

The measurements behind its choices are in docs/design.md, Numba backend.

Kernels (the layout of masks/backends/compact.cu, described in cupy.py's docstring)
    A row is cut into warp SEGMENTS of 256 columns (32 mask bytes); lane l owns mask byte l of
    a segment (columns 8l..8l+7), so a mask store is one coalesced byte per lane. Each warp
    owns a contiguous range of segments (``fused``: 1/warps of the row; ``split``: a *unit* of
    ``segs_per_unit`` segments) and works in two passes:
    1. Stream the range with many bytes in flight: groups of LOADS / itemsize segments, all
       LOADS 8-byte words per lane loaded before any is tested, by 16-byte streaming loads
       (`load_pair_streaming`) when the row is contiguous with a 16-byte aligned start and
       stride; the rest (row ends, short units, strided rows: any strides, 64-bit offsets) a
       segment at a time, the next one's loads issued before the current one is tested.
       Elements are tested on their bit
       patterns (kept = exponent field not all ones); the lane stores its byte and adds its
       ``popc``: no vote, shuffle or barrier (but ``fused``'s ranking).
    2. Once the counts are combined (``fused``: one barrier; ``split``: one barrier and the
       look-back), the warp ranks its range from the mask it wrote (1/32 of the fp32 bytes,
       cache-hot): `warp_scan` of the lanes' mask-word popcounts, then only set bits are
       visited, and the warp stops once its ranks reach W or its last kept id.
    ``fused`` (a block of FUSED_THREADS per row) ranks during pass 1 instead, so a row's ids
    need not wait for an L2 round trip after its last load (pass 2 was the tail of a wave of
    rows): warp 0 writes its ids into the row, the others stage up to `STAGED_IDS` in shared
    memory and copy them into place after the barrier; only a warp that needs more ids than
    it staged runs pass 2. Ranks and slots (< W) are uint32 throughout, addresses 64-bit: in
    numba's default int64 the ranking tripled pass 1's instructions per group.
    ``split`` (few rows: R = 1 must fill the GPU) runs tiles of SPLIT_THREADS / 32 units, grid
    = rows x tiles (`split_tiling`), in one launch. Thread 0 of a block takes a ticket ``t =
    atomicAdd(state[0], 1)``; the block works on tile t (not ``blockIdx``), publishes
    ``flag[t] = count + 1`` (0: not yet) right after pass 1, then sums the flags of the row's
    tiles before t, read by atomics until non-zero (a decoupled look-back; a tile that is not
    the row's last stops once the sum reaches W, one with no kept column needs none). A
    ticket is taken by a running block, so every tile waited on belongs to a block that has
    started and publishes without waiting: no deadlock under any scheduling, no co-residency
    assumed, no wait chains. The row's last tile writes counts[r] and the -1 padding. The
    state (ticket, done counter, a flag per tile) is the stream's zeroed scratch
    (`masks.backends.scratch`): the block whose ``atomicAdd(state[1], 1)`` (after its last
    flag read) returns ``tiles - 1`` zeroes it once it has ranked, so no call pays a memset
    and no block waits for the counter.
    ``auto`` picks ``fused`` once the rows fill `tiling.FUSED_MIN_WAVES` waves of resident
    fused blocks (SM count read once per device). Kernels are generated per element size
    (`_dtype_kernels`: compile-time unroll and word layout); the exponent is a parameter, so
    fp16 and bf16 share kernels.

Dispatch (host cost is most of the time at R = 1, so it is designed, not defaulted)
    Kernels take raw pointers (``types.CPointer``, passed as plain integers: no device-array
    wrapper or per-array marshalling) and int64 scalars (Python ints travel as intptr-sized
    parameters). Each signature is compiled explicitly, once, on first use, under a lock (no
    GPU needed: tests/test_numba_backend.py compiles them all to PTX); the ``cuda.core``
    kernel, ``LaunchConfig`` and argument prefix are cached per shape in a `_Plan` and the
    stream per raw pointer, so a call is a dict lookup, a few ``data_ptr()`` reads and one
    ``cuda.core.launch`` (where numba's ``_Kernel.launch`` ends, without its per-argument
    loop). ``split``'s scratch is held until the launch is queued; a CUDA graph being captured
    gets a zeroed buffer of its own.

Simulator (NUMBA_ENABLE_CUDASIM=1, for CI without a GPU)
    The same kernels run on CPU tensors through zero-copy flat ``.numpy()`` views indexed with
    the pointers' element offsets. The simulator runs a block at a time, a Python thread per GPU
    thread (slow: `launch_constants` picks blocks of two warps, so the cross-warp paths run).
    * It has no votes, shuffles, warp barriers or libdevice: `warp_scan`, `warp_ballot`,
      `warp_sum` and `byte_perm` resolve to ``_shared`` forms (shared slots and `sync_warp`
      barriers) and shifts, each tested equal to the hardware one on the GPU
      (tests/test_numba_backend.py).
    * A warp's 32 lanes make the same warp calls (warp-uniform control flow; warps may differ).
    * The simulated block barrier releases once every live thread waits at any block barrier,
      so every cross-warp barrier (``fused``: one; ``split``: two and one per block-uniform
      look-back round; the GPU code has no others) has as many block barriers before it in
      every warp.
    * ``cuda.popc`` and ``cuda.ffs`` see unsigned words only.
    * The simulator copies each NumPy argument in and out of a launch, so the mask goes in as
      one simulated device array and its uint32 view (`_compact_simulated`): the byte, word and
      16-byte mask paths all run there, the last through `load_quad_plain`.
    * GPU only, covered by tests/test_numba_backend.py there: spinning look-back flags
      (simulated blocks run in ``blockIdx`` order) and the hardware load and warp forms.
"""

from __future__ import annotations

import math
import os
import threading
import warnings
from dataclasses import dataclass

import numpy as np
import torch
from llvmlite import ir
from numba import cuda, types
from numba.cuda.extending import intrinsic

from masks.backends import scratch as stream_scratch
from masks.backends.cuda_state import current_device, raw_stream, sm_count
from masks.backends.plans import call_shape, remember
from masks.backends.tiling import (
    EMULATED_SM_COUNT,
    RESIDENT_THREADS,
    SEGMENT,
    Geometry,
    geometry,
    wide_rows,
)
from masks.result import SamplingMask

VARIANTS = ("auto", "split", "fused")

SIMULATED = os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"
if SIMULATED:  # the simulator computes with NumPy scalars, which warn where the GPU wraps
    # (`kept_in_words`' multiply moves bits past 32 on purpose); only this module's warnings
    warnings.filterwarnings(
        "ignore", "overflow encountered", RuntimeWarning, module=r"masks\.backends\.numba$"
    )


def launch_constants(simulated: bool) -> tuple[int, int, int]:
    """``(FUSED_THREADS, SPLIT_THREADS, LOADS)``: block sizes and 8-byte words per lane in flight.

    GPU: 512 threads per fused block, 128 per split tile (the CuPy kernels' tuning on the
    H200) and 16 words (128 bytes per lane), overridable for tuning sweeps with
    ``MASKS_NUMBA_LAUNCH="FUSED,SPLIT,LOADS"`` (read once at import; LOADS 8 or 16).
    Simulator: two warps per block (so the cross-warp paths run), since every simulated
    thread is a Python thread (~0.2 ms per element: keep inputs small).
    """
    if simulated:
        return 64, 64, 16
    fused, split, loads = map(int, os.environ.get("MASKS_NUMBA_LAUNCH", "512,128,16").split(","))
    for threads in (fused, split):  # whole warps, at most 32 (`_warp_prefix`: a lane per warp)
        if threads % 32 or not 32 <= threads <= 1024:
            raise ValueError(
                f"MASKS_NUMBA_LAUNCH: block sizes are 32..1024 whole warps, got {threads}"
            )
    if loads not in (8, 16):  # groups of 1-8 segments for every dtype (`_rank_bytes`)
        raise ValueError(f"MASKS_NUMBA_LAUNCH: LOADS is 8 or 16, got {loads}")
    return fused, split, loads


FUSED_THREADS, SPLIT_THREADS, LOADS = launch_constants(SIMULATED)
SPLIT_TILES_PER_SM = 2
"""`split`: the longest unit (`masks.backends.tiling`) that leaves at least this many tiles per
SM: of 2, 4 and 8, the fastest at R = 4 and 16 and level at R = 1 (measurements:
docs/design.md, Numba backend)."""
FUSED_LANE_WORDS = 4
"""Pass 2 of ``fused``: 32-bit mask words per lane and step (``split``: 1)."""
RANK_STEPS = 1 if SIMULATED else 4
"""Pass 2: steps a warp loads before ranking the first (GPU: a fused range of 16384 columns in
one load round trip; simulator: one, so that small rows reach the next batch)."""
RANK_WORDS = FUSED_LANE_WORDS * RANK_STEPS
"""Pass 2: 32-bit mask words a lane holds per batch of steps."""
SCAN_SLOTS = 32 if SIMULATED else 0
"""Shared words per warp of `warp_scan`, `warp_ballot` and `warp_sum` (only their
simulator-safe forms use them)."""
STAGED_IDS = 256
"""``fused``: ids a warp other than the first ranks into shared memory during pass 1 (CUDA C's
``kStagedIds``); a warp that needs more ranks them from the mask after the barrier."""
REGROUP_BYTES = 8 * 32
"""``fused``: shared bytes per warp through which `_rank_bytes` regroups a group's mask bytes
(8 segments at most; CUDA C's ``kMaxGroupBytes``)."""

_FLOATS = {  # dtype: (itemsize, exponent field)
    torch.float32: (4, 0x7F800000),
    torch.float16: (2, 0x7C00),
    torch.bfloat16: (2, 0x7F80),
    torch.float64: (8, 0x7FF0000000000000),
}
_TORCH_INTS = {2: torch.int16, 4: torch.int32, 8: torch.int64}
_NUMPY_UINTS = {2: np.uint16, 4: np.uint32, 8: np.uint64}
_NUMBA_UINTS = {2: types.uint16, 4: types.uint32, 8: types.uint64}
_NUMBA_COUNTS = {torch.int32: types.int32, torch.int64: types.int64}
_FULL = 0xFFFFFFFF


def regroup_offset(warps: int) -> int:
    """``fused``: the byte offset in dynamic shared memory of the warps' `REGROUP_BYTES` each,
    after 2 words per warp (counts), the scan slots and the staged ids (8-byte aligned)."""
    return -(-4 * (warps * (2 + SCAN_SLOTS) + STAGED_IDS * (warps - 1)) // 8) * 8


def shared_bytes(threads: int, staged: bool = False) -> int:
    """Dynamic shared memory of a kernel: 2 words per warp (counts), then scan slots, then
    (``staged``: ``fused``) `STAGED_IDS` ids for each warp but the first and `REGROUP_BYTES` for
    each warp.

    Dynamic (one buffer carved by slices) rather than static arrays because the simulator
    allocates static shared arrays lazily per call site without a lock, so two of a block's
    threads can race and get private copies.
    """
    warps = threads // 32
    if staged:
        return regroup_offset(warps) + REGROUP_BYTES * warps
    return 4 * warps * (2 + SCAN_SLOTS)


def _jit_kernel(function, threads: int):
    """``cuda.jit`` with launch bounds asking for 1024 / threads resident blocks per SM."""
    if SIMULATED:  # the simulator's jit takes no launch bounds
        return cuda.jit(function)
    return cuda.jit(function, launch_bounds=(threads, max(1, RESIDENT_THREADS // threads)))


# ---------------------------------------------------------------------------------------------
# Warp-level helpers shared by every kernel
# ---------------------------------------------------------------------------------------------


@cuda.jit(device=True)
def warp_scan_shuffle(value, lane, scratch):
    """``(sum of value over lanes < lane, sum over the warp)`` (shuffles; ``scratch`` unused).

    ``value`` fits int32 (a lane's mask-word popcounts, a unit's or a row's count).
    """
    inclusive = types.int32(value)
    delta = 1
    while delta < 32:
        other = cuda.shfl_up_sync(_FULL, inclusive, delta)
        if lane >= delta:
            inclusive = types.int32(inclusive + other)
        delta *= 2
    return inclusive - types.int32(value), cuda.shfl_sync(_FULL, inclusive, 31)


if SIMULATED:
    _warp_barriers_lock = threading.Lock()

    def sync_warp():
        """The simulator's ``__syncwarp()``, which it lacks: a barrier of the calling thread's
        warp (a Python thread per GPU thread; the barriers live on the launch's block manager).
        """
        thread = threading.current_thread()
        try:  # numba-cuda's simulator internals (0.30): its thread and block manager
            manager, block, linear = thread._manager, thread.blockIdx, thread.thread_id
            block_threads = math.prod(manager._block_dim)
        except AttributeError as error:
            raise RuntimeError(
                "masks' simulated warp barrier needs numba-cuda's simulator thread attributes "
                f"(_manager, blockIdx, thread_id, _block_dim): {error}"
            ) from error
        key = (tuple(block), linear // 32)
        with _warp_barriers_lock:
            barriers = manager.__dict__.setdefault("_masks_warp_barriers", {})
            barrier = barriers.get(key)
            if barrier is None:
                lanes = min(32, block_threads - 32 * key[1])
                barrier = barriers[key] = threading.Barrier(lanes)
        barrier.wait(timeout=120)  # a lane that raised never arrives: fail rather than hang

else:

    @cuda.jit(device=True)
    def sync_warp():
        """``__syncwarp()`` over the whole warp."""
        cuda.syncwarp(_FULL)


@cuda.jit(device=True)
def warp_scan_shared(value, lane, scratch):
    """Simulator-safe `warp_scan_shuffle` through the warp's 32 shared ``scratch`` slots.

    Two warp barriers: all lanes of the warp must call it equally often (warp-uniform control
    flow); other warps need not.
    """
    scratch[lane] = value
    sync_warp()
    before = 0
    total = 0
    for other in range(32):
        total += scratch[other]
        if other < lane:
            before += scratch[other]
    sync_warp()  # every lane has read the slots before the next call writes them
    return before, total


@cuda.jit(device=True)
def warp_ballot_shuffle(predicate, lane, scratch):
    """Bit l set iff ``predicate`` holds in lane l (``__ballot_sync``; ``scratch`` unused)."""
    return types.uint32(cuda.ballot_sync(_FULL, predicate))


@cuda.jit(device=True)
def warp_ballot_shared(predicate, lane, scratch):
    """Simulator-safe `warp_ballot_shuffle` through the warp's shared ``scratch`` slots."""
    scratch[lane] = 1 if predicate else 0
    sync_warp()
    lanes = 0
    for other in range(32):
        if scratch[other] != 0:
            lanes |= 1 << other
    sync_warp()
    return types.uint32(lanes)


@intrinsic
def warp_sum_redux(typingctx, value, lane, scratch):
    """The sum of an int32 ``value`` over the warp, in every lane: one ``redux.sync.add.s32``
    (sm_80 and later; CUDA C's ``__reduce_add_sync``), where a shuffle scan's total is a chain
    of five shuffles (``lane``, ``scratch`` unused)."""

    def codegen(context, builder, signature, args):
        word = context.cast(builder, args[0], signature.args[0], types.int32)
        redux = ir.InlineAsm(
            ir.FunctionType(ir.IntType(32), [ir.IntType(32)]),
            "redux.sync.add.s32 $0, $1, 0xffffffff;",
            "=r,r",
            side_effect=True,  # a warp collective: never dropped or merged
        )
        return builder.call(redux, [word])

    return types.int32(value, lane, scratch), codegen


@cuda.jit(device=True)
def warp_sum_shared(value, lane, scratch):
    """Simulator-safe `warp_sum_redux`: `warp_scan_shared`'s total (two warp barriers)."""
    return warp_scan_shared(value, lane, scratch)[1]


if SIMULATED:
    warp_scan, warp_ballot, warp_sum = warp_scan_shared, warp_ballot_shared, warp_sum_shared
else:
    warp_scan, warp_ballot, warp_sum = warp_scan_shuffle, warp_ballot_shuffle, warp_sum_redux


def _vector_load(instruction: str, element: types.Integer, count: int):
    """An intrinsic ``(words, index) -> (words[index], ..., words[index + count - 1])`` by one
    PTX vector load ``instruction`` (``words`` a pointer or 1-D array of ``element``, ``index``
    a multiple of ``count`` from a ``count * element`` aligned start): numba has no vector
    loads."""
    loaded_type = types.UniTuple(element, count)
    bits = element.bitwidth
    assert bits in (32, 64), "the output constraints below are for 32- and 64-bit elements"
    operands = ", ".join(f"${i}" for i in range(count))
    constraints = ",".join(["=l" if bits == 64 else "=r"] * count + ["l"])

    def load(typingctx, words, index):
        def codegen(context, builder, signature, args):
            pointer, offset = args
            if isinstance(words, types.Array):  # the kernels pass pointers; the GPU test arrays
                pointer = context.make_array(words)(context, builder, pointer).data
            address = builder.gep(pointer, [offset])
            word = ir.IntType(bits)
            asm = ir.InlineAsm(
                ir.FunctionType(ir.LiteralStructType([word] * count), [address.type]),
                f"{instruction} {{{operands}}}, [${count}];",
                constraints,
            )
            loaded = builder.call(asm, [address])
            parts = [builder.extract_value(loaded, i) for i in range(count)]
            return context.make_tuple(builder, loaded_type, parts)

        return loaded_type(words, index), codegen

    load.__name__ = f"load_{count}x{bits}"  # names the intrinsic in numba's typing errors
    return intrinsic(load)


load_pair_streaming = _vector_load("ld.global.cs.v2.u64", types.uint64, 2)
"""``(words[index], words[index + 1])`` of uint64 words by one 16-byte streaming load: 8-byte
loads touch every sector twice as often as CUDA C's 16-byte vectors. The evict-first hint is
CUDA C's ``__ldcs`` (pass 1 reads the logits once)."""

load_quad_vector = _vector_load("ld.global.v4.u32", types.uint32, 4)
"""Four uint32 mask words by one 16-byte load (pass 2 of ``fused``; CUDA C's ``uint4`` load in
``mask_words<4>``): one load where word loads take four."""


@cuda.jit(device=True)
def load_pair_plain(words, index):
    """Simulator-safe `load_pair_streaming`: two plain loads (tested equal on the GPU). The
    assertion (checked by the simulator, compiled out on the GPU) keeps the simulated kernels
    to the 16-byte alignment the GPU load needs."""
    assert index % 2 == 0, "a 16-byte load at an odd word"
    return words[index], words[index + 1]


load_pair = load_pair_plain if SIMULATED else load_pair_streaming


@cuda.jit(device=True)
def load_quad_plain(words, index):
    """Simulator-safe `load_quad_vector`: four plain loads (tested equal on the GPU), held to the
    16-byte alignment the GPU load needs by the same kind of assertion as `load_pair_plain`."""
    assert index % 4 == 0, "a 16-byte load at a word that is not a multiple of 4"
    return words[index], words[index + 1], words[index + 2], words[index + 3]


load_quad = load_quad_plain if SIMULATED else load_quad_vector


@cuda.jit(device=True)
def byte_perm_prmt(x, y, selector):
    """``__byte_perm(x, y, selector)`` of uint32 words: byte k of the result is byte ``selector``
    nibble k (0-7) of the eight bytes ``y:x``; one PRMT instruction (libdevice)."""
    return types.uint32(
        cuda.libdevice.byte_perm(types.int32(x), types.int32(y), types.int32(selector))
    )


@cuda.jit(device=True)
def byte_perm_shifts(x, y, selector):
    """Simulator-safe `byte_perm_prmt` (the simulator has no libdevice; tested equal on the
    GPU)."""
    both = types.uint64((types.uint64(y) << types.uint64(32)) | types.uint64(x))
    permuted = types.uint32(0)
    for k in range(4):
        index = types.uint64((selector >> (4 * k)) & 7)
        byte = types.uint32((both >> (types.uint64(8) * index)) & types.uint64(0xFF))
        permuted = types.uint32(permuted | (byte << types.uint32(8 * k)))
    return permuted


byte_perm = byte_perm_shifts if SIMULATED else byte_perm_prmt


@cuda.jit(device=True)
def _is_inactive(num_sampled, has_num_sampled, num_sampled_stride, row):
    return has_num_sampled != 0 and num_sampled[row * num_sampled_stride] <= 0


@cuda.jit(device=True)
def _zero_bytes(mask, begin, end, first, step):
    for b in range(begin + first, end, step):
        mask[b] = 0


@cuda.jit(device=True)
def _fill_ids(ids, id_row, begin, end, first, step):
    """-1 in the row's slots ``begin + first``, then every ``step``-th, below ``end`` (< 2**32).

    The slot runs in 32 bits: a ``range`` of numba's int64 costs a trip-count setup and 64-bit
    steps in ``fused``'s tail after its barrier (measurements: docs/design.md, Numba backend).
    """
    slot = types.uint32(begin + first)
    stop = types.uint32(end)
    while slot < stop:
        ids[id_row + slot] = -1
        slot = types.uint32(slot + types.uint32(step))


@cuda.jit(device=True)
def _mask_word(mask, mask_words, mask_align, mask_row, b, end):
    """Bytes ``[b, b + 4)`` of the row's mask as a little-endian word; 0 from byte ``end``.

    ``mask_align`` >= 4 (mask rows start at multiples of 4 bytes; ``b`` is one): one load
    through ``mask_words``, the same buffer viewed as uint32.
    """
    if mask_align >= 4 and b + 4 <= end:
        return mask_words[(mask_row + b) // 4]
    word = types.uint32(0)
    for k in range(4):
        if b + k < end:
            byte = types.uint32(mask[mask_row + b + k])
            word = types.uint32(word | (byte << types.uint32(8 * k)))
    return word


if SIMULATED:

    def pointer_at(base, offset):
        """Simulator-safe `pointer_at`: the array from element ``offset`` (a view)."""
        return base[offset:]

else:

    @intrinsic
    def pointer_at(typingctx, base, offset):
        """``&base[offset]`` (``base`` a pointer or an array, such as a shared one) as a
        generic pointer: ids are written through one 32-bit-indexed pointer, to the row's slots
        or (`fused`'s pass 1) to shared memory (CUDA C's ``IdSink``), so each loop is compiled
        once."""
        result = types.CPointer(base.dtype)

        def codegen(context, builder, signature, args):
            pointer, at = args
            if isinstance(base, types.Array):
                pointer = context.make_array(base)(context, builder, pointer).data
            at = context.cast(builder, at, signature.args[1], types.intp)
            return builder.gep(pointer, [at])

        return result(base, offset), codegen


@cuda.jit(device=True)
def _emit_ids(word, rank, col, cap, sink):
    """Ids ``col + i`` of the set bits i of ``word`` to ``sink[rank]``, ``sink[rank + 1]``, ...
    below ``cap`` (all uint32: numba widens Python ints to int64, and 64-bit ranks tripled
    ``fused``'s ranking loop)."""
    while word != types.uint32(0) and rank < cap:
        sink[rank] = types.int32(col + types.uint32(cuda.ffs(word)) - types.uint32(1))
        rank = types.uint32(rank + types.uint32(1))
        word = types.uint32(word & types.uint32(word - types.uint32(1)))


@cuda.jit(device=True)
def _fill_consecutive(rank, col, cols, cap, sink, lane):
    """Warp call for a run of kept columns: ``sink[rank + i] = col + i`` for i < ``cols`` and
    rank + i < cap (rank < cap), one coalesced store per lane and 32 slots (a full step would
    otherwise cost cols / 32 scattered stores per lane). A loop bounded once: testing the bound
    per store made `split`'s full rows slower (measurements: docs/design.md, Numba backend)."""
    for i in range(lane, min(cols, cap - rank), 32):
        sink[rank + i] = col + i


def _rank_bytes(count: int):
    """``rank_bytes(bits, seg_col, lane, sink, cap, ranked, scan, regroup, at)``, CUDA C's
    ``rank_bytes<count>`` (a compile-time ``count``): warp call of ``fused``'s pass 1 ranking
    this lane's mask bytes ``bits[:count]`` (uint32) of the ``count`` segments from column
    ``seg_col`` in column order, writing their ids to ``sink[rank]`` for ranks < ``cap``;
    ``ranked`` = the warp's kept columns before them (warp-uniform). Returns ``ranked`` plus
    the group's kept columns (only values < cap matter). All arithmetic is uint32, as in
    `_emit_ids`.

    A group with no kept column costs one ballot. Otherwise (``count`` > 1) its bytes go
    through the warp's shared bytes from byte ``at`` of ``regroup`` (a tuple of uint8, uint32
    and uint64 views of the same memory) in mask order, so that lane l reads bytes ``count *
    l ..``: ``8 * count`` consecutive columns (a single segment's lane already holds its 8),
    ranked by one `warp_scan` of the lanes' popcounts and written bit by bit (a group whose
    columns are all kept as consecutive ids with coalesced stores).
    """
    if count not in (1, 2, 4, 8):  # a lane's bytes are read as one 8-, 16-, 32- or 64-bit word
        raise ValueError(f"groups of 1, 2, 4 or 8 segments, not {count}")
    run = types.uint32(count * SEGMENT)
    lane_cols = types.uint32(8 * count)

    @cuda.jit(device=True)
    def rank_bytes(bits, seg_col, lane, sink, cap, ranked, scan, regroup, at):
        if ranked >= cap:
            return ranked
        any_kept = types.uint32(0)
        for u in range(count):
            any_kept = types.uint32(any_kept | bits[u])
        if warp_ballot(any_kept != types.uint32(0), lane, scan) == types.uint32(0):
            return ranked
        high = types.uint32(0)
        if count == 1:
            low = bits[0]
        else:
            bytes8, bytes32, bytes64 = regroup
            for u in range(count):  # unsigned indices: no negative-index wraparound code
                bytes8[types.uint32(at + 32 * u + lane)] = types.uint8(bits[u])
            sync_warp()
            if count == 8:
                word = bytes64[types.uint32((at >> 3) + lane)]
                low = types.uint32(word & types.uint64(0xFFFFFFFF))
                high = types.uint32(word >> types.uint64(32))
            elif count == 4:
                low = bytes32[types.uint32((at >> 2) + lane)]
            elif count == 2:  # fp64
                first = types.uint32(at + 2 * lane)
                low = types.uint32(bytes8[first]) | types.uint32(
                    types.uint32(bytes8[first + 1]) << types.uint32(8)
                )
            sync_warp()  # read before the next group's bytes overwrite them
        low_kept = types.uint32(cuda.popc(low))
        kept = types.uint32(low_kept + types.uint32(cuda.popc(high)))
        before, total = warp_scan(kept, lane, scan)
        total = types.uint32(total)
        if total == run:
            _fill_consecutive(ranked, seg_col, run, cap, sink, lane)
        else:
            rank = types.uint32(ranked + types.uint32(before))
            col = types.uint32(seg_col + lane_cols * lane)
            _emit_ids(low, rank, col, cap, sink)
            if count == 8:  # two 32-bit halves: the simulator's ffs is 32-bit
                rank = types.uint32(rank + low_kept)
                _emit_ids(high, rank, types.uint32(col + types.uint32(32)), cap, sink)
        return types.uint32(ranked + total)

    return rank_bytes


@cuda.jit(device=True)
def _rank_range(
    mask, mask_words, mask_align, mask_row, begin, end, ranked, limit, ids, id_row, width, lane,
    scan, lane_words,
):  # fmt: skip
    """Warp call: ids of the kept columns of bytes ``[begin, end)`` of the row's mask.

    ``begin`` is a multiple of ``4 * lane_words``; ``ranked`` = kept columns of the row before
    ``begin``. Each step a lane takes ``lane_words`` consecutive 32-bit mask words,
    `warp_scan` ranks the lanes' popcounts (a step of full words writes consecutive ids
    instead), the lane writes the ids of its set bits, and the steps stop once ``ranked``
    reaches ``limit`` (min of W and the range's last rank + 1). The words of RANK_STEPS steps
    are loaded before the first is ranked: at one wave of rows this pass is the kernel's tail.
    ``lane_words`` is 4 for ``fused``'s long ranges and 1 for ``split``'s short units (as in
    CUDA C's ``rank_mask<kWords>``; measurements: docs/design.md, CUDA C kernels); four words
    are one 16-byte load (`load_quad`) where mask rows are 16-byte aligned (``mask_align``).
    """
    step_bytes = 128 * lane_words
    words = cuda.local.array(RANK_WORDS, types.uint32)
    sink = pointer_at(ids, id_row)
    cap = types.uint32(width)
    b = begin
    while b < end and ranked < limit:
        for k in range(RANK_STEPS):
            mine = b + step_bytes * k + 4 * lane_words * lane
            if lane_words == 4 and mask_align == 16 and mine + 16 <= end:
                at = 4 * k
                words[at], words[at + 1], words[at + 2], words[at + 3] = load_quad(
                    mask_words, (mask_row + mine) // 4
                )
            else:
                for i in range(lane_words):
                    words[lane_words * k + i] = 0
                    if mine + 4 * i < end:
                        words[lane_words * k + i] = _mask_word(
                            mask, mask_words, mask_align, mask_row, mine + 4 * i, end
                        )
        for k in range(RANK_STEPS):
            if ranked < limit:  # warp-uniform
                count = 0
                for i in range(lane_words):
                    count += cuda.popc(words[lane_words * k + i])
                before, total = warp_scan(count, lane, scan)
                first = b + step_bytes * k
                if total == 8 * step_bytes:  # every word full (warp-uniform): consecutive ids
                    rank, col = types.uint32(ranked), types.uint32(8 * first)
                    _fill_consecutive(rank, col, types.uint32(8 * step_bytes), cap, sink, lane)
                else:
                    rank = types.uint32(ranked + before)
                    for i in range(lane_words):
                        word = words[lane_words * k + i]
                        col = types.uint32(8 * (first + 4 * (lane_words * lane + i)))
                        _emit_ids(word, rank, col, cap, sink)
                        rank = types.uint32(rank + types.uint32(cuda.popc(word)))
                ranked += total
        b += step_bytes * RANK_STEPS


@cuda.jit(device=True)
def _warp_prefix(counts, warps, warp, lane, scan):
    """Block call, after the barrier that published each warp's count in ``counts[:warps]``:
    ``(before, total)``, the counts of the warps before ``warp`` and of all of them.

    Lane l reads warp l's count (warps <= 32) and two warp sums add them up in 32 bits, as in
    CUDA C, rather than a loop over the warps in every thread in numba's int64 arithmetic
    (a measurable share of ``fused``'s stalls: docs/design.md, Numba backend).
    """
    other = types.int32(0)
    if lane < warps:
        other = counts[lane]
    total = warp_sum(other, lane, scan)
    before = warp_sum(other if lane < warp else types.int32(0), lane, scan)
    return before, total


@cuda.jit(device=True)
def _rank_unit(
    mask, mask_words, mask_align, num_bytes, segs_per_unit, ids, width, row, unit, before, count,
    lane, scan,
):  # fmt: skip
    """Warp call (``split``): the ids of the row's unit ``unit`` (``count`` kept columns,
    ``before`` kept before it) in slots < W."""
    if before < width and count > 0:  # then the unit is inside the row
        seg = unit * segs_per_unit
        _rank_range(
            mask, mask_words, mask_align, row * num_bytes, 32 * seg,
            min(32 * (seg + segs_per_unit), num_bytes), before, min(width, before + count), ids,
            row * width, width, lane, scan, 1,
        )  # fmt: skip


if SIMULATED:  # the simulator passes NumPy arrays where the GPU passes pointers

    def _array(pointer, size):
        return pointer

else:  # `cuda.atomic` is typed for arrays only: an array over the pointer (no copy)
    from numba.cuda.np.numpy_support import carray as _array


@cuda.jit(device=True)
def _look_back(state, first, end, whole, limit, shared, scan):
    """Block call (``split``): the sum over the tiles ``first <= i < end`` of their published
    counts ``state[2 + i] - 1``.

    Each round reads ``blockDim`` flags, one per thread, by atomics until non-zero (a plain load
    may be hoisted out of the loop and spin forever); the rounds stop once ``kept`` reaches
    ``limit`` unless ``whole``. ``whole`` and ``limit`` are block-uniform, so every thread runs
    the same rounds (and, in the simulator, barriers). Round k adds up the warp totals through
    ``shared[warps * (1 - k % 2):][:warps]``: the halves alternate, so one barrier per round
    suffices (the caller's warp counts in ``shared[:warps]`` are read before round 0's barrier).
    """
    tid = cuda.threadIdx.x
    lane = tid % 32
    warp = tid // 32
    threads = cuda.blockDim.x
    warps = threads // 32
    kept = 0
    rounds = 0
    i = first
    while i < end and (whole or kept < limit):
        mine = i + tid
        value = 0
        if mine < end:
            flag = cuda.atomic.add(state, 2 + mine, 0)
            while flag == 0:
                flag = cuda.atomic.add(state, 2 + mine, 0)
            value = flag - 1
        value = warp_sum(value, lane, scan)
        half = warps * (1 - rounds % 2)
        if lane == 0:
            shared[half + warp] = value
        cuda.syncthreads()
        for w in range(warps):
            kept += shared[half + w]
        rounds += 1
        i += threads
    return kept


@cuda.jit(device=True)
def _release_tiles(state, num_tiles, done, lane, scan):
    """Warp call (``split``: warp 0, after the block's last cross-warp barrier): if lane 0's
    ``done`` (the done counter before its increment) says the block finished last, the warp
    resets the ticket counter, the done counter and every flag to zero."""
    last = warp_sum(1 if lane == 0 and done == num_tiles - 1 else 0, lane, scan)
    if last != 0:
        cuda.threadfence()  # acquire: after every block's state accesses (fenced before its count)
        for i in range(lane, 2 + num_tiles, 32):
            state[i] = 0


# ---------------------------------------------------------------------------------------------
# Kernels
# ---------------------------------------------------------------------------------------------


def _finiteness_test(itemsize: int):
    """``(exponent_key, kept_byte)`` for elements of ``itemsize`` bytes: ``kept_byte(q, at,
    exponent_key(exponent))`` has bit j set iff element j of the 8 in the uint64 words
    ``q[at:at + itemsize]`` is kept (its exponent field is not all ones).

    Two elements per 32-bit half (bf16, fp16): both at once. With ``fields`` the exponent
    field of each element, ``(x & fields) ^ fields`` is zero in an element iff its field is all
    ones, and adding ``below_top`` (every bit below each element's top bit) carries into the
    element's top bit iff it is not zero; no field holds a top bit, so no carry crosses
    elements. The test works on 32-bit halves (CUDA C's ``kept_byte``; whole uint64 words
    need 64-bit adds and a shift per element bit), and two byte permutes (`byte_perm`) and a
    multiply gather the eight bits, as in CUDA C. Fewer elements per word (fp32, fp64): one
    32-bit compare per element, where the word test measured slower on fp32 on the H200
    (measurements: docs/design.md, Numba backend).
    """
    if itemsize == 2:
        two_per_word = np.uint32(0x0001_0001)
        below_top = np.uint32(0x7FFF_7FFF)
        tops = np.uint32(0x8080_8080)  # the top bits of the permuted bytes
        low = np.uint64(0xFFFF_FFFF)
        select_high_bytes = np.uint32(0x7531)  # bytes 1 and 3 of x, then of y
        gather_tops = np.uint32(0x0020_4081)  # shifts 0, 7, 14 and 21

        @cuda.jit(device=True)
        def fields_of(exponent64):
            """The exponent field of each of a 32-bit word's two elements."""
            return types.uint32(types.uint32(exponent64) * two_per_word)

        @cuda.jit(device=True)
        def kept_in_words(q, at, fields):
            """Bit j: element j of the words ``q[at], q[at + 1]``, two of a 32-bit half at once
            (CUDA C's ``kept_byte``): the result in each half's top bit (bits 15 and 31), two
            byte permutes put elements 0-3 and 4-7 at bits 7, 15, 23, 31 of two words, merged a
            nibble apart, and one multiply moves all eight to bits 24-31 in order."""
            carried = cuda.local.array(4, types.uint32)  # registers once unrolled
            for k in range(2):
                for h in range(2):
                    half = types.uint32((q[at + k] >> types.uint64(32 * h)) & low)
                    flipped = types.uint32((half & fields) ^ fields)
                    carried[2 * k + h] = types.uint32(flipped + below_top)
            first = types.uint32(byte_perm(carried[0], carried[1], select_high_bytes) & tops)
            second = types.uint32(byte_perm(carried[2], carried[3], select_high_bytes) & tops)
            merged = types.uint32(second + (first >> types.uint32(4)))
            return types.uint32(types.uint32(merged * gather_tops) >> types.uint32(24))

        return fields_of, kept_in_words

    exponent_shift = np.uint64(32 if itemsize == 8 else 0)  # to the 32-bit word holding it

    @cuda.jit(device=True)
    def exponent32_of(exponent64):
        """The exponent field within the 32-bit word that holds it."""
        return types.uint32(exponent64 >> exponent_shift)

    @cuda.jit(device=True)
    def kept_per_element(q, at, exponent32):
        """One 32-bit compare per element (``word & exp`` as uint32: numba's uint64 result
        costs a 64-bit compare and select per element)."""
        byte = types.uint32(0)
        for j in range(8):
            k = ((j + 1) * itemsize - 1) // 4  # the 32-bit word holding element j's exponent
            word = types.uint32((q[at + k // 2] >> types.uint64(32 * (k % 2))) & _FULL)
            exp = types.uint32(exponent32 << types.uint32(8 * (j * itemsize % 4)))
            if types.uint32(word & exp) != exp:
                byte = types.uint32(byte | (types.uint32(1) << types.uint32(j)))
        return byte

    return exponent32_of, kept_per_element


def _dtype_kernels(itemsize: int) -> dict:
    """The kernels (``fused``, ``split``) for elements of ``itemsize`` bytes.

    A lane's 8 elements (one mask byte) are ``itemsize`` uint64 words with the memory layout;
    a group of ``unroll`` segments is LOADS words per lane, all loaded before any is tested.
    """
    unroll = max(1, LOADS // itemsize)
    group_words = unroll * itemsize  # a group (the vector loop)
    tail_words = 2 * itemsize  # a segment and the next (the tail loop)
    segment_words = SEGMENT * itemsize // 8
    element_bits = 8 * itemsize
    element_mask = np.uint64((1 << element_bits) - 1)
    exponent_key, kept_byte = _finiteness_test(itemsize)

    @cuda.jit(device=True)
    def load_words(logits64, first, q, at):
        """``q[at:at + itemsize]`` = the ``itemsize`` words of 8 elements from word ``first``
        (even: the row is 16-byte aligned), as ``itemsize // 2`` 16-byte loads."""
        for i in range(0, itemsize, 2):
            q[at + i], q[at + i + 1] = load_pair(logits64, first + i)

    @cuda.jit(device=True)
    def load_segment(logits, logits64, wide, row_offset, col_stride, vocab, exponent, col, q, at):
        """``q[at:at + itemsize]``: the words of columns ``col .. col + 7`` of the row.

        Wide loads when they are all in the row, else scalar strided loads (a column past the
        row reads as ``exponent``: not kept).
        """
        if wide != 0 and col + 8 <= vocab:
            load_words(logits64, (row_offset + col) * itemsize >> 3, q, at)
            return
        for i in range(itemsize):
            q[at + i] = 0
        offset = row_offset + col * col_stride
        remaining = vocab - col
        for j in range(8):
            bits = exponent
            if j < remaining:
                bits = types.uint64(logits[offset])
            offset += col_stride
            word = at + j * itemsize // 8
            q[word] = q[word] | ((bits & element_mask) << types.uint64(element_bits * j % 64))

    @cuda.jit(device=True)
    def store_byte(q, at, key, mask, b):
        """Store and return (uint32) mask byte ``b`` of the 8 elements in ``q[at:]``."""
        byte = types.uint32(kept_byte(q, at, key))
        mask[b] = byte
        return byte

    rank_group = _rank_bytes(unroll)
    rank_segment = _rank_bytes(1)

    def make_stream_mask(ranking: bool):
        """`stream_mask`, which with ``ranking`` (a compile-time constant: ``fused``) also ranks
        each group's kept columns as soon as they are tested (`_rank_bytes`)."""

        @cuda.jit(device=True)
        def stream_mask(
            logits, logits64, wide, row_offset, col_stride, vocab, exponent, mask, mask_row, seg,
            end, sink, cap, scan, regroup, at,
        ):  # fmt: skip
            """Warp call: the row's mask bytes of segments ``[seg, end)``; returns the lane's kept
            count. With ``ranking`` the warp's kept columns are also written, in column order,
            to ``sink[rank]`` for ranks < ``cap`` (through the warp's shared bytes from ``at`` of
            ``regroup``: `_rank_bytes`); without it ``sink``, ``cap``, ``regroup`` and ``at``
            are unused: no barrier, no cross-lane traffic.

            Whole groups of ``unroll`` segments in the row (wide rows): one straight run of
            LOADS wide loads each. The rest (the row's end, units shorter than a group, strided
            rows): one segment at a time, the next segment's loads issued before the current
            one is tested.
            """
            lane = cuda.threadIdx.x & 31
            lane32 = types.uint32(lane)
            exponent64 = types.uint64(exponent)
            key = exponent_key(exponent64)
            kept = 0
            ranked = types.uint32(0)
            if wide != 0:
                # The group's own words: none of them flows into the tail loop's buffer, so
                # none stays live (in registers) across the loop's back edge.
                group = cuda.local.array(group_words, types.uint64)
                bits = cuda.local.array(unroll, types.uint32)
                full_end = min(end, vocab // SEGMENT)
                # The word index advances by a constant (recomputing it from ``seg`` costs
                # instructions); the mask index does not: advancing it too pushed loads past
                # the first test (register pressure; docs/design.md, Numba backend).
                first = (row_offset + seg * SEGMENT + 8 * lane) * itemsize >> 3
                while seg + unroll <= full_end:
                    mask_at = mask_row + 32 * seg + lane
                    for u in range(unroll):
                        load_words(logits64, first + u * segment_words, group, u * itemsize)
                    for u in range(unroll):
                        bits[u] = store_byte(group, u * itemsize, key, mask, mask_at + 32 * u)
                        kept += cuda.popc(bits[u])
                    if ranking:
                        seg_col = types.uint32(types.uint32(seg) * types.uint32(SEGMENT))
                        ranked = rank_group(
                            bits, seg_col, lane32, sink, cap, ranked, scan, regroup, at
                        )
                    seg += unroll
                    first += unroll * segment_words
            q = cuda.local.array(tail_words, types.uint64)  # this segment's words, the next's
            byte = cuda.local.array(1, types.uint32)
            head = (logits, logits64, wide, row_offset, col_stride, vocab, exponent64)
            if seg < end:
                load_segment(*head, seg * SEGMENT + 8 * lane, q, 0)
            while seg < end:
                if seg + 1 < end:
                    load_segment(*head, (seg + 1) * SEGMENT + 8 * lane, q, itemsize)
                byte[0] = types.uint32(0)
                if 8 * (32 * seg + lane) < vocab:
                    byte[0] = store_byte(q, 0, key, mask, mask_row + 32 * seg + lane)
                    kept += cuda.popc(byte[0])
                if ranking:
                    seg_col = types.uint32(types.uint32(seg) * types.uint32(SEGMENT))
                    ranked = rank_segment(
                        byte, seg_col, lane32, sink, cap, ranked, scan, regroup, at
                    )
                for i in range(itemsize):
                    q[i] = q[itemsize + i]
                seg += 1
            return kept

        return stream_mask

    stream_mask = make_stream_mask(ranking=False)
    stream_mask_ranked = make_stream_mask(ranking=True)
    regroup_at = regroup_offset(FUSED_THREADS // 32)  # a compile-time constant of `fused`

    def fused(
        logits, logits64, row_stride, col_stride, exponent, wide, num_sampled, has_num_sampled,
        num_sampled_stride, vocab, width, num_bytes, ids, counts, mask, mask_words, mask_align,
    ):  # fmt: skip
        """One block per row, warp w streaming the w-th range of the row (whole groups but the
        last) and ranking its ids as it goes (warp 0 straight into the row, the others into
        `STAGED_IDS` slots of shared memory), one barrier combining the warp counts, then each
        warp copying its staged ids into place, or ranking its range from the mask (pass 2)
        when it needs more ids than it staged."""
        row = cuda.blockIdx.x
        tid = cuda.threadIdx.x
        lane = tid & 31
        warp = tid >> 5
        # The launch's block size as a constant: with ``cuda.blockDim.x`` (runtime divisions,
        # more registers live across pass 1) ptxas issued bf16's 8th load after the 1st's test.
        threads = FUSED_THREADS
        warps = FUSED_THREADS // 32
        shared = cuda.shared.array(0, types.int32)
        scan = shared[2 * warps + warp * SCAN_SLOTS : 2 * warps + (warp + 1) * SCAN_SLOTS]
        mask_row = row * num_bytes
        id_row = row * width
        if _is_inactive(num_sampled, has_num_sampled, num_sampled_stride, row):
            _zero_bytes(mask, mask_row, mask_row + num_bytes, tid, threads)
            _fill_ids(ids, id_row, 0, width, tid, threads)
            if tid == 0:
                counts[row] = 0
            return
        num_segs = (vocab + SEGMENT - 1) // SEGMENT
        per_warp = (num_segs + warps - 1) // warps
        per_warp = (per_warp + unroll - 1) // unroll * unroll
        seg = min(warp * per_warp, num_segs)
        end = min(seg + per_warp, num_segs)
        staged_at = 2 * warps + warps * SCAN_SLOTS + (warp - 1) * STAGED_IDS  # warps > 0
        if warp == 0:  # its first id has rank 0
            sink = pointer_at(ids, id_row)
            cap = types.uint32(width)
        else:
            sink = pointer_at(shared, staged_at)
            cap = types.uint32(min(width, STAGED_IDS))
        regroup = (
            cuda.shared.array(0, types.uint8),
            cuda.shared.array(0, types.uint32),
            cuda.shared.array(0, types.uint64),
        )
        kept = stream_mask_ranked(
            logits, logits64, wide, row * row_stride, col_stride, vocab, exponent, mask,
            mask_row, seg, end, sink, cap, scan, regroup,
            regroup_at + REGROUP_BYTES * warp,
        )  # fmt: skip
        count = warp_sum(kept, lane, scan)
        if lane == 0:
            shared[warp] = count
        cuda.syncthreads()  # also orders the mask and staged stores before they are read
        before, total = _warp_prefix(shared, warps, warp, lane, scan)
        if tid == 0:
            counts[row] = total
        _fill_ids(ids, id_row, min(total, width), width, tid, threads)
        if warp == 0 or before >= width or count == 0:  # warp 0's ids are in place
            return
        needed = types.uint32(min(count, width - before))
        if needed <= cap:  # 32-bit indices, as in `_fill_ids`
            i = types.uint32(lane)
            while i < needed:
                ids[id_row + before + i] = shared[types.uint32(staged_at + i)]
                i = types.uint32(i + types.uint32(32))
        else:
            _rank_range(
                mask, mask_words, mask_align, mask_row, 32 * seg, min(32 * end, num_bytes),
                before, min(width, before + count), ids, id_row, width, lane, scan,
                FUSED_LANE_WORDS,
            )  # fmt: skip

    @cuda.jit(device=True)
    def count_unit(
        logits, logits64, row_stride, col_stride, exponent, wide, num_sampled, has_num_sampled,
        num_sampled_stride, vocab, num_bytes, segs_per_unit, mask, row, unit, lane, scan,
    ):  # fmt: skip
        """Warp call (``split``): the mask bytes of the row's unit ``unit`` (zeros in an
        inactive row); returns the unit's kept count (in every lane)."""
        num_segs = (vocab + SEGMENT - 1) // SEGMENT
        seg = min(unit * segs_per_unit, num_segs)
        end = min(seg + segs_per_unit, num_segs)
        mask_row = row * num_bytes
        kept = 0
        if _is_inactive(num_sampled, has_num_sampled, num_sampled_stride, row):
            _zero_bytes(mask, mask_row + 32 * seg, mask_row + min(32 * end, num_bytes), lane, 32)
        else:
            kept = stream_mask(
                logits, logits64, wide, row * row_stride, col_stride, vocab, exponent, mask,
                mask_row, seg, end, mask, types.uint32(0), scan, (mask,), 0,  # no ranking
            )  # fmt: skip
        return warp_sum(kept, lane, scan)

    def split(
        logits, logits64, row_stride, col_stride, exponent, wide, num_sampled, has_num_sampled,
        num_sampled_stride, vocab, width, num_bytes, tiles_per_row, segs_per_unit, ids, counts,
        mask, mask_words, mask_align, state_pointer,
    ):  # fmt: skip
        """Block per ticket t = tile t % tiles_per_row of row t // tiles_per_row, warp per
        unit: pass 1, the tile count published as ``state[2 + t] = count + 1``, the
        look-back, the last tile's counts[r] and -1 padding, then each warp's ranking.
        ``state``: [ticket, done, flag per tile], zero on entry and left zero by the block
        that finishes last."""
        tid = cuda.threadIdx.x
        lane = tid % 32
        warp = tid // 32
        threads = cuda.blockDim.x
        warps = threads // 32
        num_tiles = cuda.gridDim.x
        shared = cuda.shared.array(0, types.int32)
        scan = shared[2 * warps + warp * SCAN_SLOTS : 2 * warps + (warp + 1) * SCAN_SLOTS]
        if tid == 0:  # tickets in the order blocks start
            shared[warps] = cuda.atomic.add(_array(state_pointer, 2), 0, 1)
        cuda.syncthreads()
        ticket = shared[warps]
        row = ticket // tiles_per_row
        tile = ticket - row * tiles_per_row
        unit = tile * warps + warp
        count = count_unit(
            logits, logits64, row_stride, col_stride, exponent, wide, num_sampled,
            has_num_sampled, num_sampled_stride, vocab, num_bytes, segs_per_unit, mask, row,
            unit, lane, scan,
        )  # fmt: skip
        if lane == 0:
            shared[warp] = count
        cuda.syncthreads()  # also orders the mask stores before the ranking reads them
        before, total = _warp_prefix(shared, warps, warp, lane, scan)
        state = _array(state_pointer, 2 + num_tiles)  # here: nothing more live across pass 1
        if tid == 0:  # the flag is the count itself: no fence needed before it
            cuda.atomic.exch(state, 2 + ticket, types.int32(total + 1))
        # The row's last tile needs the whole prefix (counts[r], padding), unless the row is
        # inactive (0); another tile only while it is < W and the tile has ids to rank.
        last = tile == tiles_per_row - 1
        whole = last and not _is_inactive(num_sampled, has_num_sampled, num_sampled_stride, row)
        prefix = _look_back(
            state, row * tiles_per_row, ticket, whole, width if total > 0 else 0, shared, scan
        )
        done = 0
        if tid == 0:  # after the block's last flag read (the look-back's last barrier)
            cuda.threadfence()  # release: the block's ticket, flag and reads before its count
            done = cuda.atomic.add(state, 1, 1)  # awaited after the ranking only
        id_row = row * width
        if last:
            if tid == 0:
                counts[row] = prefix + total
            _fill_ids(ids, id_row, min(prefix + total, width), width, tid, threads)
        _rank_unit(
            mask, mask_words, mask_align, num_bytes, segs_per_unit, ids, width, row, unit,
            prefix + before, count, lane, scan,
        )  # fmt: skip
        if warp == 0:  # the block that finishes last leaves the state zero
            _release_tiles(state, num_tiles, done, lane, scan)

    return {
        "fused": _jit_kernel(fused, FUSED_THREADS),
        "split": _jit_kernel(split, SPLIT_THREADS),
    }


_DTYPE_KERNELS = {itemsize: _dtype_kernels(itemsize) for itemsize in (2, 4, 8)}


def _dispatcher(name: str, itemsize: int):
    return _DTYPE_KERNELS[itemsize][name]


def _signatures(itemsize: int, count_type) -> dict:
    """Explicit signatures of the two kernels for one element size / counts dtype."""
    p = types.CPointer
    i64 = types.int64
    ids, counts, mask = p(types.int32), p(types.int32), p(types.uint8)
    masks = (mask, p(types.uint32), i64)  # bytes, the same bytes as words, row alignment
    # logits (elements, and the same address as uint64 words), row stride, col stride,
    # exponent, wide, num_sampled_tokens (pointer, present, stride)
    head = (p(_NUMBA_UINTS[itemsize]), p(types.uint64), i64, i64, i64, i64, p(count_type), i64, i64)
    return {
        "fused": types.void(*head, i64, i64, i64, ids, counts, *masks),
        # vocab, width, num_bytes, tiles_per_row, segs_per_unit, ..., state (zeroed scratch)
        "split": types.void(*head, i64, i64, i64, i64, i64, ids, counts, *masks, p(types.int32)),
    }


# ---------------------------------------------------------------------------------------------
# Launch geometry (same function on the GPU and in the simulator)
# ---------------------------------------------------------------------------------------------


def launch_geometry(num_reqs: int, vocab: int, variant: str, sms: int) -> Geometry:
    """The variant ``auto`` runs for this shape on ``sms`` SMs and ``split``'s tiling, with this
    module's block sizes and tiles per SM (`masks.backends.tiling.geometry`, as CuPy's)."""
    threads = (FUSED_THREADS, SPLIT_THREADS)
    return geometry(num_reqs, vocab, variant, sms, threads, SPLIT_TILES_PER_SM)


# ---------------------------------------------------------------------------------------------
# Backend interface
# ---------------------------------------------------------------------------------------------


def unavailable_reason(device: torch.device) -> str | None:
    if SIMULATED:  # the registry refuses CUDA tensors under the switch
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
    key = (logits.get_device(), variant, *call_shape(logits, num_sampled_tokens, out))
    plan = _plans.get(key)
    if plan is None:
        plan = _make_plan(key, logits, num_sampled_tokens, out, variant)
    plan.run(logits, num_sampled_tokens, out)


# ---------------------------------------------------------------------------------------------
# GPU dispatch
# ---------------------------------------------------------------------------------------------

_lock = threading.RLock()
_kernels: dict[tuple, object] = {}
_streams: dict[tuple[int, int], object] = {}
_plans: dict[tuple, _Plan] = {}
_thread = threading.local()


def _kernel(name: str, device: int, itemsize: int, count_type):
    """The ``cuda.core`` kernel of ``name`` for these types in ``device``'s context (cached)."""
    key = (name, device, itemsize, count_type)
    kernel = _kernels.get(key)
    if kernel is None:
        with _lock:
            kernel = _kernels.get(key)
            if kernel is None:
                with cuda.gpus[device]:
                    signature = _signatures(itemsize, count_type)[name]
                    compiled = _dispatcher(name, itemsize).compile(signature)
                    kernel = compiled._codelibrary.get_cufunc().kernel
                _kernels[key] = kernel
    return kernel


def _stream(device: int, pointer: int):
    """``cuda.core`` stream for the raw stream ``pointer`` on ``device`` (cached per pointer)."""
    stream = _streams.get((device, pointer))
    if stream is None:
        from numba.cuda.cudadrv.driver import _to_core_stream

        with _lock, cuda.gpus[device]:
            stream = remember(
                _streams, (device, pointer), _to_core_stream(cuda.external_stream(pointer))
            )
    return stream


@dataclass
class _Plan:
    """Everything a shape needs except the data pointers and the stream."""

    device: int
    variant: str
    """``fused`` or ``split`` (``auto`` resolved by shape)"""
    kernel: object
    config: object
    head: tuple
    """(row_stride, col_stride, exponent)"""
    wide_layout: bool
    counts: tuple
    """(present, stride) of num_sampled_tokens"""
    vocab: int
    width: int
    num_bytes: int
    tiles: tuple
    """split: (tiles_per_row, segs_per_unit)"""
    state_size: int
    """split: entries of its zeroed state (ticket, done counter, one flag per tile)"""

    def run(self, logits, num_sampled_tokens, out) -> None:
        device = self.device
        if current_device() != device:  # multi-GPU: torch's guard makes the device current
            with torch.cuda.device(device):  # (binding its primary context), then restores
                self._launch(logits, num_sampled_tokens, out)
            return
        if getattr(_thread, "device", None) != device:
            _bind_primary_context(device)
            _thread.device = device
        self._launch(logits, num_sampled_tokens, out)

    def _launch(self, logits, num_sampled_tokens, out) -> None:
        pointer = raw_stream(self.device)
        stream = _stream(self.device, pointer)
        address = logits.data_ptr()
        counts_ptr = 0 if num_sampled_tokens is None else num_sampled_tokens.data_ptr()
        ids, counts, mask = (
            out.token_ids.data_ptr(),
            out.counts.data_ptr(),
            out.packed_mask.data_ptr(),
        )
        mask_align = math.gcd(self.num_bytes, mask, 16)  # the kernels test >= 4 and == 16
        wide = int(self.wide_layout and address % 16 == 0)
        head = (address, address, *self.head, wide, counts_ptr, *self.counts)
        if self.variant == "fused":
            _core_launch(
                stream, self.config, self.kernel, *head,
                self.vocab, self.width, self.num_bytes, ids, counts, mask, mask, mask_align,
            )  # fmt: skip
            return
        zeroed = stream_scratch.for_stream(self.device, pointer)
        state = zeroed.acquire(self.state_size, logits.device)
        try:  # held until the launch is queued
            _core_launch(
                stream, self.config, self.kernel, *head, self.vocab, self.width,
                self.num_bytes, *self.tiles, ids, counts, mask, mask, mask_align, state.data_ptr(),
            )  # fmt: skip
        finally:
            zeroed.release()


def _bind_primary_context(device: int) -> None:
    """Give the calling thread ``device``'s primary context if it has no current context (once
    per thread; ``device`` is the current device): cuda.core launches in the thread's current
    context, and a thread that never made a CUDA runtime call has none. Set, not pushed:
    numba's ``get_context`` pushes a context and leaves it on the thread's stack, which made
    that device the caller's current one."""
    from cuda.bindings import driver

    def checked(result: tuple):
        if result[0] != driver.CUresult.CUDA_SUCCESS:
            raise RuntimeError(f"CUDA driver error {result[0]!r} binding device {device}")
        return result[1:]

    (context,) = checked(driver.cuCtxGetCurrent())
    if int(context) == 0:
        (handle,) = checked(driver.cuDeviceGet(device))
        (primary,) = checked(driver.cuDevicePrimaryCtxRetain(handle))
        checked(driver.cuCtxSetCurrent(primary))


def _make_plan(key, logits, num_sampled_tokens, out, variant) -> _Plan:
    from cuda.core import LaunchConfig, launch

    global _core_launch
    _core_launch = launch
    device = key[0]
    itemsize, exponent = _FLOATS[logits.dtype]
    count_type = (
        types.int32 if num_sampled_tokens is None else _NUMBA_COUNTS[num_sampled_tokens.dtype]
    )
    num_reqs, vocab = logits.shape
    shape = launch_geometry(num_reqs, vocab, variant, sm_count(device))
    variant, threads = ("fused", FUSED_THREADS) if shape.fused else ("split", SPLIT_THREADS)
    grid = num_reqs * shape.tiles_per_row
    plan = _Plan(
        device=device,
        variant=variant,
        kernel=_kernel(variant, device, itemsize, count_type),
        config=LaunchConfig(
            grid=grid, block=threads, shmem_size=shared_bytes(threads, staged=shape.fused)
        ),
        head=(*logits.stride(), exponent),
        wide_layout=wide_rows(logits),
        counts=(0, 0) if num_sampled_tokens is None else (1, num_sampled_tokens.stride(0)),
        vocab=vocab,
        width=out.width,
        num_bytes=out.packed_mask.shape[1],
        tiles=(shape.tiles_per_row, shape.segs_per_unit),
        state_size=2 + grid,
    )
    with _lock:
        return remember(_plans, key, plan)


# Bound by the first `_make_plan` (`import masks.backends.numba` stays free of cuda.core):
_core_launch = None  # cuda.core.launch


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
    itemsize, exponent = _FLOATS[logits.dtype]
    elements = _flat(logits.view(_TORCH_INTS[itemsize])).view(_NUMPY_UINTS[itemsize])
    words = elements.view(np.uint8)[: elements.nbytes // 8 * 8].view(np.uint64)
    wide = int(wide_rows(logits) and logits.data_ptr() % 16 == 0)
    num_reqs, vocab = logits.shape
    if num_sampled_tokens is None:
        counts_in = (np.zeros(1, dtype=np.int32), 0, 0)
    else:
        counts_in = (_flat(num_sampled_tokens), 1, num_sampled_tokens.stride(0))
    ids = out.token_ids.view(-1).numpy()
    counts = out.counts.numpy()
    mask = out.packed_mask.view(-1).numpy()
    width, num_bytes = out.width, out.packed_mask.shape[1]
    shape = launch_geometry(num_reqs, vocab, variant, EMULATED_SM_COUNT)
    # The simulator copies each NumPy argument in and out of a launch, so a uint32 view of the
    # mask passed as NumPy would not see the launch's byte stores (and its copy back would undo
    # them). A simulated device array and its view share memory, so the mask's loads see its
    # stores and rows take the load paths their alignment gives, as on the GPU.
    device_mask = cuda.to_device(mask)
    whole_words = mask.size // 4 * 4
    if whole_words:
        mask_words = device_mask[:whole_words].view(np.uint32)
        mask_align = math.gcd(num_bytes, device_mask.ctypes.data, 16)
    else:  # under 4 mask bytes in all: the byte path only
        mask_words, mask_align = cuda.to_device(np.zeros(1, np.uint32)), 1
    masks = (device_mask, mask_words, mask_align)
    head = (
        elements,
        words if words.size else np.zeros(1, np.uint64),
        *logits.stride(),
        exponent,
        wide,
        *counts_in,
    )
    kernels = _DTYPE_KERNELS[itemsize]
    if shape.fused:
        kernels["fused"][num_reqs, FUSED_THREADS, 0, shared_bytes(FUSED_THREADS, staged=True)](
            *head, vocab, width, num_bytes, ids, counts, *masks
        )
    else:
        grid = num_reqs * shape.tiles_per_row
        config = (grid, SPLIT_THREADS, 0, shared_bytes(SPLIT_THREADS))
        with stream_scratch.for_stream(-1, 0).hold(2 + grid, torch.device("cpu")) as state:
            kernels["split"][config](
                *head, vocab, width, num_bytes, shape.tiles_per_row, shape.segs_per_unit, ids,
                counts, *masks, state.numpy(),
            )  # fmt: skip
    device_mask.copy_to_host(mask)
