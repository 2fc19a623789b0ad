"""The split tiling shared by the CuPy and Numba kernels (no GPU needed)."""

from __future__ import annotations

import pytest

from masks.backends import tiling


@pytest.mark.parametrize("num_reqs", [1, 4, 16, 256, 1024])
@pytest.mark.parametrize("num_cols", [1, 255, 257, 40_003, 151_936, 262_144])
@pytest.mark.parametrize("target", [264, 528])
def test_split_tiling_covers_every_segment_once(num_reqs: int, num_cols: int, target: int) -> None:
    warps = 4
    tiles_per_row, segs_per_unit = tiling.split_tiling(num_reqs, num_cols, target, warps)
    segments = -(-num_cols // tiling.SEGMENT)
    assert segs_per_unit & (segs_per_unit - 1) == 0
    assert 1 <= segs_per_unit <= tiling.MAX_SEGS_PER_UNIT
    assert (tiles_per_row - 1) * warps * segs_per_unit < segments
    assert segments <= tiles_per_row * warps * segs_per_unit
    assert segs_per_unit == 1 or num_reqs * tiles_per_row >= target
