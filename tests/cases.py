"""The conformance cases every backend must pass, as data (shared by tests and the fuzzer)."""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

import torch

from masks import registry
from masks.testing import BIT_FIELDS, make_logits

NEG_INF = float("-inf")
TIE_ROW = [6.0, 5.0, 4.0, 4.0, 4.0, NEG_INF, NEG_INF, NEG_INF]
ALL_DTYPES = (torch.float32, torch.float16, torch.bfloat16, torch.float64)
VOCAB = 20_001
EMULATED_VOCAB = 2_101
"""Slow emulations (`SLOW_EMULATIONS`) get the same edges on a smaller vocabulary, so CI stays
within minutes."""
SLOW_EMULATIONS = ("TRITON_INTERPRET", "NUMBA_ENABLE_CUDASIM")
"""Emulations that run Python per GPU thread (~0.2 ms per logit). The CuPy backend's (its CUDA C
built for the CPU) runs the native cases in seconds, so it gets them."""


def slow_emulation(backend: str) -> bool:
    """Whether ``backend`` runs through one of the `SLOW_EMULATIONS` here."""
    spec, _ = registry.parse_backend(backend)
    return spec is not None and spec.emulated() and spec.emulation_env in SLOW_EMULATIONS


def edge_supports(vocab_size: int) -> tuple[int, ...]:
    """Empty, single, under/at/over a 512 width, past 2048, and the whole vocabulary."""
    return (0, 1, 7, 511, 512, 513, 2053, vocab_size)


@dataclass(frozen=True)
class Case:
    """One input: ``layout`` says how the logits tensor is laid out in memory."""

    name: str
    num_reqs: int
    vocab_size: int
    supports: tuple[int, ...] | int | str
    width: int
    dtype: torch.dtype = torch.float32
    layout: str = "contiguous"  # contiguous | column_slice | transposed | column_stride
    num_sampled: tuple[int, ...] | None = None
    num_sampled_dtype: torch.dtype = torch.int32
    seed: int = 0
    values: tuple[float, ...] | None = field(default=None)  # explicit single-row logits
    bit_patterns: str | None = None  # "every" or "boundary": a 16-bit dtype's patterns (R x V)
    kept_ranges: tuple[tuple[tuple[int, int], ...], ...] | None = None
    """Row r keeps the columns of its ranges ``[a, b)`` only."""

    def logits(self, device: torch.device | str = "cpu") -> torch.Tensor:
        if self.values is not None:
            dense = torch.tensor([self.values], dtype=self.dtype)
        elif self.bit_patterns is not None:
            patterns = bit_patterns(self.dtype, self.bit_patterns, self.seed)
            dense = patterns.reshape(self.num_reqs, self.vocab_size)
        elif self.kept_ranges is not None:
            dense = make_logits(self.num_reqs, self.vocab_size, "full", self.dtype, self.seed)
            for row, ranges in zip(dense, self.kept_ranges, strict=True):
                kept = torch.zeros(self.vocab_size, dtype=torch.bool)
                for first, stop in ranges:
                    if not 0 <= first < stop <= self.vocab_size:  # a slice would clip it
                        raise ValueError(f"{self.name}: range {(first, stop)} outside the row")
                    kept[first:stop] = True
                row[~kept] = NEG_INF
        else:
            dense = make_logits(
                self.num_reqs, self.vocab_size, self.supports, self.dtype, self.seed, junk=True
            )
        return lay_out(dense.to(device), self.layout)

    def num_sampled_tokens(self, device: torch.device | str = "cpu") -> torch.Tensor | None:
        if self.num_sampled is None:
            return None
        return torch.tensor(self.num_sampled, dtype=self.num_sampled_dtype, device=device)


def float64_from_bits(bits: int) -> float:
    """The float64 of an unsigned 64-bit pattern (NaN payloads: Python floats keep them)."""
    return struct.unpack("<d", struct.pack("<Q", bits))[0]


