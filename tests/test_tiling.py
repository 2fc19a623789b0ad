"""The launch geometry shared by the CuPy and Numba kernels (no GPU needed)."""

from __future__ import annotations

import math

import pytest
import torch

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
    # the longest such unit: twice as long would leave fewer tiles than the target
    doubled_tiles = num_reqs * -(-segments // (2 * segs_per_unit * warps))
    assert segs_per_unit == tiling.MAX_SEGS_PER_UNIT or doubled_tiles < target


@pytest.mark.parametrize("threads", [(512, 128), (64, 64)], ids=["gpu", "simulator"])
def test_geometry_split_fills_the_gpu_and_fused_takes_many_rows(threads) -> None:
    sms, vocab, tiles_per_sm = 132, 151_936, 2
    fused_threads, split_threads = threads
    warps = split_threads // 32
    for num_reqs in (1, 16, 64):
        split = tiling.geometry(num_reqs, vocab, "auto", sms, threads, tiles_per_sm)
        assert not split.fused
        assert 1 <= split.segs_per_unit <= tiling.MAX_SEGS_PER_UNIT
        unit_cols = split.segs_per_unit * tiling.SEGMENT
        units = split.tiles_per_row * warps
        assert units * unit_cols >= vocab > (units - warps) * unit_cols  # no empty tile
        if split.segs_per_unit > 1:  # units only grow while the GPU stays filled
            assert num_reqs * split.tiles_per_row >= tiles_per_sm * sms
    per_sm = max(1, tiling.RESIDENT_THREADS // fused_threads)
    rows = math.ceil(tiling.FUSED_MIN_WAVES * sms * per_sm)
    assert tiling.geometry(rows, vocab, "auto", sms, threads, tiles_per_sm).fused
    assert not tiling.geometry(rows - 1, vocab, "auto", sms, threads, tiles_per_sm).fused
    assert not tiling.geometry(10**6, 100, "split", sms, threads, tiles_per_sm).fused
    assert tiling.geometry(1, 100, "fused", sms, threads, tiles_per_sm).fused


@pytest.mark.parametrize(
    ("num_reqs", "row_stride", "col_stride", "dtype", "wide"),
    [
        (4, 1024, 1, torch.float32, True),
        (4, 1026, 1, torch.float32, False),  # a row stride of 4104 bytes
        (4, 1032, 1, torch.bfloat16, True),
        (4, 1036, 1, torch.bfloat16, False),
        (1, 1027, 1, torch.float32, True),  # one row: its stride is never used
        (4, 1024, 2, torch.float32, False),  # columns not contiguous
    ],
)
def test_wide_rows_needs_contiguous_rows_16_byte_apart(
    num_reqs: int, row_stride: int, col_stride: int, dtype: torch.dtype, wide: bool
) -> None:
    storage = torch.empty(num_reqs * row_stride, dtype=dtype)
    logits = storage.as_strided((num_reqs, 500), (row_stride, col_stride))
    assert tiling.wide_rows(logits) is wide
