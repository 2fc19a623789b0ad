"""The shared conformance suite: every backend and variant, bit for bit against the reference.

Outputs are poisoned before each run, so a backend that leaves an entry unwritten fails. The
suite proves it can fail: known-wrong backends that exist only here must be caught by it.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pytest
import torch
from cases import VOCAB, Case, conformance_cases, empty_cases, slow_emulation
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy_contract import numpy_contract
from suite import backend_params

from masks import SamplingMask, compact_sampling_mask
from masks.testing import assert_csr_equal, assert_masks_equal, reference

Runner = Callable[[torch.Tensor, "torch.Tensor | None", int, SamplingMask], SamplingMask]
BACKENDS = backend_params()


GARBAGE = {"token_ids": 0x5A5A5A5A, "counts": 12345, "packed_mask": 0xA5}
GUARD_ENTRIES = 64
"""Entries of the same garbage after each poisoned output, in its buffer: a kernel that writes
past an output (slot W of the last row, which in the emulations' in-order programs is the only
stray write no later program overwrites) changes them."""


def poisoned(num_reqs: int, vocab_size: int, width: int, device: torch.device) -> SamplingMask:
    """Preallocated outputs full of plausible-looking garbage, each the front of a buffer with
    `GUARD_ENTRIES` more of it behind (`assert_guards_intact`)."""

    def guarded(name: str, shape: tuple[int, ...], dtype: torch.dtype) -> torch.Tensor:
        numel = math.prod(shape)
        buffer = torch.full((numel + GUARD_ENTRIES,), GARBAGE[name], dtype=dtype, device=device)
        return buffer[:numel].view(shape)

    return SamplingMask(
        token_ids=guarded("token_ids", (num_reqs, width), torch.int32),
        counts=guarded("counts", (num_reqs,), torch.int32),
        packed_mask=guarded("packed_mask", (num_reqs, (vocab_size + 7) // 8), torch.uint8),
        vocab_size=vocab_size,
    )


def assert_guards_intact(out: SamplingMask) -> None:
    """No write past the end of any output `poisoned` made."""
    for name, garbage in GARBAGE.items():
        output = getattr(out, name)
        guard = output._base[output.numel() :]
        changed = (guard != garbage).nonzero().flatten().tolist()
        assert not changed, f"{name}: written past its end, at guard entries {changed}"


def run_backend(backend: str) -> Runner:
    def run(logits, num_sampled, width, out):
        return compact_sampling_mask(logits, num_sampled, width, backend=backend, out=out)

    return run


def check_case(run: Runner, case: Case, device: torch.device) -> None:
    logits, num_sampled = case.logits(), case.num_sampled_tokens()
    expected = reference(logits, num_sampled, case.width)
    out = poisoned(expected.num_reqs, expected.vocab_size, expected.width, device)
    actual = run(case.logits(device), case.num_sampled_tokens(device), case.width, out)
    assert actual is out
    assert_masks_equal(actual, expected)
    assert_guards_intact(actual)
    contract = numpy_contract(logits, num_sampled, case.width)
    expected_csr = (contract["csr_ids"], contract["csr_offsets"])
    assert_csr_equal(actual.to_csr(), expected_csr)
    assert_csr_equal(actual.to_csr_async().wait(), expected_csr)  # the CUDA host path
    offsets = contract["csr_offsets"]
    assert actual.tolists() == [
        contract["csr_ids"][offsets[r] : offsets[r + 1]].tolist() for r in range(len(offsets) - 1)
    ]


def backend_cases() -> list:
    """(backend, case) pairs; slow emulations get the same cases on a smaller vocabulary."""
    return [
        pytest.param(param.values[0], case, id=f"{param.values[0]}-{case.name}", marks=param.marks)
        for param in BACKENDS
        for case in conformance_cases(slow_emulation(param.values[0]))
    ]


@pytest.mark.parametrize(("backend", "case"), backend_cases())
def test_matches_reference(backend: str, case: Case, device: torch.device) -> None:
    check_case(run_backend(backend), case, device)


@pytest.mark.parametrize("backend", BACKENDS)
def test_tie_row_csr(backend: str, device: torch.device) -> None:
    logits = torch.tensor([[6, 5, 4, 4, 4, -np.inf, -np.inf, -np.inf]], device=device)
    ids, offsets = compact_sampling_mask(logits, max_num_kept=3, backend=backend).to_csr()
    assert ids.tolist() == [0, 1, 2, 3, 4]
    assert offsets.tolist() == [0, 5]


@pytest.mark.parametrize("shape", empty_cases(), ids=str)
@pytest.mark.parametrize("backend", BACKENDS)
def test_empty_dimensions(backend: str, shape: tuple[int, int, int], device: torch.device) -> None:
    num_reqs, vocab_size, max_num_kept = shape
    logits = torch.randn(num_reqs, vocab_size, device=device)
    result = compact_sampling_mask(logits, max_num_kept=max_num_kept, backend=backend)
    width = min(max_num_kept, vocab_size)
    outputs = (result.token_ids, result.counts, result.packed_mask)
    assert [t.shape for t in outputs] == [
        (num_reqs, width),
        (num_reqs,),
        (num_reqs, (vocab_size + 7) // 8),
    ]
    assert [t.dtype for t in outputs] == [torch.int32, torch.int32, torch.uint8]
    assert {t.device for t in outputs} == {logits.device}
    assert result.counts.tolist() == [0] * num_reqs
    ids, offsets = result.to_csr()
    assert ids.size == 0 and ids.dtype == np.int32 and offsets.dtype == np.int64
    assert offsets.tolist() == [0] * (num_reqs + 1)
    assert result.tolists() == [[] for _ in range(num_reqs)]


@pytest.mark.parametrize("backend", BACKENDS)
@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_random_inputs(backend: str, device: torch.device, data: st.DataObject) -> None:
    """Random shapes, dtypes, layouts, supports and widths; the failing example prints its seed."""
    num_reqs = data.draw(st.integers(1, 6), label="num_reqs")
    vocab_size = data.draw(st.integers(1, 700), label="vocab_size")
    case = Case(
        "hypothesis",
        num_reqs,
        vocab_size,
        tuple(
            data.draw(
                st.lists(st.integers(0, vocab_size), min_size=num_reqs, max_size=num_reqs),
                label="supports",
            )
        ),
        data.draw(st.integers(0, 800), label="width"),
        data.draw(
            st.sampled_from([torch.float32, torch.float16, torch.bfloat16, torch.float64]),
            label="dtype",
        ),
        data.draw(
            st.sampled_from(["contiguous", "column_slice", "transposed", "column_stride"]),
            label="layout",
        ),
        num_sampled=data.draw(
            st.none()
            | st.lists(st.integers(-2, 3), min_size=num_reqs, max_size=num_reqs).map(tuple),
            label="num_sampled",
        ),
        seed=data.draw(st.integers(0, 2**31 - 1), label="seed"),
    )
    check_case(run_backend(backend), case, device)


# --- the suite must be able to fail ---------------------------------------------------------


def _flip_one_mask_bit(logits, num_sampled, width, out):
    reference_into(logits, num_sampled, width, out)
    out.packed_mask[-1, -1] ^= 1
    return out


def _drop_one_id(logits, num_sampled, width, out):
    reference_into(logits, num_sampled, width, out)
    row = int(out.counts.argmax())
    ids = out.token_ids[row]
    count = min(int(out.counts[row]), out.width)
    ids[: count - 1] = ids[1:count].clone()  # the first kept id goes missing
    ids[count - 1] = -1
    return out


def _miscount_one_row(logits, num_sampled, width, out):
    reference_into(logits, num_sampled, width, out)
    out.counts[int(out.counts.argmax())] += 1
    return out


def _padding_left_uninitialised(logits, num_sampled, width, out):
    expected = reference(logits.cpu(), None if num_sampled is None else num_sampled.cpu(), width)
    kept = torch.arange(out.width) < expected.counts.unsqueeze(1)
    out.token_ids[kept.to(out.device)] = expected.token_ids[kept].to(out.device)
    out.counts.copy_(expected.counts)
    out.packed_mask.copy_(expected.packed_mask)
    return out


def reference_into(logits, num_sampled, width, out) -> None:
    expected = reference(logits.cpu(), None if num_sampled is None else num_sampled.cpu(), width)
    for field in ("token_ids", "counts", "packed_mask"):
        getattr(out, field).copy_(getattr(expected, field))


@pytest.mark.parametrize(
    "wrong",
    [_flip_one_mask_bit, _drop_one_id, _miscount_one_row, _padding_left_uninitialised],
    ids=lambda f: f.__name__,
)
def test_suite_catches_known_wrong_backends(wrong: Runner, device: torch.device) -> None:
    case = next(c for c in conformance_cases() if c.name == f"edges-V{VOCAB}-W512-float32")
    with pytest.raises(AssertionError, match=r"differs at row \d+"):
        check_case(wrong, case, device)
    check_case(lambda *args: (reference_into(*args), args[-1])[1], case, device)  # control
