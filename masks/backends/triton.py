"""Triton backend: the contract's kernels in Triton (also runs on CPU under ``TRITON_INTERPRET=1``).

Measurements behind the choices below: docs/design.md, Triton backend.

The operation is memory bound: each logit is read once, one mask bit and at most ``W`` ids are
written. Upstream vLLM (PR #54901; ``"rowwise"`` here, the baseline) runs one program per row
and ranks with an element-level ``tl.cumsum`` over every block: the scan dominates the
instructions, and few rows leave most SMs idle.

The other variants work in two passes (`fused` on fp32 and fp64 ranks in pass 1, below). Pass 1
streams ``[N, UNIT]`` tiles (16-byte vector loads) whose rows are mask units, 32-column words
(combined across a warp by shuffles) or, in ``fused`` on 16-bit dtypes, 8-column bytes (one thread's
vector: no shuffle, no barrier in the loop); a unit's finiteness bits are summed (disjoint bits: an
exact OR), stored as the mask and popcounted. Pass 2 ranks from the mask words (L2-hot, a fraction
of the logits' bytes) in work proportional to words and kept ids, not columns: word counts are
prefix-summed, then each word gives up its lowest set bit per step (`_rank_words`). A block without
kept ids costs one reduction, and ranking stops once ``min(count, W)`` ids are written.

* ``"split"`` (few rows): one program per tile (row, ``CHUNK`` columns) in one launch (at
  R=1..16 a second launch cost ~1.5-2 us of device time). A program takes a ticket (an atomic
  counter) and works on that tile, not its program id: pass 1, publish its kept count as a flag,
  sum the flags of the row's earlier chunks (decoupled look-back; a chunk other than the last
  stops once the prefix reaches ``W``), pass 2 from the words still in registers. Every tile it
  waits for was taken by a program that started before it, so the wait ends without assuming
  co-residency or a start order. The row's last chunk writes ``counts[r]`` and the ``-1``
  padding. Ticket, counters and flags live in the stream's zeroed scratch
  (`masks.backends.scratch`), reset by the last program to finish reading flags: no call pays a
  memset, and CUDA-graph replays find them zero.
* ``"fused"`` (many rows): one program per row, one launch.

  - fp32 and fp64 rank each block in pass 1 as it streams (`_rank_words`), leaving no pass 2
    as the tail of a wave.
  - 16-bit rows, whose ranking the loads would not hide, keep two passes. Pass 1 has no
    block-wide reduction in its loop and tests two columns per int32 where the layout allows
    (`_pairs`, `_top_bits`); a barrier publishes the mask to the block. A row that fits in W is
    then ranked one range of words per warp, with warp scans and, on the GPU, a bit loop
    bounded by the warp's own fullest word (no rank step waits for the block); a truncated row
    in block-wide steps until W ids are written.
* ``"auto"`` (default): ``fused`` once ``R >= _FUSED_MIN_ROWS_PER_SM * num_SMs``, else ``split``.

Triton has no popcount, find-first-set or byte permute: on the GPU `_popcount`, `_lowest_bit`,
`_top_bits` and `_emit_ids`'s bit loop are inline PTX; the interpreter, which runs no inline
PTX, takes integer forms and Triton's loop instead (`_PTX`), and a test checks both forms
against Python. Finiteness is decided on the bit pattern (exponent all ones: +-inf or NaN)
through an integer view of the logits, so every dtype behaves alike and the interpreter (no
bf16 arithmetic) runs the same code. Offsets are int64 (``R * V`` may pass 2**31; a transposed
view has column stride R). Inactive rows (``num_sampled_tokens[r] <= 0``) write zero mask
bytes, count 0 and ``-1`` ids without reading logits (``rowwise`` reads them, as upstream does).

Launches go on the current CUDA device's current torch stream (``compact`` makes the logits' device
current first), with no host synchronisation. A call key's first call goes through Triton's JIT
under a lock (its cache fills and the interpreter's patching are not guaranteed thread safe) and
becomes a launch plan (`_Plan`; `_call_key`: at least what the JIT specialises on, no key for an
unaligned pointer). Later calls only queue the plan with their data pointers, through Triton's C
launcher itself where `_RAW_LAUNCHER` allows, skipping the JIT's per-call binding and hashing
(~14 us per launch on the H200's host, triton 3.6) and its launch hooks
(``knobs.runtime.launch_enter_hook``: profilers such as proton see no call). Block sizes are
functions of shape and device only; the kernels are the same on the GPU and in the interpreter.
"""

from __future__ import annotations

import functools
import math
import threading

import torch
import triton
import triton.language as tl

from masks.backends import scratch
from masks.backends.cuda_state import current_device, raw_stream, sm_count
from masks.backends.plans import call_shape, remember
from masks.result import SamplingMask

VARIANTS = ("auto", "split", "fused", "rowwise")

# Integer view and exponent mask of each float dtype: a logit is kept iff (bits & EXP) != EXP.
_BITS = {
    torch.float32: (tl.int32, 0x7F800000, 4),
    torch.float16: (tl.int16, 0x7C00, 2),
    torch.bfloat16: (tl.int16, 0x7F80, 2),
    torch.float64: (tl.int64, 0x7FF0000000000000, 8),
}

