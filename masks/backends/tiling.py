"""The ``split`` tiling shared by the CUDA C (CuPy) and Numba kernels, which use one layout.

A row is cut into *warp segments* of `SEGMENT` columns (one mask byte per lane); a warp owns a
*unit* of consecutive segments and a block (a *tile*) a run of units. Few rows need short units
so that the tiles fill the GPU; more rows can take longer ones (fewer flags, longer streams).
"""

from __future__ import annotations

SEGMENT = 256
"""Columns of a warp segment (kSegCols in compact.cu): 32 lanes x 8 columns."""
MAX_SEGS_PER_UNIT = 16


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
