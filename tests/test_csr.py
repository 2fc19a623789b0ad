"""Host-side CSR: complete rows, only wide rows unpacked, no per-row Python loop needed."""

from __future__ import annotations

import dataclasses
import itertools
import json
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from numpy_contract import numpy_contract
from suite import returns_while_the_stream_spins

import masks
from masks import csr, transfer
from masks.testing import assert_csr_equal, make_logits, reference


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
    """Rows that fit in W come from the ids and counts alone: the bitmask here has every bit set,
    so reading it for them (to decode them, or to find the wide rows) would show."""
    logits = make_logits(64, 5_000, 50, seed=3)
    mask = _poison_rows_that_fit(reference(logits, None, 512))
    ids, offsets = mask.to_csr()
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


def test_row_chunks_cover_the_rows_within_the_bound(monkeypatch) -> None:
    monkeypatch.setattr(csr, "DECODE_CHUNK_COLUMNS", 2_500)
    chunks = list(csr.row_chunks(5, 1_000))
    assert [list(range(5))[chunk] for chunk in chunks] == [[0, 1], [2, 3], [4]]
    assert list(csr.row_chunks(0, 1_000)) == []
    assert [(c.start, c.stop) for c in csr.row_chunks(2, 10_000)] == [(0, 1), (1, 2)]  # 1 row


@pytest.mark.parametrize("chunk_columns", [1, 1_000, 3_000])
def test_wide_rows_decode_in_bounded_chunks(monkeypatch, decoded_rows, chunk_columns) -> None:
    """Both host paths (NumPy, and the CUDA path's torch ops, here on CPU tensors) decode rows
    wider than W a bounded chunk of rows at a time, and the chunks' ids land in their rows."""
    monkeypatch.setattr(csr, "DECODE_CHUNK_COLUMNS", chunk_columns)
    supports = [900, 3, 1_000, 0, 700, 16, 513, 999]
    logits = make_logits(len(supports), 1_000, supports, seed=9, junk=True)
    mask = reference(logits, None, 16)
    expected = _contract_csr(logits, 16)
    assert_csr_equal(mask.to_csr(), expected)
    chunk_rows = {1: [1] * 5, 1_000: [1] * 5, 3_000: [3, 2]}[chunk_columns]
    assert decoded_rows == chunk_rows
    device_chunks = []  # the CUDA path ranks each chunk's ids from its rows' counts
    original = transfer._exclusive_cumsum
    monkeypatch.setattr(
        transfer, "_exclusive_cumsum", lambda c: device_chunks.append(c.numel()) or original(c)
    )
    assert_csr_equal(mask.to_csr_async().wait(), expected)
    assert device_chunks == chunk_rows


def test_support_of_one_request() -> None:
    supports = [800, 3, 700, 0, 600]
    logits = make_logits(len(supports), 1_000, supports, seed=5)
    mask = reference(logits, None, 512)
    for row in (0, 1, 2, 3, 4, -1, -2, -5):  # -1, -5: rows wider than W from the end
        expected = torch.isfinite(logits[row]).nonzero().flatten().numpy()
        np.testing.assert_array_equal(mask.support(row), expected)
        assert mask.support(row).dtype == np.int32
    with pytest.raises(IndexError, match=r"index must be in \[-5, 5\) for 5 request\(s\), got 5"):
        mask.support(5)
    with pytest.raises(IndexError, match=r"got -6"):
        mask.support(-6)
    own = mask.support(1)
    assert not np.shares_memory(own, mask.token_ids.numpy())  # a copy, not a view of the mask


def test_scatter_prefixes_writes_only_the_prefixes() -> None:
    """The CUDA host path's narrow-row scatter (CPU scatter is sequential, so an overlong prefix
    is overwritten there by the next row and only shows as a race on CUDA): check it directly."""
    token_ids = torch.tensor([[5, 6, -1], [7, -1, -1], [8, 9, 10]], dtype=torch.int32)
    buffer = torch.full((7,), -9, dtype=torch.int32)  # 6 CSR slots + the spill slot
    transfer._scatter_prefixes(token_ids, torch.tensor([2, 0, 1]), torch.tensor([0, 2, 4]), buffer)
    assert buffer[:-1].tolist() == [5, 6, -9, -9, 8, -9]