# --- tuning knobs: shape, device and dtype choices of the same kernels; their measurements are
# in docs/design.md, Triton backend, Knobs. Launches are cached per shape (`_plans`) and split
# configurations per shape (`_split_config`'s lru_cache): a tuning script that changes a knob
# must clear both (benchmarks/tune.py does). -------------------------------------------------
_CPU_SM_COUNT = 8
"""Stand-in SM count for CPU tensors (the interpreter), so `auto` exercises both designs."""
_FUSED_MIN_ROWS_PER_SM = 1.0
"""`auto` picks `fused` from R >= this x SM count, else `split`: on the H200 `split` is faster
at R=64 and `fused` at R=256 (measurements: docs/design.md)."""
_SPLIT_TILES_PER_SM = 2
"""`split` picks the largest CHUNK that still gives every SM this many tiles."""
_SPLIT_CHUNKS = (8192, 2048, 512)
"""`split`'s CHUNK buckets (columns per tile), largest first: each is a compiled kernel."""
_SPLIT_COLUMNS_PER_WARP = 256
"""`split` num_warps = CHUNK / this, clamped to [1, 8]."""
_FUSED_BLOCK_BYTES = 32768
"""Logit bytes a `fused` program loads per loop iteration: three programs fit per SM, and twice
as much was slower (measurements: docs/design.md)."""
_FUSED_RANKS_IN_PASS1 = {2: False, 4: True, 8: True}
"""Whether `fused` ranks each block in pass 1, by element size (else pass 2 ranks from the mask):
faster on sparse and dense fp32 rows (full rows level), slower on 16-bit ones, whose pass-1 loads no
longer hide the ranking of twice as many columns per byte (measurements: docs/design.md). fp64
follows fp32, unmeasured."""
_FUSED_SMALL_BLOCK_BYTES = 16384
"""Logit bytes a `fused` program loads per iteration where `_FUSED_SMALL_BLOCK_ROWS_PER_SM` says
so: fewer registers, so four (fp32) or six (paired 16-bit) programs per SM instead of three."""
_FUSED_SMALL_BLOCK_ROWS_PER_SM = {2: (3.0, 4.0), 4: (3.0, math.inf), 8: (3.0, math.inf)}
"""By element size, ``(low, high)``: `fused` loads `_FUSED_SMALL_BLOCK_BYTES` per iteration when
``low x SMs < R <= high x SMs``, else `_FUSED_BLOCK_BYTES`. Up to 3 rows per SM the 32 KB kernels
run in one wave of three programs per SM; in the band, three per SM would leave the second wave
short (16-bit) or ranking in pass 1 wants more resident programs (fp32). The choice is made once
per launch plan, since a plan fixes R (measurements: docs/design.md)."""
_FUSED_NUM_WARPS = 8
"""Warps of a `fused` program, and so the ranges of `_rank_ranges`: 16 won on some shapes and
lost on others (measurements: docs/design.md)."""
_FUSED_RANK_WORDS = 512
"""Mask words a `fused` program ranks per block-wide step of a truncated row (count > W; 32
columns each): 2048 won on some shapes and lost up to 18% on others, measured when every row
took these steps (docs/design.md)."""
_FUSED_UNIT_COLUMNS = {2: 8, 4: 32, 8: 32}
"""Columns per mask unit of `fused`'s pass 1 by element size: bytes for 16-bit dtypes (a
thread's 16-byte vector: no shuffle or barrier in the loop), words otherwise (fp32 bytes still
need a shuffle and a barrier pair per iteration, and gained nothing; docs/design.md)."""
_FUSED_RANGE_SUBSTEPS = 4
"""Words per lane a `fused` warp ranks per step of its range (`_rank_ranges`); must be a
multiple of `_EMIT_WORDS`, the words a PTX bit loop takes at once. 2 was up to 4% slower (with
every 32nd word per lane), 8 cost registers and resident programs (measurements:
docs/design.md)."""
_FUSED_COUNT_SUBSTEPS = 8
"""Words per lane a `fused` warp counts per step of its range (`_count_ranges`): 16 raised bf16
`fused`'s registers, as the compiler hoists the tile's index math above pass 1 (docs/design.md)."""
_ROWWISE_BLOCK = 8192
"""Upstream's BLOCK_SIZE."""
_ROWWISE_NUM_WARPS = 4
"""Triton's default, which upstream launches with."""
_PAD_BLOCK = 1024
_FILL_BLOCK: tl.constexpr = tl.constexpr(512)
"""Consecutive ids stored per step for full mask words: a small tile, since a 32 * NW one once
raised `fused`'s registers enough to halve its resident programs (today's registers by tile:
docs/design.md)."""
_TILES_BLOCK = 256
"""Flags a `split` tile reads per step of its look-back."""

_launch_lock = threading.Lock()
_plans: dict[tuple, _Plan] = {}
"""Launch per call key (`_call_key`), made by the key's first launch through the JIT."""
_RAW_LAUNCHER = triton.__version__.startswith("3.6.")
"""Whether `_Plan` may call Triton's C launcher directly: its arguments are those of triton
3.6's (backends/nvidia/driver.py, the H200 image's version; 3.8 changed them)."""


def unavailable_reason(device: torch.device) -> str | None:
    if device.type == "cuda" and not torch.cuda.is_available():
        return "torch sees no CUDA device"
    return None


# --- device helpers shared by the variants ---------------------------------------------------


@triton.jit
def _popcount(x):
    """Set bits of each int32: the hardware's ``popc`` on the GPU; in the interpreter (no inline
    PTX) a SWAR count of plain integer ops, which the compiler does not turn into ``popc``."""
    if _PTX:
        return tl.inline_asm_elementwise(
            "popc.b32 $0, $1;", "=r,r", [x], dtype=tl.int32, is_pure=True, pack=1
        )
    else:
        x = x - ((x >> 1) & 0x55555555)
        x = (x & 0x33333333) + ((x >> 2) & 0x33333333)
        x = (x + (x >> 4)) & 0x0F0F0F0F
        x = x + (x >> 8)
        x = x + (x >> 16)
        return x & 0x3F


@triton.jit
def _lowest_bit(x):
    """Index of the lowest set bit of each nonzero int32: on the GPU the leading zeros of its bit
    reversal (``brev``, then ``bfind.shiftamt``, one instruction where ``clz`` takes two);
    in the interpreter the exponent of that bit's float value (a power of two converts exactly,
    and the sign bit of -2**31 is masked off)."""
    if _PTX:
        return tl.inline_asm_elementwise(
            "{ .reg .b32 r; brev.b32 r, $1; bfind.shiftamt.u32 $0, r; }", "=r,r", [x],
            dtype=tl.int32, is_pure=True, pack=1,
        )  # fmt: skip
    else:
        exponent = (x & -x).to(tl.float32).to(tl.int32, bitcast=True) >> 23
        return (exponent & 0xFF) - 127


@triton.jit
def _top_bits(a, b):
    """Bits 15 and 31 of int32s `a` and `b` moved to bits 7, 15 (from `a`) and 23, 31 (from
    `b`), every other bit 0: on the GPU one byte permute (``prmt``, bytes 1 and 3 of each) and
    a mask; in the interpreter shifts."""
    if _PTX:
        gathered = tl.inline_asm_elementwise(
            "prmt.b32 $0, $1, $2, 0x7531;", "=r,r,r", [a, b], dtype=tl.int32, is_pure=True,
            pack=1,
        )  # fmt: skip
        return gathered & -0x7F7F7F80  # 0x80808080 as an int32
    else:
        low = ((a >> 8) & 0x80) | ((a >> 16) & 0x8000) | ((b << 8) & 0x800000)
        return low | ((b >> 31) << 31)


_PTX: tl.constexpr = tl.constexpr(isinstance(_popcount, triton.runtime.JITFunction))
"""Whether the kernels compile to PTX: under Triton's interpreter (``TRITON_INTERPRET``), which
runs no inline PTX, ``triton.jit`` makes interpreted functions instead of JITFunctions."""


_EMIT_OPERANDS = (
    ("out", "=r"), ("address", "l"), ("word", "r"), ("slot", "r"), ("col", "r"), ("width", "r"),
)  # fmt: skip
"""`_EMIT_PTX`'s operands in order, with their constraints, each `_EMIT_WORDS` wide."""