def bit_patterns(dtype: torch.dtype, which: str, seed: int) -> torch.Tensor:
    """Bit patterns of a 16-bit ``dtype`` in a seeded order, flat: ``"every"`` one of the 2**16
    (every NaN payload, both infinities, subnormals, zeros), ``"boundary"`` every sign and
    exponent with the mantissas 0, 1, top bit and all ones (the emulations' share: 0.2 ms per
    logit). Each sits next to neighbours of every kind, for kernels that test several elements
    of a word at once."""
    if which == "every":
        patterns = torch.arange(1 << 16)
    elif which == "boundary":
        mantissa_bits = BIT_FIELDS[dtype][1]
        mantissas = torch.tensor([0, 1, 1 << (mantissa_bits - 1), (1 << mantissa_bits) - 1])
        sign_and_exponent = torch.arange(1 << (16 - mantissa_bits)) << mantissa_bits
        patterns = (sign_and_exponent[:, None] | mantissas[None, :]).flatten()
    else:
        raise ValueError(f"unknown bit patterns {which!r}")
    order = torch.randperm(len(patterns), generator=torch.Generator().manual_seed(seed))
    unsigned = patterns[order]
    signed = torch.where(unsigned < 1 << 15, unsigned, unsigned - (1 << 16))
    return signed.to(torch.int16).view(dtype)


def lay_out(dense: torch.Tensor, layout: str) -> torch.Tensor:
    """The same values as ``dense`` in the memory layout a serving engine may hand over."""
    num_reqs, vocab_size = dense.shape
    if layout == "contiguous":
        return dense
    if layout == "column_slice":  # a column slice of a padded buffer
        buffer = torch.full(
            (num_reqs, vocab_size + 13), 7.0, dtype=dense.dtype, device=dense.device
        )
        buffer[:, 5 : 5 + vocab_size] = dense
        return buffer[:, 5 : 5 + vocab_size]
    if layout == "transposed":  # a [V, R] buffer viewed as [R, V]
        return dense.t().contiguous().t()
    if layout == "column_stride":  # every other column of a wider buffer
        buffer = torch.full((num_reqs, 2 * vocab_size), 3.0, dtype=dense.dtype, device=dense.device)
        buffer[:, ::2] = dense
        return buffer[:, ::2]
    raise ValueError(f"unknown layout {layout!r}")