def test_cuda_host_path_decodes_only_rows_wider_than_w(monkeypatch) -> None:
    """Rows with exactly W kept ids are complete in token_ids: no bitmask decode for them."""
    logits = make_logits(4, 1_000, [16, 0, 16, 3], seed=8)
    mask = reference(logits, None, 16)

    def refuse(*_):
        raise AssertionError("decoded a row whose support fits in W")

    monkeypatch.setattr(transfer.PendingCSR, "_csr_with_wide_rows", refuse)
    assert_csr_equal(mask.to_csr_async().wait(), _contract_csr(logits, 16))


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


def _decode_step(
    num_reqs: int, vocab_size: int, wide: bool, device: str
) -> tuple[torch.Tensor, list[int], int]:
    """Logits of a decode step: 20 kept ids per row, or 600 (wider than W = 256) every 4th row."""
    supports = [(600 if wide and r % 4 == 0 else 20) for r in range(num_reqs)]
    return make_logits(num_reqs, vocab_size, supports, seed=9, device=device), supports, 256


@pytest.mark.parametrize("wide", [False, True], ids=["narrow rows", "some wide rows"])
def test_csr_and_lists_run_no_python_line_per_row(wide) -> None:
    """The host path's Python work does not grow with the rows: 8 and 512 rows execute the same
    lines of masks (a loop over rows would add hundreds), so it cannot regress to one."""
    lines = []
    for num_reqs in (8, 512):
        logits, _, width = _decode_step(num_reqs, 1_000, wide, "cpu")
        mask = reference(logits, None, width)
        calls = (mask.to_csr, mask.tolists, lambda mask=mask: mask.to_csr_async().wait())
        lines.append(tuple(map(_lines_run_in_masks, calls)))
    assert lines[0] == lines[1], f"lines for 8 rows, then 512 (CPU, lists, CUDA path): {lines}"


def _poison_rows_that_fit(mask: masks.SamplingMask) -> masks.SamplingMask:
    """The mask with every bit set in the bitmask rows of the rows that fit in W: their answer
    must come from the ids, so a path that reads them there gives a wrong CSR."""
    packed = mask.packed_mask.clone()
    packed[mask.counts <= mask.width] = 0xFF
    return dataclasses.replace(mask, packed_mask=packed)


def _contract_csr(logits: torch.Tensor, width: int) -> tuple[np.ndarray, np.ndarray]:
    """The CSR of the independent NumPy contract."""
    contract = numpy_contract(logits.cpu(), None, width)
    return contract["csr_ids"], contract["csr_offsets"]


@pytest.mark.parametrize("wide", [False, True], ids=["narrow rows", "some wide rows"])
def test_cuda_host_path_receives_only_counts_and_ids(wide, monkeypatch) -> None:
    """`PendingCSR` (the CUDA host path, run here on CPU tensors) allocates host buffers
    (`transfer._host_buffer`) for the counts and exactly the kept ids: no padding, no bitmask,
    even with rows wider than W; and it reads the bitmask of the wide rows only (the others'
    have every bit set here). The bytes that cross on a GPU are counted by
    `test_cuda_to_csr_copies_only_counts_and_ids`."""
    logits, supports, width = _decode_step(64, 5_000, wide, "cpu")
    host_buffers: list[int] = []
    original = transfer._host_buffer

    def spy(like, numel):
        host_buffers.append(numel)
        return original(like, numel)

    monkeypatch.setattr(transfer, "_host_buffer", spy)
    mask = _poison_rows_that_fit(reference(logits, None, width))
    assert_csr_equal(mask.to_csr_async().wait(), _contract_csr(logits, width))
    assert host_buffers == [len(supports), sum(supports)]


