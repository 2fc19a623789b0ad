"""The launch geometry shared by the CUDA C (CuPy) and Numba kernels, which use one layout.

A row is cut into *warp segments* of `SEGMENT` columns (one mask byte per lane); a warp owns a
*unit* of consecutive segments and a block (a *tile*) a run of units. Few rows need short units
so that the tiles fill the GPU; more rows can take longer ones (fewer flags, longer streams).
`fused` runs one block per row once the rows fill `FUSED_MIN_WAVES` waves of resident blocks.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

SEGMENT = 256
"""Columns of a warp segment (kSegCols in compact.cu): 32 lanes x 8 columns."""
MAX_SEGS_PER_UNIT = 16
RESIDENT_THREADS = 1024
"""Threads per SM the kernels are compiled for: 64 registers a thread (``min_blocks`` in
compact.cu, the launch bounds in numba.py)."""
EMULATED_SM_COUNT = 4
"""SMs the CPU emulations of the CuPy and Numba kernels plan for: a few tiles per row, as on a
GPU, on the emulations' small inputs. `auto` takes `fused` from R = 4 in CuPy's emulation
(512-thread blocks) and from R = 32 in Numba's simulator (64-thread blocks), whose CI inputs
reach `fused` by name."""
FUSED_MIN_WAVES = 0.5
"""`auto` runs `fused` once the rows fill this many waves of resident fused blocks (H200, R=256,
CuPy: fused 74% of the copy ceiling against split 66% for fp32, 62% against 52% for bf16)."""


@dataclass(frozen=True)
class Geometry:
    """How one shape is launched: ``fused`` (grid = rows) or ``split`` (grid = rows x tiles)."""

    fused: bool
    tiles_per_row: int
    segs_per_unit: int
    """`split`: segments of a warp's unit (``fused`` splits the row in the kernel)."""


def geometry(
    num_reqs: int,
    num_cols: int,
    variant: str,
    sm_count: int,
    threads: tuple[int, int],
    split_tiles_per_sm: int,
) -> Geometry:
    """The variant ``auto`` runs for this shape, and `split`'s tiling; ``threads`` is
    ``(fused, split)`` threads per block."""
    fused_threads, split_threads = threads
    resident = sm_count * max(1, RESIDENT_THREADS // fused_threads)
    if variant == "fused" or (
        variant == "auto" and num_reqs >= math.ceil(FUSED_MIN_WAVES * resident)
    ):
        return Geometry(True, 1, 0)
    target = split_tiles_per_sm * sm_count
    return Geometry(False, *split_tiling(num_reqs, num_cols, target, split_threads // 32))


def split_tiling(num_reqs: int, num_cols: int, target_tiles: int, warps: int) -> tuple[int, int]:
    """``(tiles_per_row, segs_per_unit)`` of split (tiles of ``warps`` units): the longest unit
    (a power of two, at most `MAX_SEGS_PER_UNIT` segments) that still leaves >= ``target_tiles``
    tiles."""
    segments = -(-num_cols // SEGMENT)
    segs_per_unit = 1
    while (
        segs_per_unit < MAX_SEGS_PER_UNIT
        and num_reqs * -(-segments // (2 * segs_per_unit * warps)) >= target_tiles
    ):
        segs_per_unit *= 2
    return -(-segments // (segs_per_unit * warps)), segs_per_unit


def wide_rows(logits: torch.Tensor) -> bool:
    """Whether every row is contiguous with a 16-byte aligned stride, so that 16-byte loads read
    whole groups of columns when the logits also start 16-byte aligned."""
    row_stride, col_stride = logits.stride()
    row_bytes = row_stride * logits.element_size() if logits.shape[0] > 1 else 0
    return col_stride == 1 and row_bytes % 16 == 0
