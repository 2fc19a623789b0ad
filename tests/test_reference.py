"""The torch reference against the independent NumPy implementation of the contract."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from cases import Case, conformance_cases
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy_contract import numpy_contract

from masks import MAX_COMPACT_SUPPORT, compact_sampling_mask
from masks.backends import torch as torch_backend
from masks.testing import make_logits, reference


def assert_matches_numpy(logits, num_sampled, width) -> None:
    result = reference(logits, num_sampled, width)
    contract = numpy_contract(logits, num_sampled, width)
    for field in ("token_ids", "counts", "packed_mask"):
        np.testing.assert_array_equal(
            getattr(result, field).numpy(), contract[field], err_msg=field
        )
    ids, offsets = result.to_csr()
    np.testing.assert_array_equal(ids, contract["csr_ids"])
    np.testing.assert_array_equal(offsets, contract["csr_offsets"])


@pytest.mark.parametrize("case", conformance_cases(), ids=lambda case: case.name)
def test_reference_matches_numpy(case: Case) -> None:
    assert_matches_numpy(case.logits(), case.num_sampled_tokens(), case.width)


@settings(max_examples=60, deadline=None)
@given(
    num_reqs=st.integers(1, 5),
    vocab_size=st.integers(1, 300),
    width=st.integers(0, 400),
    dtype=st.sampled_from([torch.float32, torch.float16, torch.bfloat16, torch.float64]),
    seed=st.integers(0, 2**31 - 1),
    data=st.data(),
)
def test_reference_random(num_reqs, vocab_size, width, dtype, seed, data) -> None:
    supports = data.draw(st.lists(st.integers(0, vocab_size), min_size=num_reqs, max_size=num_reqs))
    logits = make_logits(num_reqs, vocab_size, supports, dtype, seed, junk=True)
    assert_matches_numpy(logits, None, width)


def test_default_width_is_the_contracts_cap() -> None:
    """Without ``max_num_kept``, W is the contract's cap MAX_COMPACT_SUPPORT = 2048 (V where the
    row is shorter), in the API and in the reference every test compares against."""
    logits = make_logits(2, 3_000, 2_500, seed=4)
    assert MAX_COMPACT_SUPPORT == 2_048
    assert compact_sampling_mask(logits, backend="torch").width == 2_048
    assert compact_sampling_mask(logits[:, :100], backend="torch").width == 100
    assert reference(logits).width == 2_048


def test_generator_is_seeded_and_never_zero() -> None:
    a = make_logits(4, 1000, 300, seed=7)
    assert torch.equal(a, make_logits(4, 1000, 300, seed=7))
    assert not torch.equal(a, make_logits(4, 1000, 300, seed=8))
    finite = a[torch.isfinite(a)]
    assert finite.numel() == 4 * 300 and bool((finite != 0).all())
    # The kept columns differ between rows (random positions, not a fixed prefix).
    kept = torch.isfinite(a)
    assert not torch.equal(kept[0], kept[1])


@pytest.mark.parametrize("chunk_elements", [3 * 1_000, 999], ids=["3 rows", "past a row"])
def test_reference_chunks_of_rows_match_the_contract(chunk_elements: int, monkeypatch) -> None:
    """Rows go through the reference in chunks (`_CHUNK_ELEMENTS` logits, at least one row):
    small chunks here, with inactive rows (strided int64 counts) on both sides of chunk edges."""
    monkeypatch.setattr(torch_backend, "_CHUNK_ELEMENTS", chunk_elements)
    supports = [0, 5, 1_000, 300, 17, 999, 1, 250, 40, 600]
    logits = make_logits(10, 1_000, supports, torch.float32, seed=4, junk=True)
    counts = torch.tensor([1, 0, 2, -1, 1, 1, 0, 2, -1, 1], dtype=torch.int64)
    num_sampled = counts.repeat_interleave(2)[::2]  # rows 1, 3, 6 and 8 inactive
    for width in (0, 7, 256, 1_000):
        assert_matches_numpy(logits, num_sampled, width)
        assert_matches_numpy(logits, None, width)


def test_reference_runs_at_serving_scale() -> None:
    """R=1024, V=262144 fp32 (1 GiB of logits) on a 24 GB CPU machine, checked on sample rows."""
    generator = torch.Generator().manual_seed(0)
    logits = torch.randn(1024, 262_144, generator=generator)
    logits[torch.rand(1024, 262_144, generator=generator) < 0.999] = float("-inf")
    logits[7, :] = 1.0  # a full row, wider than W
    result = reference(logits, None, 2048)
    kept = torch.isfinite(logits)
    assert torch.equal(result.counts, kept.sum(1, dtype=torch.int32))
    for row in (0, 7, 513, 1023):
        assert_matches_numpy(logits[row : row + 1], None, 2048)
        contract = numpy_contract(logits[row : row + 1], None, 2048)
        assert torch.equal(result.token_ids[row], torch.from_numpy(contract["token_ids"][0]))
        assert torch.equal(result.packed_mask[row], torch.from_numpy(contract["packed_mask"][0]))