def test_the_cuda_host_path_under_a_default_device_and_on_strided_ids() -> None:
    """`PendingCSR` (run here on CPU tensors) puts its host buffers on the CPU under any default
    device (a caller's ``with torch.device(...)``), and takes a mask whose ids are a strided
    view."""
    logits, _, width = _decode_step(16, 1_000, True, "cpu")
    mask = reference(logits, None, width)
    expected = _contract_csr(logits, width)
    with torch.device("meta"):
        assert_csr_equal(mask.to_csr_async().wait(), expected)
    strided_ids = mask.token_ids.t().contiguous().t()
    assert not strided_ids.is_contiguous()
    strided = masks.SamplingMask(strided_ids, mask.counts, mask.packed_mask, mask.vocab_size)
    assert_csr_equal(strided.to_csr_async().wait(), expected)


def _device_to_host_bytes(call, trace_path: Path) -> tuple[list[int], object]:
    """(bytes of each device-to-host memcpy that ``call()`` queued, its return value), read from
    the CUDA activity of a torch.profiler trace: copies inside torch ops (``nonzero``'s size read
    back) count too, which no dispatch-level hook sees."""
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as profile:
        result = call()
        torch.cuda.synchronize()
    profile.export_chrome_trace(str(trace_path))
    events = json.loads(trace_path.read_text())["traceEvents"]
    copies = [
        int(event["args"]["bytes"])
        for event in events
        if event.get("cat") == "gpu_memcpy" and "DtoH" in event.get("name", "")
    ]
    return copies, result


SIZE_READBACK_BYTES = 8
"""``nonzero`` reads its int64 output size back to the host (once, when rows are wide)."""


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA: counts CUDA memcpys")
@pytest.mark.parametrize("wide", [False, True], ids=["narrow rows", "some wide rows"])
def test_cuda_to_csr_copies_only_counts_and_ids(wide, tmp_path) -> None:
    """On CUDA, the bytes that cross to the host are the counts and the kept ids (4 bytes each),
    plus at most one size read-back; the bitmask (here 28 to 226 times as many bytes) never
    crosses. Self-check: the same counter sees a copy of the bitmask, byte for byte."""
    logits, supports, width = _decode_step(64, 151_936, wide, "cuda")
    mask = reference(logits, None, width)
    mask.to_csr()  # warm-up: pinned buffers, lazy CUDA state
    copies, csr_result = _device_to_host_bytes(mask.to_csr, tmp_path / "csr.json")
    assert_csr_equal(csr_result, _contract_csr(logits, width))
    readbacks = [size for size in copies if size <= SIZE_READBACK_BYTES]
    assert sorted(size for size in copies if size > SIZE_READBACK_BYTES) == sorted(
        [4 * len(supports), 4 * sum(supports)]
    ), f"device-to-host copies: {copies}"
    assert len(readbacks) <= int(wide), f"device-to-host copies: {copies}"
    bitmask_copies, _ = _device_to_host_bytes(mask.packed_mask.cpu, tmp_path / "bitmask.json")
    assert bitmask_copies == [mask.packed_mask.numel()]


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA: streams")
@pytest.mark.parametrize("wide", [False, True], ids=["narrow rows", "some wide rows"])
def test_cuda_wait_does_not_wait_for_the_next_step(wide) -> None:
    """A serving loop queues the next step behind `to_csr_async()` before it waits: `wait()`
    must return while that work (here a ~70 ms spin) still runs, decoding wide rows included."""
    logits, _, width = _decode_step(64, 151_936, wide, "cuda")
    mask = reference(logits, None, width)
    mask.to_csr()  # warm-up: the side stream, pinned buffers
    torch.cuda.synchronize()
    pending = mask.to_csr_async()
    still_busy, csr_result = returns_while_the_stream_spins(pending.wait)  # the spin: next step
    assert still_busy, "wait() returned only after the next step's work had finished"
    assert_csr_equal(csr_result, _contract_csr(logits, width))
