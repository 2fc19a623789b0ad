"""Triton-specific checks: shape-driven choices, unusual layouts and concurrent first calls.

The kernels' results are covered by the conformance suite; these tests pin down what it does not
reach: the `auto` choice and split configuration, zero strides, strided num_sampled_tokens and
concurrent first calls. They run on CUDA, or on the CPU under ``TRITON_INTERPRET=1``.
"""

from __future__ import annotations

import dataclasses
import os
import threading

import pytest
import torch

from masks import SamplingMask, compact_sampling_mask
from masks.testing import assert_masks_equal, make_logits, reference

pytest.importorskip("triton")
from masks.backends import triton as backend

DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")
pytestmark = pytest.mark.skipif(
    DEVICE.type == "cpu" and os.environ.get("TRITON_INTERPRET") != "1",
    reason="needs a CUDA device or TRITON_INTERPRET=1",
)
VARIANTS = [v for v in backend.VARIANTS if v != "auto"]


@pytest.mark.parametrize("sm_count", [4, 132])
@pytest.mark.parametrize("num_reqs", [1, 4, 16, 256, 1024])
@pytest.mark.parametrize("vocab_size", [1, 33, 20_001, 151_936, 262_144])
def test_split_config_covers_the_row_from_a_few_chunk_buckets(sm_count, num_reqs, vocab_size):
    chunk, num_chunks, num_warps = backend._split_config(num_reqs, vocab_size, sm_count)
    assert chunk in backend._SPLIT_CHUNKS
    assert (num_chunks - 1) * chunk < vocab_size <= num_chunks * chunk
    assert 1 <= num_warps <= 8
    tiles = num_reqs * num_chunks
    assert tiles >= backend._SPLIT_TILES_PER_SM * sm_count or chunk == min(backend._SPLIT_CHUNKS)
    larger = [c for c in backend._SPLIT_CHUNKS if c > chunk]
    assert all(
        num_reqs * -(-vocab_size // c) < backend._SPLIT_TILES_PER_SM * sm_count for c in larger
    )


def test_auto_picks_split_for_few_rows_and_fused_for_many():
    rows = backend._fused_min_rows(DEVICE)
    assert backend._auto_variant(1, DEVICE) == "split"
    assert backend._auto_variant(rows - 1, DEVICE) == "split"
    assert backend._auto_variant(rows, DEVICE) == "fused"


@pytest.mark.parametrize("variant", VARIANTS)
def test_zero_row_stride_and_strided_num_sampled(variant):
    row = make_logits(1, 3_001, 700, torch.bfloat16, seed=3, junk=True, device=DEVICE)
    logits = row.expand(5, -1)  # row stride 0
    num_sampled = torch.tensor([1, 9, 0, 9, -4, 9, 2, 9, 1, 9], device=DEVICE)[::2]
    expected = reference(logits.cpu(), num_sampled.cpu(), 512)
    actual = compact_sampling_mask(logits, num_sampled, 512, backend=f"triton:{variant}")
    assert_masks_equal(actual, expected)


@pytest.mark.parametrize("variant", VARIANTS)
def test_width_and_vocab_of_one(variant):
    """Triton specialises integer arguments equal to 1; the kernels must still be right."""
    logits = make_logits(3, 1, (1, 0, 1), seed=1, junk=True, device=DEVICE)
    for width in (0, 1):
        actual = compact_sampling_mask(logits, None, width, backend=f"triton:{variant}")
        assert_masks_equal(actual, reference(logits.cpu(), None, width))
    logits = make_logits(3, 40, (40, 0, 1), seed=2, junk=True, device=DEVICE)
    actual = compact_sampling_mask(logits, None, 1, backend=f"triton:{variant}")
    assert_masks_equal(actual, reference(logits.cpu(), None, 1))


def test_concurrent_first_calls():
    """Eight threads call each variant for the first time at once (fresh shapes and dtype)."""
    logits = make_logits(3, 2_113, (5, 0, 2_113), torch.float16, seed=5, junk=True, device=DEVICE)
    expected = reference(logits.cpu(), None, 100)
    errors: list[BaseException] = []
    barrier = threading.Barrier(8)

    def work(index: int) -> None:
        try:
            barrier.wait()
            variant = backend.VARIANTS[index % len(backend.VARIANTS)]
            actual = compact_sampling_mask(logits, None, 100, backend=f"triton:{variant}")
            assert_masks_equal(actual, expected)
        except BaseException as error:  # collected and re-raised on the main thread
            errors.append(error)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors[0]


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("offset", [0, 1])
def test_mask_words_and_bytes(variant, offset):
    """Mask rows of a multiple of 4 bytes use int32 word access unless the buffer is misaligned."""
    logits = make_logits(
        6, 4_096 + 32, (0, 1, 40, 4_128, 2_000, 7), seed=4, junk=True, device=DEVICE
    )
    expected = reference(logits.cpu(), None, 64)
    out = SamplingMask.empty(6, logits.shape[1], 64, device=DEVICE)
    buffer = torch.full((out.packed_mask.numel() + 4,), 0xAB, dtype=torch.uint8, device=DEVICE)
    mask = buffer[offset : offset + out.packed_mask.numel()].view(out.packed_mask.shape)
    out = dataclasses.replace(out, packed_mask=mask)
    compact_sampling_mask(logits, None, 64, backend=f"triton:{variant}", out=out)
    assert_masks_equal(out, expected)
    assert (buffer[:offset] == 0xAB).all() and (
        buffer[offset + out.packed_mask.numel() :] == 0xAB
    ).all()