def _emit_ptx(words: int) -> str:
    """`_emit_ids`'s PTX loop for `words` words per call (``pack``; operands: `_EMIT_OPERANDS`).
    Each round writes every live word's lowest set bit (``brev`` + ``bfind``, as `_lowest_bit`)
    to its next slot and clears it; a word whose next slot is at or past the width is dropped;
    the loop ends when all are empty, so a warp runs as many rounds as its fullest word has
    bits. The words' chains are independent, so a round's latencies overlap as in Triton's loop
    (a loop per word, one chain at a time, was slower). Labels are local to the braces (PTX
    scopes them by block), so every copy of the loop has its own."""
    operand = {name: k * words for k, (name, _) in enumerate(_EMIT_OPERANDS)}
    body = []
    for k in range(words):
        body += [
            f"setp.ne.b32 live, w{k}, 0;",
            f"setp.lt.and.s32 kept, s{k}, ${operand['width'] + k}, live;",
            f"brev.b32 id{k}, w{k};",
            f"bfind.shiftamt.u32 id{k}, id{k};",
            f"add.s32 id{k}, id{k}, ${operand['col'] + k};",
            f"@kept st.global.b32 [a{k}], id{k};",
            f"@!kept mov.b32 w{k}, 0;",
            f"add.s32 id{k}, w{k}, -1;",
            f"and.b32 w{k}, w{k}, id{k};",
            f"add.s64 a{k}, a{k}, 4;",
            f"add.s32 s{k}, s{k}, 1;",
        ]

    def registers(*prefixes: str) -> str:
        return ", ".join(f"{prefix}{k}" for prefix in prefixes for k in range(words))

    lines = [
        "{",
        ".reg .pred empty, live, kept;",
        f".reg .b32 left, {registers('w', 's', 'id')};",
        f".reg .b64 {registers('a')};",
        *(f"mov.b64 a{k}, ${operand['address'] + k};" for k in range(words)),
        *(f"mov.b32 w{k}, ${operand['word'] + k};" for k in range(words)),
        *(f"mov.b32 s{k}, ${operand['slot'] + k};" for k in range(words)),
        "EMIT:",
        "mov.b32 left, w0;",
        *(f"or.b32 left, left, w{k};" for k in range(1, words)),
        "setp.eq.b32 empty, left, 0;",
        "@empty bra DONE;",
        *body,
        "bra EMIT;",
        "DONE:",
        *(f"mov.b32 ${operand['out'] + k}, 0;" for k in range(words)),
        "}",
    ]
    return "\n".join(lines)


_EMIT_WORDS: tl.constexpr = tl.constexpr(4)
"""Words per `_EMIT_PTX` loop (Triton's ``pack``: consecutive elements of a thread): a thread
of `_rank_ranges` holds `_FUSED_RANGE_SUBSTEPS` words, which must be a multiple of it."""
_EMIT_PTX: tl.constexpr = tl.constexpr(_emit_ptx(_EMIT_WORDS.value))
_EMIT_CONSTRAINTS: tl.constexpr = tl.constexpr(
    ",".join(kind for _, kind in _EMIT_OPERANDS for _ in range(_EMIT_WORDS.value))
)


@triton.jit
def _is_active(num_sampled_ptr, num_sampled_stride, row):
    """Whether `row` is active (num_sampled_tokens[row] > 0; every row when the pointer is None)."""
    if num_sampled_ptr is None:
        return tl.full((), 1, tl.int1)
    else:
        return tl.load(num_sampled_ptr + row * num_sampled_stride) > 0


@triton.jit
def _kept(logits_ptr, row_offset, cols, col_stride, valid, INT: tl.constexpr, EXP: tl.constexpr):
    """int32 1 where the logit at `cols` is finite (exponent not all ones) and `valid`, else 0."""
    bits = tl.load(
        logits_ptr.to(tl.pointer_type(INT)) + row_offset + cols.to(tl.int64) * col_stride,
        mask=valid,
        other=EXP,
    )
    return ((bits & EXP) != EXP).to(tl.int32)