def conformance_cases(slow: bool = False) -> list[Case]:
    """Every case, on a smaller vocabulary and with fewer bit patterns for a slow emulation."""
    vocab_size = EMULATED_VOCAB if slow else VOCAB
    edges = edge_supports(vocab_size)
    cases = [
        Case(f"edges-V{vocab_size}-W{w}-{str(d)[6:]}", len(edges), vocab_size, edges, w, d)
        for w in (512, 2048)
        for d in ALL_DTYPES
    ]
    cases += [
        Case(
            f"inactive-{str(t)[6:]}",
            len(edges),
            vocab_size,
            edges,
            512,
            num_sampled=num_sampled,
            num_sampled_dtype=t,
        )
        for t, num_sampled in (
            (torch.int32, (1, 0, 3, -1, 0, 2, 0, 1)),
            # int64 counts whose low 32 bits say the opposite (a kernel that narrows them)
            (torch.int64, (1, 0, 1 << 32, -1, 1 - (1 << 32), 1 << 31, 0, 1)),
        )
    ]
    cases += [
        Case(f"layout-{layout}-{str(d)[6:]}", 5, 1_003, (0, 3, 64, 700, 1_003), 100, d, layout)
        for layout in ("column_slice", "transposed", "column_stride")
        for d in (torch.float32, torch.bfloat16)
    ]
    cases += [
        Case("tie-row-W3", 1, 8, (), 3, values=tuple(TIE_ROW)),
        Case(
            "specials",
            1,
            12,
            (),
            4,
            values=(
                float("nan"),
                -float("nan"),
                float("inf"),
                NEG_INF,
                0.0,
                -0.0,
                1e-40,
                3.0e38,
                -3.0e38,
                float("nan"),
                1.0,
                NEG_INF,
            ),
        ),
        Case(
            "specials-float64",
            1,
            16,
            (),
            8,
            torch.float64,
            values=(
                float64_from_bits(0x7FF0_0000_0000_0001),  # NaN, smallest payload
                1e300,
                float64_from_bits(0xFFF8_0000_0000_0001),
                -1e300,
                float("inf"),
                1.7976931348623157e308,  # the largest finite float64
                NEG_INF,
                -1.7976931348623157e308,
                5e-324,  # the smallest subnormal
                float("nan"),
                -5e-324,
                3.5e38,  # past float32's range: finite only in float64
                -0.0,
                1e-310,
                float64_from_bits(0x7FFF_FFFF_FFFF_FFFF),
                1.0,
            ),
        ),
        Case("all-masked", 4, 999, 0, 64),
        Case("width-0", 3, 1_000, (0, 5, 1_000), 0),
        Case("width-over-vocab", 3, 37, (0, 5, 37), 2_048),
        Case("width-equals-vocab", 2, 64, (64, 63), 64),
        Case("single-column", 3, 1, (1, 0, 1), 2_048),
    ]
    # Full rows cut at a W that is no multiple of a kernel's fill tile: a fill one slot too long
    # writes slot W, past the last row's ids (`poisoned`'s guard).
    cases += [Case(f"full-W100-{str(d)[6:]}", 2, 1_024, "full", 100, d) for d in ALL_DTYPES]
    cases += [Case(f"vocab-{v}", 3, v, (0, v // 2, v), 5) for v in (2, 7, 9, 31, 33, 255, 257)]
    # 16-bit rows of an even length that ends inside a mask byte, which kernels reading two
    # columns per 32 bits (Triton's paired loads) must stop in; and their inactive rows.
    cases += [
        Case(f"vocab-{v}-{str(d)[6:]}", 3, v, (v, v // 2, 0), 5, d, seed=v)
        for v in (2, 6, 50)
        for d in (torch.float16, torch.bfloat16)
    ]
    cases += [
        Case(f"inactive-V{v}-{str(d)[6:]}", 3, v, (v, v, v), 5, d, num_sampled=(0, 1, 0))
        for v in (2, 50)
        for d in (torch.float16, torch.bfloat16)
    ]
    # Runs of kept columns, where a kernel that splits a row between warps or programs finds
    # many ids in one part (CUDA C's `fused` stages 256 ids per warp, then ranks the rest from
    # the mask): 600 from an eighth of the row on, runs at both ends; then, on rows of whole
    # 16-byte vectors (the vector loads), 100 ids and a run of 256 or 257 from column 2058 (from
    # the middle of the emulations' shorter rows).
    clustered = (
        ((vocab_size // 8, vocab_size // 8 + 600),),
        ((0, 300),),
        ((vocab_size - 300, vocab_size),),
    )
    aligned = vocab_size - vocab_size % 64
    start = min(2_058, aligned // 2)
    runs = (((0, 100), (start, start + n)) for n in (256, 257))
    aligned_clustered = (*runs, ((aligned - 300, aligned),))
    cases += [
        Case(f"{name}-W{w}-{str(d)[6:]}", 3, vocab, (), w, d, kept_ranges=ranges)
        for name, vocab, ranges, widths in (
            ("clustered", vocab_size, clustered, (100, 2048)),
            ("aligned-clustered", aligned, aligned_clustered, (356, 2048)),
        )
        for w in widths
        for d in (torch.float32, torch.bfloat16)
    ]
    patterns = "boundary" if slow else "every"
    for dtype in (torch.float16, torch.bfloat16):
        count = len(bit_patterns(dtype, patterns, seed=0))
        num_reqs = 1 if count <= 4_096 else count // 4_096
        cases.append(
            Case(
                f"{patterns}-bit-patterns-{str(dtype)[6:]}",
                num_reqs,
                count // num_reqs,
                (),
                count // num_reqs,
                dtype,
                bit_patterns=patterns,
            )
        )
    return cases


def empty_cases() -> list[tuple[int, int, int]]:
    """(num_reqs, vocab_size, max_num_kept) with no rows or no columns."""
    return [(0, 10, 4), (3, 0, 4), (0, 0, 0), (0, 5, 0), (2, 0, 0)]
