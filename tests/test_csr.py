"""Host-side CSR: complete rows, only wide rows unpacked, no per-row Python loop needed."""

from __future__ import annotations

import itertools
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from numpy_contract import numpy_contract

import masks
from masks import csr
from masks.testing import make_logits, reference


@pytest.fixture
def decoded_rows(monkeypatch) -> list[int]:
    """Records how many rows each bitmask decode unpacked."""
    calls: list[int] = []
    original = csr.decode_packed_rows

    def spy(packed_rows, vocab_size):
        calls.append(packed_rows.shape[0])
        return original(packed_rows, vocab_size)

    monkeypatch.setattr(csr, "decode_packed_rows", spy)
    return calls


def test_narrow_rows_never_touch_the_bitmask(decoded_rows) -> None:
    logits = make_logits(64, 5_000, 50, seed=3)
    ids, offsets = reference(logits, None, 512).to_csr()
    contract = numpy_contract(logits, None, 512)
    np.testing.assert_array_equal(ids, contract["csr_ids"])
    np.testing.assert_array_equal(offsets, contract["csr_offsets"])
    assert decoded_rows == []


def test_only_wide_rows_are_decoded(decoded_rows) -> None:
    supports = [3, 700, 0, 5_000, 513, 512]
    logits = make_logits(len(supports), 5_000, supports, seed=4, junk=True)
    mask = reference(logits, None, 512)
    ids, offsets = mask.to_csr()
    contract = numpy_contract(logits, None, 512)
    np.testing.assert_array_equal(ids, contract["csr_ids"])
    np.testing.assert_array_equal(offsets, contract["csr_offsets"])
    assert decoded_rows == [3]  # rows 1, 3 and 4 only
    assert ids.dtype == np.int32 and offsets.dtype == np.int64


def test_support_of_one_request() -> None:
    supports = [3, 700, 0]
    logits = make_logits(3, 1_000, supports, seed=5)
    mask = reference(logits, None, 512)
    for row in (0, 1, 2, -1):
        expected = torch.isfinite(logits[row]).nonzero().flatten().numpy()
        np.testing.assert_array_equal(mask.support(row), expected)
    with pytest.raises(IndexError):
        mask.support(3)


def test_tolists_matches_csr_rows() -> None:
    logits = make_logits(5, 300, [0, 1, 300, 17, 299], seed=6)
    mask = reference(logits, None, 16)
    ids, offsets = mask.to_csr()
    assert mask.tolists() == [ids[a:b].tolist() for a, b in itertools.pairwise(offsets)]


def test_group_positions() -> None:
    starts, lengths = np.array([10, 20, 30, 40]), np.array([2, 0, 3, 1])
    assert csr.group_positions(starts, lengths).tolist() == [10, 11, 30, 31, 32, 40]
    empty = np.zeros(0, dtype=np.int64)
    assert csr.group_positions(empty, empty).tolist() == []


def _lines_run_in_masks(call) -> int:
    """Python lines of the masks package that ``call()`` executes (a sys.settrace count)."""
    package = str(Path(masks.__file__).parent)
    executed = 0

    def trace(frame, event, arg):
        nonlocal executed
        if not frame.f_code.co_filename.startswith(package):
            return None
        if event == "line":
            executed += 1
        return trace

    previous = sys.gettrace()
    sys.settrace(trace)
    try:
        call()
    finally:
        sys.settrace(previous)
    return executed


@pytest.mark.parametrize("wide", [False, True], ids=["narrow rows", "some wide rows"])
def test_csr_and_lists_run_no_python_line_per_row(wide) -> None:
    """The host path's Python work does not grow with the rows: 8 and 512 rows execute the same
    lines of masks (a loop over rows would add hundreds), so it cannot regress to one."""
    lines = []
    for num_reqs in (8, 512):
        supports = [(600 if wide and r % 4 == 0 else 20) for r in range(num_reqs)]
        mask = reference(make_logits(num_reqs, 1_000, supports, seed=5), None, 256)
        lines.append((_lines_run_in_masks(mask.to_csr), _lines_run_in_masks(mask.tolists)))
    assert lines[0] == lines[1], f"lines run for 8 rows, then for 512: {lines}"