@triton.jit
def _load_bits(
    logits_ptr,
    row_offset,
    col_stride,
    start,
    vocab_size,
    active,
    INT: tl.constexpr,
    EXP: tl.constexpr,
    N: tl.constexpr,
    UNIT: tl.constexpr,
    PAIRS: tl.constexpr = False,
):
    """Raw bit patterns of columns [start, start + N * UNIT) as an [N, UNIT] tile: one row per
    mask unit (a word of 32 columns, or a byte of 8). PAIRS: 16-bit logits two per int32, an
    [N, UNIT // 2] tile, column 2k in the low half (little-endian; rows contiguous, of even
    length and 4-byte aligned: see `_pairs`).

    Columns past the row and inactive rows read nothing (they load as EXP: not kept). The mask
    is uniform over runs of 16 columns when vocab_size is divisible by 16, so loads vectorise.
    """
    if PAIRS:
        block = logits_ptr.to(tl.pointer_type(tl.int32)) + (row_offset + start) // 2
        pair = tl.arange(0, N)[:, None] * (UNIT // 2) + tl.arange(0, UNIT // 2)[None, :]
        in_row = pair < tl.where(active, (vocab_size - start) // 2, 0)
        bits = tl.load(block + pair, mask=in_row, other=EXP | (EXP << 16))
    else:
        cols = start + tl.arange(0, N)[:, None] * UNIT + tl.arange(0, UNIT)[None, :]
        pointers = logits_ptr.to(tl.pointer_type(INT)) + row_offset + cols.to(tl.int64) * col_stride
        bits = tl.load(pointers, mask=cols < tl.where(active, vocab_size, 0), other=EXP)
    return bits


@triton.jit
def _pack_units(bits, EXP: tl.constexpr, UNIT: tl.constexpr, PAIRS: tl.constexpr = False):
    """[N, UNIT] bit patterns -> ``(units, counts)``: N int32 finiteness units (bit b = column b
    of the unit) and their kept counts.

    One select per element and one sum per unit: the bits are disjoint, so the sum is the OR
    (exact in any width). A byte's sum also carries its count: column b weighs
    ``1 << (b + 8) | 1``, so the byte is ``sum >> 8`` and the count ``sum & 15`` (no popcount,
    which cost bf16 `fused` registers). A word's 32 columns span several threads of a warp
    (shuffles, no block barrier); a byte's 8 columns of a 16-bit dtype are one thread's 16-byte
    vector (no shuffle).
    """
    if PAIRS:  # both halves of an int32 tested at once (SWAR)
        PAIR_EXP: tl.constexpr = EXP | (EXP << 16)
        # A half of (bits & PAIR_EXP) ^ PAIR_EXP is 0 iff its column is not kept; adding 0x7FFF
        # to a half of at most EXP (0x7F80 or 0x7C00) sets its bit 15 iff it is not 0, with no
        # carry into the other half (the int32 sum may wrap: only bits 15 and 31 are kept).
        carried = ((bits & PAIR_EXP) ^ PAIR_EXP) + 0x7FFF7FFF
        # words 0-1 give columns 0-3 at bits 7, 15, 23, 31 of `low`, words 2-3 columns 4-7 of
        # `high`; merged a nibble apart, one multiply moves all eight to bits 24-31 in order
        # (its four shifted copies land on distinct bits, so nothing carries), as compact.cu's
        # kept_byte
        even, odd = tl.split(tl.reshape(carried, (bits.shape[0], 2, 2)))
        low, high = tl.split(_top_bits(even, odd))
        merged = high + ((low >> 4) & 0x0FFFFFFF)
        units = ((merged * 0x00204081) >> 24) & 0xFF
        counts = _popcount(units)
    else:
        column = tl.arange(0, UNIT)[None, :]
        kept = (bits & EXP) != EXP
        if UNIT == 8:
            packed = tl.sum(tl.where(kept, (1 << (column + 8)) | 1, 0), 1)
            units, counts = packed >> 8, packed & 15
        else:
            units = tl.sum(tl.where(kept, 1 << column, 0), 1)
            counts = _popcount(units)
    return units, counts


@triton.jit
def _store_mask_units(
    mask_row_ptr, start, units, vocab_size, N: tl.constexpr, UNIT: tl.constexpr,
    WORDS: tl.constexpr,
):  # fmt: skip
    """Write the mask of columns [start, start + N * UNIT) from its N units.

    Bytes: one byte store each (coalesced, any alignment). Words: one int32 store each when mask
    rows are 4-byte aligned (WORDS), else four byte stores.
    """
    if UNIT == 8:
        index = start // 8 + tl.arange(0, N)
        tl.store(mask_row_ptr + index, units.to(tl.uint8), mask=index < tl.cdiv(vocab_size, 8))
    elif WORDS:
        index = start // 32 + tl.arange(0, N)
        tl.store(
            mask_row_ptr.to(tl.pointer_type(tl.int32)) + index, units, mask=index * 32 < vocab_size
        )
    else:
        byte = tl.arange(0, 4)[None, :]
        index = start // 8 + tl.arange(0, N)[:, None] * 4 + byte
        values = ((units[:, None] >> (byte * 8)) & 0xFF).to(tl.uint8)
        tl.store(mask_row_ptr + index, values, mask=index < tl.cdiv(vocab_size, 8))


@triton.jit
def _load_mask_words(mask_row_ptr, index, valid, vocab_size, WORDS: tl.constexpr):
    """Re-read the written mask words at `index` (any shape): 0 past the row or where `valid`
    (None: everywhere) is false. One int32 load each when mask rows are 4-byte aligned (WORDS),
    else four byte loads."""
    if WORDS:
        in_row = index * 32 < vocab_size
        if valid is not None:
            in_row = in_row & valid
        words = tl.load(mask_row_ptr.to(tl.pointer_type(tl.int32)) + index, mask=in_row, other=0)
    else:  # the last word may be partial: mask bytes, not words
        words = tl.zeros(index.shape, tl.int32)
        for byte in tl.static_range(4):
            offset = index * 4 + byte
            in_row = offset < tl.cdiv(vocab_size, 8)
            if valid is not None:
                in_row = in_row & valid
            words |= tl.load(mask_row_ptr + offset, mask=in_row, other=0).to(tl.int32) << (byte * 8)
    return words


@triton.jit
def _emit_ids(ids_row_ptr, words, slot, cols, width, bits, THREAD_LOOP: tl.constexpr):
    """Write the column of every set bit of `words` (any shape) to consecutive slots from `slot`
    (< width), lowest bit first; column = `cols` + bit. `bits`: the most set bits of any word
    (unused by the PTX loop).

    Triton's loops take a bound uniform over the program, so every word takes `bits` rounds
    (masked stores). THREAD_LOOP, on the GPU: a PTX loop (`_EMIT_PTX`) over each thread's
    `_EMIT_WORDS` words at once, so a warp runs as many rounds as its own fullest word has bits
    (faster on bf16 `fused`: docs/design.md). It wants a tile built from an ``arange``,
    `_EMIT_WORDS` words or a multiple per thread (`_rank_ranges`): a word reduced from a tile is
    held by several threads, which would each run its loop. The interpreter runs no inline PTX;
    a test checks both forms against Python (on the GPU, the PTX loop for THREAD_LOOP).
    """
    if _PTX and THREAD_LOOP:
        address = (ids_row_ptr + slot).to(tl.int64)
        tl.inline_asm_elementwise(
            _EMIT_PTX, _EMIT_CONSTRAINTS, [address, words, slot, cols, width], dtype=tl.int32,
            is_pure=False, pack=_EMIT_WORDS,
        )  # fmt: skip
    else:
        rest = words
        for _ in range(bits):
            tl.store(
                ids_row_ptr + slot, cols + _lowest_bit(rest), mask=(rest != 0) & (slot < width)
            )
            rest = rest & (rest - 1)
            slot += 1


@triton.jit
def _rank_words(ids_row_ptr, words, base, start, width, NW: tl.constexpr, UNIT: tl.constexpr = 32):
    """Write the kept columns of NW mask words (of UNIT columns each, from column `start`) to
    slots base + rank (< width); return the new base.

    Work is per word and per set bit, not per column: the word counts are prefix-summed, then
    every word gives up its lowest set bit per step (column = UNIT * word + trailing zeros) for
    as many steps as the fullest word has bits. A block without kept ids costs one reduction, a
    block of full words (no truncation) one coalesced store of consecutive columns.
    """
    word_counts = _popcount(words)
    total = tl.sum(word_counts, 0)
    if (total == UNIT * NW) & (base < width):  # every word full: consecutive columns, coalesced
        filled = tl.minimum(UNIT * NW, width - base)
        for first in range(0, filled, _FILL_BLOCK):  # a small tile: few registers
            offsets = first + tl.arange(0, _FILL_BLOCK)
            tl.store(ids_row_ptr + base + offsets, start + offsets, mask=offsets < filled)
    elif (total > 0) & (base < width):
        slot = base + tl.cumsum(word_counts, 0) - word_counts
        cols = start + tl.arange(0, NW) * UNIT
        _emit_ids(ids_row_ptr, words, slot, cols, width, tl.max(word_counts, 0), False)
    return base + total


@triton.jit
def _range_tile(range_words, RANGES: tl.constexpr, SUBSTEPS: tl.constexpr, RUNS: tl.constexpr):
    """``(first_word, offset)`` of the flat tile that holds SUBSTEPS x 32 consecutive words of
    each of RANGES ranges of `range_words` words: element e = (substep, range, lane), at word
    ``first_word + step + offset``, range k's words in lanes of warp k. RUNS: lane l holds words
    ``SUBSTEPS * l ..`` (a run, for ranking); else words ``l, l + 32, ..`` (each load
    instruction reads 32 consecutive words, for counting). Its [SUBSTEPS, RANGES, 32] view has
    the flat tile's layout: lanes, warps and registers, so with runs a word's rank is a sum over
    the lane's registers plus one scan across the warp (shuffles), and loads and stores need no
    layout conversion. (Ranking every 32nd word took a warp scan and a warp sum per substep, and
    more instructions.)"""
    element = tl.arange(0, SUBSTEPS * RANGES * 32)
    lane, substep = element % 32, element // (RANGES * 32)
    offset = lane * SUBSTEPS + substep if RUNS else substep * 32 + lane
    return element // 32 % RANGES * range_words, offset


@triton.jit
def _count_ranges(
    mask_row_ptr, range_words, vocab_size, RANGES: tl.constexpr, SUBSTEPS: tl.constexpr,
    WORDS: tl.constexpr,
):  # fmt: skip
    """The kept ids of each of RANGES ranges of `range_words` mask words (independent loads of
    SUBSTEPS words per lane per step: the row's mask is read once more, from L2)."""
    first_word, offset = _range_tile(range_words, RANGES, SUBSTEPS, False)
    counts = tl.zeros(offset.shape, tl.int32)
    for step in range(0, range_words, SUBSTEPS * 32):
        index = first_word + step + offset
        words = _load_mask_words(
            mask_row_ptr, index, step + offset < range_words, vocab_size, WORDS
        )
        counts += _popcount(words)
    return tl.sum(tl.sum(tl.reshape(counts, (SUBSTEPS, RANGES, 32)), 2), 0)


@triton.jit
def _rank_ranges(
    ids_row_ptr, mask_row_ptr, range_counts, range_words, vocab_size, width, RANGES: tl.constexpr,
    SUBSTEPS: tl.constexpr, WORDS: tl.constexpr,
):  # fmt: skip
    """Write every kept id of a row whose count fits in W, one range of mask words per warp.

    Range k is words [k * range_words, (k + 1) * range_words) and its first id has rank
    ``sum(range_counts[:k])``. A step takes SUBSTEPS x 32 consecutive words of every range as
    `_range_tile`'s flat tile, so the ranks need only scans across a warp, and on the GPU the
    bit loop needs no block-wide bound: each warp's stops at its own fullest word (`_emit_ids`;
    the step's fullest word, a block-wide maximum, bounds the interpreter's and is compiled out
    on the GPU, where a maximum per step took three barriers). No step waits for the other
    warps. Nothing stops early: every id is written, since count <= W. (The loads' range masks
    only save work: a word past its range is the next range's, in order, and would be written
    again to the same slot.) A thread holds SUBSTEPS words (RANGES is the number of warps), a
    multiple of the PTX loop's `_EMIT_WORDS` (`_fused_constexprs` checks).
    """
    TILE: tl.constexpr = SUBSTEPS * RANGES * 32
    first_word, offset = _range_tile(range_words, RANGES, SUBSTEPS, True)
    base = tl.cumsum(range_counts, 0) - range_counts
    words = _load_mask_words(
        mask_row_ptr, first_word + offset, offset < range_words, vocab_size, WORDS
    )
    for step in range(0, range_words, SUBSTEPS * 32):
        ranked = words  # the next step's words load while these are ranked
        index = first_word + step + offset
        next_offset = step + SUBSTEPS * 32 + offset
        words = _load_mask_words(
            mask_row_ptr, first_word + next_offset, next_offset < range_words, vocab_size, WORDS
        )
        word_counts = _popcount(ranked)
        counts = tl.reshape(word_counts, (SUBSTEPS, RANGES, 32))
        # ids before each word: the earlier lanes of its range (one warp scan of the lanes'
        # sums) and the lane's earlier words (its registers)
        lane_counts = tl.sum(counts, 0)
        slot = (base[:, None] + tl.cumsum(lane_counts, 1) - lane_counts)[None, :, :]
        slot += tl.cumsum(counts, 0) - counts
        _emit_ids(
            ids_row_ptr, ranked, tl.reshape(slot, (TILE,)), index * 32, width,
            tl.max(word_counts, 0), True,
        )  # fmt: skip
        base += tl.sum(lane_counts, 1)


@triton.jit
def _fill_padding(ids_row_ptr, first_slot, lo, hi, PAD: tl.constexpr):
    """Write -1 to the slots of [first_slot, first_slot + PAD) that lie in [lo, hi)."""
    slot = first_slot + tl.arange(0, PAD)
    tl.store(ids_row_ptr + slot, tl.full((PAD,), -1, tl.int32), mask=(slot >= lo) & (slot < hi))


@triton.jit
def _finish_row(ids_row_ptr, counts_ptr, row, count, width, PAD: tl.constexpr):
    """Write counts[row] and the -1 padding slots [min(count, width), width) of one row."""
    tl.store(counts_ptr + row, count)
    lo = tl.minimum(count, width)
    for first_slot in range(lo // PAD * PAD, width, PAD):
        _fill_padding(ids_row_ptr, first_slot, lo, width, PAD)


# --- kernels ----------------------------------------------------------------------------------


@triton.jit
def _split_pass1(
    logits_ptr,
    row_stride,
    col_stride,
    num_sampled_ptr,
    num_sampled_stride,
    mask_row,
    row,
    start,
    vocab_size,
    INT: tl.constexpr,
    EXP: tl.constexpr,
    CHUNK: tl.constexpr,
    WORDS: tl.constexpr,
):
    """Pass 1 of one split tile (columns [start, start + CHUNK) of `row`): write the tile's mask
    and return ``(words, count)``, its CHUNK // 32 mask words and its kept count."""
    active = _is_active(num_sampled_ptr, num_sampled_stride, row)
    bits = _load_bits(
        logits_ptr, row * row_stride, col_stride, start, vocab_size, active, INT, EXP,
        CHUNK // 32, 32,
    )  # fmt: skip
    words, word_counts = _pack_units(bits, EXP, 32)
    _store_mask_units(mask_row, start, words, vocab_size, CHUNK // 32, 32, WORDS)
    return words, tl.sum(word_counts, 0)


@triton.jit
def _split_pass2(ids_row, words, prefix, count, start, width, CHUNK: tl.constexpr):
    """Pass 2 of one split tile: its `count` kept ids to slots prefix + rank (< width), ranked
    from `words`, the tile's mask words, still in registers since pass 1. Nothing is written when
    the prefix already fills the row or the tile keeps nothing.
    """
    if (prefix < width) & (count > 0):
        _rank_words(ids_row, words, prefix, start, width, CHUNK // 32)


@triton.jit(do_not_specialize=["num_sampled_stride", "width", "num_chunks"])
def _split_kernel(
    logits_ptr,
    num_sampled_ptr,
    ids_ptr,
    counts_ptr,
    mask_ptr,
    state_ptr,
    row_stride,
    col_stride,
    num_sampled_stride,
    vocab_size,
    width,
    num_chunks,
    INT: tl.constexpr,
    EXP: tl.constexpr,
    CHUNK: tl.constexpr,
    TILES_BLOCK: tl.constexpr,
    PAD: tl.constexpr,
    WORDS: tl.constexpr,
):
    """The split tiles in one launch: pass 1, a decoupled look-back for the prefix, pass 2.

    `state_ptr` (a zeroed scratch, left zero): [0] ticket counter, [1] done counter, [2 + t] flag
    of tile t (0: not yet published, else its kept count + 1). A program works on the tile of the
    ticket it takes, not on its program id: every tile it waits for was taken by a program that
    has started before it, so the wait ends whatever order the hardware starts programs in.
    """
    num_tiles = tl.num_programs(0)
    tile = tl.atomic_add(state_ptr, 1, sem="relaxed")  # the ticket: tiles are taken in order
    flags = state_ptr + 2
    row = (tile // num_chunks).to(tl.int64)
    chunk = tile % num_chunks
    start = chunk * CHUNK
    mask_row = mask_ptr + row * tl.cdiv(vocab_size, 8)
    words, own = _split_pass1(
        logits_ptr, row_stride, col_stride, num_sampled_ptr, num_sampled_stride, mask_row, row,
        start, vocab_size, INT, EXP, CHUNK, WORDS,
    )  # fmt: skip
    # The flag carries the count itself and no program reads another's mask or ids, so the
    # publication needs no ordering (relaxed: no fence waits for this tile's mask stores).
    tl.atomic_xchg(flags + tile, own + 1, sem="relaxed")
    # Look back over the row's earlier chunks, a block of flags at a time, re-reading the block's
    # unpublished flags only (volatile loads: never hoisted or cached; re-reading whole blocks
    # from every waiting program flooded the L2 at R=1) until all are published. The last chunk
    # needs the row total; any other chunk stops once the prefix fills the row, and needs no
    # prefix if it keeps nothing.
    row_flags = flags + row * num_chunks
    last = chunk == num_chunks - 1
    prefix = tl.zeros((), tl.int32)
    first = tl.zeros((), tl.int32)
    while (first < chunk) & (last | ((own > 0) & (prefix < width))):
        index = first + tl.arange(0, TILES_BLOCK)
        seen = tl.load(row_flags + index, mask=index < chunk, other=1, volatile=True)
        while tl.min(seen, 0) == 0:  # re-read only the flags not yet published
            pending = seen == 0
            seen = tl.where(
                pending, tl.load(row_flags + index, mask=pending, other=0, volatile=True), seen
            )
        prefix += tl.sum(seen - 1, 0)
        first += TILES_BLOCK
    # Every thread's flag reads precede the done count (whose acq_rel orders this program's
    # publication before it); the program completing the count resets the state to zero.
    tl.debug_barrier()
    done = tl.atomic_add(state_ptr + 1, 1)
    if done == num_tiles - 1:
        for first_word in range(0, num_tiles + 2, TILES_BLOCK):
            index = first_word + tl.arange(0, TILES_BLOCK)
            tl.store(
                state_ptr + index, tl.zeros((TILES_BLOCK,), tl.int32), mask=index < num_tiles + 2
            )
    ids_row = ids_ptr + row * width
    if last:  # only the last chunk knows the total: it writes the count and all the padding
        _finish_row(ids_row, counts_ptr, row, prefix + own, width, PAD)
    _split_pass2(ids_row, words, prefix, own, start, width, CHUNK)


@triton.jit(do_not_specialize=["num_sampled_stride", "width"])
def _fused_kernel(
    logits_ptr,
    num_sampled_ptr,
    ids_ptr,
    counts_ptr,
    mask_ptr,
    row_stride,
    col_stride,
    num_sampled_stride,
    vocab_size,
    width,
    INT: tl.constexpr,
    EXP: tl.constexpr,
    BLOCK: tl.constexpr,
    RANK_WORDS: tl.constexpr,
    PAD: tl.constexpr,
    WORDS: tl.constexpr,
    UNIT: tl.constexpr,
    RANGES: tl.constexpr,
    SUBSTEPS: tl.constexpr,
    COUNT_SUBSTEPS: tl.constexpr,
    PAIRS: tl.constexpr,
    RANKED: tl.constexpr,
):
    """One program per row, one launch; one pass (RANKED) or two.

    Pass 1 streams the logits, one block ahead: mask units (UNIT columns: bytes or words)
    written. RANKED: each block's units are ranked as they stream (`_rank_words`: a block-wide
    scan of their counts) and their ids written to the row's slots; the row is done after the
    loop. Otherwise their counts accumulate per thread, with no block-wide reduction inside the
    loop; after one reduction (the row count) and a barrier (pass 1's mask stores become visible
    to the whole block), pass 2 ranks from the words, L2-hot and 1/16 of 16-bit logits' bytes. A row
    whose count fits in W (every id is written) is cut into RANGES ranges of words, one per
    warp: their counts are read once more (`_count_ranges`), then every warp ranks its range
    with warp scans (`_rank_ranges`). A truncated row is ranked from its start until W ids are
    written (`_rank_words`, block-wide steps: it stops early; a full row takes one while
    W <= 32 * RANK_WORDS).
    """
    row = tl.program_id(0).to(tl.int64)
    active = _is_active(num_sampled_ptr, num_sampled_stride, row)
    row_offset = row * row_stride
    mask_row = mask_ptr + row * tl.cdiv(vocab_size, 8)
    ids_row = ids_ptr + row * width
    if RANKED:  # the ids ranked so far
        count = tl.zeros((), tl.int32)
    else:  # per-thread counts of each unit position, reduced after the loop
        unit_counts = tl.zeros((BLOCK // UNIT,), tl.int32)
    bits = _load_bits(
        logits_ptr, row_offset, col_stride, 0, vocab_size, active, INT, EXP, BLOCK // UNIT, UNIT,
        PAIRS,
    )  # fmt: skip
    for start in range(0, vocab_size, BLOCK):
        units, counts = _pack_units(bits, EXP, UNIT, PAIRS)
        bits = _load_bits(  # the next block's loads are in flight while this one is stored
            logits_ptr, row_offset, col_stride, start + BLOCK, vocab_size, active, INT, EXP,
            BLOCK // UNIT, UNIT, PAIRS,
        )  # fmt: skip
        _store_mask_units(mask_row, start, units, vocab_size, BLOCK // UNIT, UNIT, WORDS)
        if RANKED:
            count = _rank_words(ids_row, units, count, start, width, BLOCK // UNIT, UNIT)
        else:
            unit_counts += counts
    if not RANKED:
        count = tl.sum(unit_counts, 0)
    _finish_row(ids_row, counts_ptr, row, count, width, PAD)
    if RANKED:
        return
    tl.debug_barrier()
    if count <= width:
        if count > 0:
            range_words = tl.cdiv(tl.cdiv(vocab_size, 32), RANGES)
            range_counts = _count_ranges(
                mask_row, range_words, vocab_size, RANGES, COUNT_SUBSTEPS, WORDS
            )
            _rank_ranges(
                ids_row, mask_row, range_counts, range_words, vocab_size, width, RANGES, SUBSTEPS,
                WORDS,
            )  # fmt: skip
    else:
        base = tl.zeros((), tl.int32)
        start = tl.zeros((), tl.int32)
        words = _load_mask_words(mask_row, tl.arange(0, RANK_WORDS), None, vocab_size, WORDS)
        while base < width:
            ranked = words  # the next step's words load while these are ranked
            index = start // 32 + RANK_WORDS + tl.arange(0, RANK_WORDS)
            words = _load_mask_words(mask_row, index, None, vocab_size, WORDS)
            base = _rank_words(ids_row, ranked, base, start, width, RANK_WORDS)
            start += RANK_WORDS * 32


@triton.jit
def _rowwise_kernel(
    logits_ptr,
    num_sampled_ptr,
    ids_ptr,
    counts_ptr,
    mask_ptr,
    row_stride,
    col_stride,
    num_sampled_stride,
    vocab_size,
    width,
    INT: tl.constexpr,
    EXP: tl.constexpr,
    BLOCK: tl.constexpr,
    PAD: tl.constexpr,
):
    """Upstream vLLM's design (PR #54901): per row, per block, an element-level cumsum ranks ids.

    Differences from upstream, all needed by the contract: finiteness on the bit pattern, int64
    offsets, optional num_sampled_tokens, and the -1 padding after the count.
    """
    row = tl.program_id(0).to(tl.int64)
    active = _is_active(num_sampled_ptr, num_sampled_stride, row)
    ids_row = ids_ptr + row * width
    mask_row = mask_ptr + row * tl.cdiv(vocab_size, 8)
    count = tl.zeros((), tl.int32)
    for start in range(0, vocab_size, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        keep = _kept(logits_ptr, row * row_stride, cols, col_stride, cols < vocab_size, INT, EXP)
        keep = keep & active.to(tl.int32)
        pos = count + tl.cumsum(keep, 0) - keep
        tl.store(ids_row + pos, cols, mask=(keep != 0) & (pos < width))
        count += tl.sum(keep, 0)
        bits = tl.reshape(keep, (BLOCK // 8, 8)) << tl.arange(0, 8)[None, :]
        byte_index = start // 8 + tl.arange(0, BLOCK // 8)
        tl.store(
            mask_row + byte_index,
            tl.sum(bits, 1).to(tl.uint8),
            mask=byte_index < tl.cdiv(vocab_size, 8),
        )
    _finish_row(ids_row, counts_ptr, row, count, width, PAD)


# --- host side --------------------------------------------------------------------------------


def _sm_count(device: torch.device) -> int:
    """Number of SMs of a CUDA device (read once per device), or a fixed stand-in on the CPU."""
    return sm_count(device.index) if device.type == "cuda" else _CPU_SM_COUNT


@functools.lru_cache(maxsize=1024)
def _split_config(num_reqs: int, vocab_size: int, sm_count: int) -> tuple[int, int, int]:
    """(CHUNK, num_chunks, num_warps) of the split variant for this shape.

    CHUNK is the largest of _SPLIT_CHUNKS that still gives every SM `_SPLIT_TILES_PER_SM`
    tiles (or the smallest): a few buckets, so a new shape rarely compiles a new kernel.
    """
    target = _SPLIT_TILES_PER_SM * sm_count
    chunk = next(
        (c for c in _SPLIT_CHUNKS if num_reqs * triton.cdiv(vocab_size, c) >= target),
        _SPLIT_CHUNKS[-1],
    )
    num_warps = max(1, min(8, chunk // _SPLIT_COLUMNS_PER_WARP))
    return chunk, triton.cdiv(vocab_size, chunk), num_warps


def _data_pointers(
    logits: torch.Tensor, num_sampled_tokens: torch.Tensor | None, out: SamplingMask
) -> tuple:
    """The kernels' leading arguments as ints, in their order: logits, num_sampled_tokens (None
    when absent: the kernels specialise on it), ids, counts, mask. Triton's launcher passes an
    int on as it is; for a tensor it calls ``data_ptr`` and asks the driver about the pointer."""
    return (
        logits.data_ptr(),
        None if num_sampled_tokens is None else num_sampled_tokens.data_ptr(),
        out.token_ids.data_ptr(),
        out.counts.data_ptr(),
        out.packed_mask.data_ptr(),
    )


def _call_key(
    logits: torch.Tensor,
    num_sampled_tokens: torch.Tensor | None,
    out: SamplingMask,
    variant: str,
    pointers: tuple,
) -> tuple | None:
    """What a call's launch is a function of besides its data pointers (kernel, grid, the other
    arguments, and all the JIT specialises on), or ``None`` when a pointer is not 16-byte
    aligned: the JIT specialises on that, so such calls always go through it."""
    logits_ptr, counts_in_ptr, ids_ptr, counts_ptr, mask_ptr = pointers
    if (logits_ptr | (counts_in_ptr or 0) | ids_ptr | counts_ptr | mask_ptr) & 15:
        return None
    return (variant, logits.device.index, *call_shape(logits, num_sampled_tokens, out))


class _Plan:
    """One call key's launch (`_call_key`), all of it but the data pointers and the stream.

    ``enqueue(*grid, stream, *head, *pointers, [state,] *tail)`` queues the kernel: `enqueue` is
    Triton's C launcher itself where its arguments are known (`_RAW_LAUNCHER`) and the kernel
    needs no global or profile scratch, which is all `CompiledKernel.run` (a Python
    `CudaLauncher`) adds to it; else `CompiledKernel.run`. ``head`` is what either takes between
    the stream and the kernel's arguments (no launch metadata or hooks); ``tail`` is the kernel's
    arguments after its pointers, constexprs included (the launcher skips those).
    """

    __slots__ = ("enqueue", "grid", "head", "scratch_size", "tail")

    def __init__(self, compiled, grid: tuple, tail: tuple, scratch_size: int) -> None:
        run = compiled.run
        metadata = (compiled.packed_metadata, None, None, None)
        raw = _raw_launcher(run) if _RAW_LAUNCHER else None
        if raw is not None:
            launch, cooperative_grid, pdl = raw
            scratches = (None, None)  # global and profile: none (`_raw_launcher`)
            self.enqueue = launch
            self.head = (compiled.function, cooperative_grid, pdl, *scratches, *metadata)
        else:
            self.enqueue, self.head = run, (compiled.function, *metadata)
        self.grid, self.tail, self.scratch_size = grid, tail, scratch_size

    def launch(self, pointers: tuple, device: torch.device) -> None:
        """Queue the kernel on the current stream of ``device`` (the current device); ``split``
        holds the stream's zeroed scratch until it is queued."""
        stream = raw_stream(device.index)
        if not self.scratch_size:
            self.enqueue(*self.grid, stream, *self.head, *pointers, *self.tail)
            return
        zeroed = scratch.for_stream(device.index, stream)
        state = zeroed.acquire(self.scratch_size, device)
        try:
            self.enqueue(*self.grid, stream, *self.head, *pointers, state.data_ptr(), *self.tail)
        finally:
            zeroed.release()


def _raw_launcher(run) -> tuple | None:
    """``(launch, cooperative_grid, pdl)`` of a CompiledKernel's launcher (`_Plan`), or ``None``
    when the kernel needs a global or profile scratch, which only ``run`` allocates, or the
    launcher lacks one of them."""
    try:
        if run.global_scratch_size or run.profile_scratch_size:
            return None
        return run.launch, run.launch_cooperative_grid, run.launch_pdl
    except AttributeError:
        return None


def _launch(
    kernel,
    grid: tuple,
    num_warps: int,
    tensors: tuple,
    scalars: tuple,
    constexprs: dict,
    call_key: tuple | None,
    scratch_size: int = 0,
) -> None:
    """Launch through Triton's JIT, which compiles on a specialisation's first launch, and keep
    the launch as the call key's `_Plan` (no key: the interpreter, an unaligned pointer).

    Under a lock: the JIT's cache fills (and the interpreter's global patching) are not
    guaranteed thread safe. `tensors` are the kernel's pointer arguments (`_data_pointers`'
    order, then split's state), `scalars` its other arguments, `constexprs` in its parameter
    order: the plan passes all of them positionally.
    """
    with _launch_lock:
        compiled = kernel[grid](*tensors, *scalars, **constexprs, num_warps=num_warps)
    if call_key is not None and compiled is not None:
        if list(constexprs) != kernel.arg_names[len(tensors) + len(scalars) :]:
            raise ValueError(f"{kernel.__name__}: constexprs out of parameter order")
        remember(
            _plans, call_key, _Plan(compiled, grid, (*scalars, *constexprs.values()), scratch_size)
        )


def _stream_scratch(device: torch.device) -> scratch.StreamScratch:
    """The current stream's reused zeroed scratch (one per CPU for the interpreter): ``split``'s
    state, zero between calls."""
    if device.type != "cuda":
        return scratch.for_stream(-1, 0)
    return scratch.for_stream(device.index, raw_stream(device.index))


def _fused_min_rows(device: torch.device) -> int:
    return math.ceil(_FUSED_MIN_ROWS_PER_SM * _sm_count(device))


def _fused_block_bytes(dtype: torch.dtype, num_reqs: int, device: torch.device) -> int:
    """Logit bytes per `fused` iteration: `_FUSED_SMALL_BLOCK_BYTES` in the band of rows per SM
    that `_FUSED_SMALL_BLOCK_ROWS_PER_SM` gives for the element size, else `_FUSED_BLOCK_BYTES`."""
    low, high = _FUSED_SMALL_BLOCK_ROWS_PER_SM[dtype.itemsize]
    rows_per_sm = num_reqs / _sm_count(device)
    return _FUSED_SMALL_BLOCK_BYTES if low < rows_per_sm <= high else _FUSED_BLOCK_BYTES


def _fused_constexprs(dtype: torch.dtype, words: bool, pairs: bool, block_bytes: int) -> dict:
    """`_fused_kernel`'s constexprs for logits of ``dtype``, in its parameter order (also what
    benchmarks/triton_registers.py compiles)."""
    int_type, exponent, itemsize = _BITS[dtype]
    if _FUSED_RANGE_SUBSTEPS % _EMIT_WORDS.value:  # else a loop gets undefined operands
        raise ValueError("_FUSED_RANGE_SUBSTEPS must be a multiple of _EMIT_WORDS")
    return {
        "INT": int_type, "EXP": exponent, "BLOCK": block_bytes // itemsize,
        "RANK_WORDS": _FUSED_RANK_WORDS, "PAD": _PAD_BLOCK, "WORDS": words,
        "UNIT": _FUSED_UNIT_COLUMNS[itemsize], "RANGES": _FUSED_NUM_WARPS,
        "SUBSTEPS": _FUSED_RANGE_SUBSTEPS, "COUNT_SUBSTEPS": _FUSED_COUNT_SUBSTEPS,
        "PAIRS": pairs and itemsize == 2 and _FUSED_UNIT_COLUMNS[itemsize] == 8,
        "RANKED": _FUSED_RANKS_IN_PASS1[itemsize],
    }  # fmt: skip


def _pairs(logits: torch.Tensor, row_stride: int, col_stride: int) -> bool:
    """Whether the rows' layout lets `fused` read 16-bit logits two columns per int32 (only
    16-bit kernels do, see `_fused_constexprs`): every row a contiguous run of an even number of
    columns starting 4-byte aligned (otherwise a pair would straddle two rows, or a row's end
    and the next allocation)."""
    return (
        col_stride == 1
        and (row_stride % 2 == 0 or logits.shape[0] == 1)
        and logits.shape[1] % 2 == 0
        and logits.data_ptr() % 4 == 0
    )


def _auto_variant(num_reqs: int, device: torch.device) -> str:
    """`fused` from `_fused_min_rows` rows on, else `split`."""
    return "fused" if num_reqs >= _fused_min_rows(device) else "split"


def compact(
    logits: torch.Tensor,
    num_sampled_tokens: torch.Tensor | None,
    out: SamplingMask,
    variant: str = VARIANTS[0],
) -> None:
    device = logits.device
    call_key = None
    if device.type == "cuda":
        if device.index != current_device():
            with torch.cuda.device(device):  # Triton launches on the *current* device
                compact(logits, num_sampled_tokens, out, variant)
            return
        pointers = _data_pointers(logits, num_sampled_tokens, out)
        call_key = _call_key(logits, num_sampled_tokens, out, variant, pointers)
        plan = _plans.get(call_key)
        if plan is not None:  # the per-call path
            plan.launch(pointers, device)
            return
    _first_launch(logits, num_sampled_tokens, out, variant, call_key)


def _first_launch(
    logits: torch.Tensor,
    num_sampled_tokens: torch.Tensor | None,
    out: SamplingMask,
    variant: str,
    call_key: tuple | None,
) -> None:
    """Choose the variant's kernel, grid and arguments for this call and launch it through the
    JIT (`_launch`), which keeps it as the call key's plan."""
    device = logits.device
    num_reqs, vocab_size = logits.shape
    int_type, exponent, _ = _BITS[logits.dtype]
    row_stride, col_stride = logits.stride()
    num_sampled_stride = 0 if num_sampled_tokens is None else num_sampled_tokens.stride(0)
    mask = out.packed_mask
    words = mask.shape[1] % 4 == 0 and mask.data_ptr() % 4 == 0  # int32 access to mask rows
    tensors = (logits, num_sampled_tokens, out.token_ids, out.counts, mask)
    scalars = (row_stride, col_stride, num_sampled_stride, vocab_size, out.token_ids.shape[1])
    if variant == "auto":
        variant = _auto_variant(num_reqs, device)
    if variant == "split":
        chunk, num_chunks, num_warps = _split_config(num_reqs, vocab_size, _sm_count(device))
        grid = (num_reqs * num_chunks, 1, 1)
        zeroed = _stream_scratch(device)
        state = zeroed.acquire(2 + grid[0], device)
        try:
            if state.data_ptr() & 15:  # a whole allocation: never, but keyed if so
                call_key = None
            _launch(
                _split_kernel, grid, num_warps, (*tensors, state), (*scalars, num_chunks),
                {"INT": int_type, "EXP": exponent, "CHUNK": chunk, "TILES_BLOCK": _TILES_BLOCK,
                 "PAD": _PAD_BLOCK, "WORDS": words}, call_key, 2 + grid[0],
            )  # fmt: skip
        finally:
            zeroed.release()
    elif variant == "fused":
        constexprs = _fused_constexprs(
            logits.dtype, words, _pairs(logits, row_stride, col_stride),
            _fused_block_bytes(logits.dtype, num_reqs, device),
        )  # fmt: skip
        _launch(
            _fused_kernel, (num_reqs, 1, 1), _FUSED_NUM_WARPS, tensors, scalars, constexprs,
            call_key,
        )  # fmt: skip
    elif variant == "rowwise":  # upstream's launch: one program per row, default 4 warps
        _launch(
            _rowwise_kernel, (num_reqs, 1, 1), _ROWWISE_NUM_WARPS, tensors, scalars,
            {"INT": int_type, "EXP": exponent, "BLOCK": _ROWWISE_BLOCK, "PAD": _PAD_BLOCK},
            call_key,
        )  # fmt: skip
    else:  # the registry validates names; direct callers get a clear error
        raise ValueError(f"triton variant must be one of {', '.join(VARIANTS)}, got {variant!r}")
