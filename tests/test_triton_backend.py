"""Triton-specific checks: shape-driven choices, unusual layouts and concurrent first calls.

The kernels' results are covered by the conformance suite; these tests pin down what it does not
reach: the `auto` choice and split configuration, zero strides, strided num_sampled_tokens,
full rows longer than a rank step, `fused` rows ranked one range per warp over several steps,
the block size of `fused` by rows per SM, concurrent first calls, `split`'s protocol (its
scratch left zero, consecutive calls of changing shapes, early stops and multi-block
look-backs), and the device helpers that are inline PTX on the GPU against Python. They run
on CUDA, or on the CPU under ``TRITON_INTERPRET=1``.
"""

from __future__ import annotations

import dataclasses
import math
import os
import threading

import pytest
import torch
from cases import bit_patterns

from masks import SamplingMask, compact_sampling_mask
from masks.testing import assert_masks_equal, make_logits, reference

pytest.importorskip("triton")
import triton
import triton.language as tl

from masks.backends import triton as backend

DEVICE = (
    torch.device("cuda", torch.cuda.current_device())
    if torch.cuda.is_available()
    else torch.device("cpu")
)
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


def recorded_launches(monkeypatch) -> list[tuple]:
    """``(kernel, tensors, constexprs)`` of every launch from now on: the plans are cleared, so
    every call shape launches through the JIT (`_launch`), which records it."""
    monkeypatch.setattr(backend, "_plans", {})
    launches = []
    launch = backend._launch

    def recording_launch(kernel, grid, num_warps, tensors, scalars, constexprs, *args):
        launches.append((kernel, tensors, constexprs))
        launch(kernel, grid, num_warps, tensors, scalars, constexprs, *args)

    monkeypatch.setattr(backend, "_launch", recording_launch)
    return launches


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
def test_fused_block_size_follows_rows_per_sm(monkeypatch, dtype):
    """`fused` loads `_FUSED_SMALL_BLOCK_BYTES` per iteration in its element size's band of rows
    per SM (`_FUSED_SMALL_BLOCK_ROWS_PER_SM`), `_FUSED_BLOCK_BYTES` on either side: another
    kernel, as exact (fp32 and fp64 rank in pass 1, 16-bit rows in pass 2, read in pairs for an
    even V and one by one for an odd V). Rows of 0 ids to all, W cut inside a block of either
    size."""
    launches = recorded_launches(monkeypatch)
    low, high = backend._FUSED_SMALL_BLOCK_ROWS_PER_SM[dtype.itemsize]
    sm_count = backend._sm_count(DEVICE)
    large, small = backend._FUSED_BLOCK_BYTES, backend._FUSED_SMALL_BLOCK_BYTES
    cases = [(math.floor(low * sm_count), large), (math.floor(low * sm_count) + 1, small)]
    if math.isfinite(high):
        cases.append((math.floor(high * sm_count) + 1, large))
    vocab_sizes = (9_000, 9_001) if dtype.itemsize == 2 else (9_000,)
    for vocab_size in vocab_sizes:
        for num_reqs, _ in cases:
            supports = [(r * 997) % (vocab_size + 1) for r in range(num_reqs)]
            supports[1] = vocab_size
            logits = make_logits(num_reqs, vocab_size, supports, dtype, seed=num_reqs,
                                 device=DEVICE)  # fmt: skip
            for width in (2_048, 5_000):
                actual = compact_sampling_mask(logits, None, width, backend="triton:fused")
                assert_masks_equal(actual, reference(logits.cpu(), None, width))
    blocks = [c["BLOCK"] * dtype.itemsize for k, _, c in launches if k is backend._fused_kernel]
    assert blocks == [block for _ in vocab_sizes for _, block in cases for _ in range(2)]


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
def test_mask_words_and_bytes(variant, offset, monkeypatch):
    """Mask rows of a multiple of 4 bytes use int32 word access unless the buffer is misaligned
    (the interpreter accepts misaligned words, so the launch's choice is checked too)."""
    launches = recorded_launches(monkeypatch)
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
    words = [c.get("WORDS") for _, t, c in launches if t[4].data_ptr() == mask.data_ptr()]
    assert words == [None if variant == "rowwise" else offset == 0], words  # not the probe's


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("width", [2_048, 20_000])
def test_full_rows_write_consecutive_ids(variant, dtype, width):
    """Rows with no masked column rank through the full-word path (steps of consecutive ids,
    cut at W mid-step for W=20000) in `fused` too: bf16's pass 2 in rank steps of 16384
    columns, fp32's pass 1 in blocks of 8192, both more than the conformance suite's emulated
    vocabulary. One masked column past the first 16384 of row 1."""
    logits = make_logits(3, 33_000, "full", dtype, seed=8, device=DEVICE)
    logits[1, 16_390] = float("-inf")
    expected = reference(logits.cpu(), None, width)
    got = compact_sampling_mask(logits, None, width, backend=f"triton:{variant}")
    assert_masks_equal(got, expected)


@pytest.mark.parametrize("vocab_size", [70_016, 70_001])  # mask rows of whole words, and not
@pytest.mark.parametrize(
    "dtype, ranks_in_pass1",
    [(torch.bfloat16, False), (torch.float32, False), (torch.float32, True)],
    ids=["bf16", "fp32-two-passes", "fp32"],  # pass-1 bytes; words; words ranked as they stream
)
def test_fused_ranks_rows_that_fit_in_w_one_range_per_warp(
    monkeypatch, vocab_size, dtype, ranks_in_pass1
):
    """A two-pass `fused` row whose count fits in W is ranked one range of mask words per warp,
    after a count of each range. Here a range is 274 words (three rank steps, two count steps:
    more than the conformance suite's vocabularies reach), with hundreds of ids per range, ids
    on both sides of every range edge, all ids in one range, exactly W ids, and W + 1 (ranked
    from the row's start instead). fp32 rows take two passes only with `_FUSED_RANKS_IN_PASS1`
    off (a tuning knob); by default they meet the same ids across pass 1's blocks."""
    monkeypatch.setattr(backend, "_plans", {})
    ranked = {**backend._FUSED_RANKS_IN_PASS1, dtype.itemsize: ranks_in_pass1}
    monkeypatch.setattr(backend, "_FUSED_RANKS_IN_PASS1", ranked)
    width = 2_048
    logits = make_logits(7, vocab_size, (0, 300, 2_000, width, width + 1, 0, 0), dtype, seed=9,
                         junk=True, device=DEVICE)  # fmt: skip
    range_columns = 32 * math.ceil(math.ceil(vocab_size / 32) / backend._FUSED_NUM_WARPS)
    edges = torch.arange(range_columns, vocab_size, range_columns, device=DEVICE)
    logits[5, torch.cat([edges - 1, edges, torch.tensor([vocab_size - 1], device=DEVICE)])] = 1.0
    logits[6, range_columns + 5 : range_columns + 900] = 2.0
    expected = reference(logits.cpu(), None, width)
    got = compact_sampling_mask(logits, None, width, backend="triton:fused")
    assert_masks_equal(got, expected)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
@pytest.mark.parametrize(
    "layout, pairs",
    [("contiguous", True), ("odd row stride", False), ("2-byte offset", False), ("odd V", False)],
)
def test_fused_reads_16_bit_logits_two_per_word_where_the_layout_allows(
    monkeypatch, dtype, layout, pairs
):
    """`fused` tests two 16-bit logits per int32 (SWAR) only on rows of an even number of
    contiguous columns that start 4-byte aligned, else one per int16: the launch says which. Every
    one of the 65536 bit patterns sits in both halves of a word (the patterns, then shifted by one
    column), so each half's test meets every exponent, payload and neighbour."""
    launches = recorded_launches(monkeypatch)
    patterns = bit_patterns(dtype, "every", seed=5).view(torch.int16)  # copied as integers
    grid = torch.stack([patterns, patterns.roll(1)]).view(16, 8_192)
    columns = {"contiguous": 8_192, "odd row stride": 8_193}.get(layout, 8_194)
    storage = torch.zeros(16, columns, dtype=torch.int16)
    host = storage[:, 1:8_193] if layout == "2-byte offset" else storage[:, :8_192]
    if layout == "odd V":
        grid, host = grid[:, :8_191], host[:, :8_191]
    host.copy_(grid)  # then the same view of the storage's copy on the device
    device_storage = storage.to(DEVICE)
    logits = device_storage.as_strided(host.shape, host.stride(), host.storage_offset()).view(dtype)
    expected = reference(logits.cpu(), None, 2_048)
    got = compact_sampling_mask(logits, None, 2_048, backend="triton:fused")
    assert_masks_equal(got, expected)
    read_in_pairs = [c["PAIRS"] for kernel, _, c in launches if kernel is backend._fused_kernel]
    assert read_in_pairs == [pairs]


@triton.jit
def _bit_helpers_kernel(words_ptr, popcounts_ptr, lowest_ptr, top_ptr, N: tl.constexpr):
    index = tl.arange(0, N)
    words = tl.load(words_ptr + index)
    others = tl.load(words_ptr + (index + 1) % N)
    tl.store(popcounts_ptr + index, backend._popcount(words))
    tl.store(lowest_ptr + index, backend._lowest_bit(words))
    tl.store(top_ptr + index, backend._top_bits(words, others))


def test_bit_helpers_match_python_on_every_bit_position():
    """`_popcount`, `_lowest_bit` and `_top_bits`: inline PTX on the GPU (``popc``, ``brev`` +
    ``bfind.shiftamt``, ``prmt``), plain integer ops in the interpreter; each against Python
    (count, lowest bit, bits 15 and 31 of a word and of the next one moved to bits 7, 15, 23 and
    31), on every single bit, the extremes, and seeded random words."""
    generator = torch.Generator().manual_seed(9)
    singles = [1 << bit for bit in range(32)]
    extremes = [-1, 2**31 - 1, 0x55555555, 0x0F0F0F0F, 0x7F800000, 3]
    unsigned = torch.tensor([*singles, *extremes], dtype=torch.int64) & 0xFFFFFFFF
    random = torch.randint(1, 2**32, (1024 - len(unsigned),), generator=generator)
    unsigned = torch.cat([unsigned, random])
    words = torch.where(unsigned >= 2**31, unsigned - 2**32, unsigned).to(torch.int32)
    on_device = [words.to(DEVICE)] + [torch.empty_like(words, device=DEVICE) for _ in range(3)]
    _bit_helpers_kernel[(1,)](*on_device, N=words.numel())
    popcounts, lowest, top = (t.cpu() for t in on_device[1:])
    values = unsigned.tolist()
    for index, value in enumerate(values):
        other = values[(index + 1) % len(values)]
        top_bits = sum(
            ((word >> bit) & 1) << to
            for word, pairs in ((value, ((15, 7), (31, 15))), (other, ((15, 23), (31, 31))))
            for bit, to in pairs
        )
        expected = (bin(value).count("1"), (value & -value).bit_length() - 1, top_bits)
        got = (int(popcounts[index]), int(lowest[index]), int(top[index]) & 0xFFFFFFFF)
        assert got == expected, (
            f"words {value:#010x}, {other:#010x}: (popcount, lowest bit, top bits) {got} != "
            f"{expected}"
        )


@triton.jit
def _emit_ids_kernel(
    words_ptr, slots_ptr, ids_ptr, width, N: tl.constexpr, THREAD_LOOP: tl.constexpr
):
    index = tl.arange(0, N)
    words = tl.load(words_ptr + index)
    slots = tl.load(slots_ptr + index)
    backend._emit_ids(ids_ptr, words, slots, index * 32, width, 32, THREAD_LOOP)


@pytest.mark.parametrize("thread_loop", [True, False], ids=["per-thread loop", "rounds loop"])
def test_emit_ids_writes_each_words_bits_to_its_slots_up_to_w(thread_loop):
    """`_emit_ids` with THREAD_LOOP runs a PTX loop over each thread's words on the GPU
    (`_EMIT_PTX`), without it (and in the interpreter) Triton's loop of uniform rounds; each
    against Python on words of every popcount from 0 to 32, with consecutive slots (each word's
    bits in order) cut by a width that ends inside a word, so later bits and words write
    nothing."""
    if thread_loop and DEVICE.type == "cpu":
        pytest.skip("the interpreter runs no inline PTX: THREAD_LOOP takes the rounds loop too")
    generator = torch.Generator().manual_seed(11)
    bits_per_word = torch.randint(0, 33, (512,), generator=generator)
    order = torch.rand(512, 32, generator=generator).argsort(1)
    chosen = (order < bits_per_word[:, None]).to(torch.int64)
    unsigned = (chosen << torch.arange(32)).sum(1)
    words = torch.where(unsigned >= 2**31, unsigned - 2**32, unsigned).to(torch.int32)
    counts = chosen.sum(1)
    slots = (counts.cumsum(0) - counts).to(torch.int32)
    cut = 256 + int((counts[256:] >= 8).nonzero()[0])  # a word past the middle with 8+ bits
    width = int(slots[cut]) + 3
    expected = torch.full((int(counts.sum()),), -1, dtype=torch.int32)
    for index, value in enumerate(unsigned.tolist()):
        set_bits = [bit for bit in range(32) if value >> bit & 1]
        for rank, bit in enumerate(set_bits):
            if slots[index] + rank < width:
                expected[slots[index] + rank] = 32 * index + bit
    ids = torch.full_like(expected, -1, device=DEVICE)
    _emit_ids_kernel[(1,)](
        words.to(DEVICE), slots.to(DEVICE), ids, width, N=512, THREAD_LOOP=thread_loop
    )
    ids = ids.cpu()
    differs = (ids != expected).nonzero()
    slot = int(differs[0]) if differs.numel() else None
    assert slot is None, f"slot {slot}: id {int(ids[slot])}, expected {int(expected[slot])}"


def test_range_substeps_must_fill_the_ptx_loops(monkeypatch):
    """A thread's words are handed to `_EMIT_PTX` `_EMIT_WORDS` at a time; a knob that leaves a
    call short would give it undefined operands, so planning the kernel refuses it."""
    monkeypatch.setattr(backend, "_FUSED_RANGE_SUBSTEPS", 2)
    with pytest.raises(ValueError, match="multiple of _EMIT_WORDS"):
        backend._fused_constexprs(torch.bfloat16, True, True, backend._FUSED_BLOCK_BYTES)


PLANNED_CALLS = [  # (variant, num_reqs, vocab_size, supports, num_sampled_tokens, dtype)
    ("split", 3, 20_001, (5, 0, 9_000), (1, 1, 0), torch.float32),
    ("split", 1, 151_936, 9_000, None, torch.bfloat16),
    ("fused", 4, 32_768, (0, 50, 2_048, 32_768), None, torch.bfloat16),  # paired 16-bit reads
    ("fused", 3, 20_001, (50, 20_001, 7), (2, 1, -1), torch.float32),
    ("rowwise", 2, 10_007, (9, 10_007), None, torch.float16),
]


@pytest.mark.skipif(DEVICE.type != "cuda", reason="launch plans are made for CUDA launches only")
@pytest.mark.parametrize("raw_launcher", [True, False], ids=["C launcher", "CompiledKernel.run"])
@pytest.mark.parametrize("call", PLANNED_CALLS, ids=lambda call: f"{call[0]}-{call[5]}")
def test_planned_launch_matches_the_first(monkeypatch, raw_launcher, call):
    """A shape's first call goes through the JIT and leaves a `_Plan`; the next call of that
    shape launches the plan alone (the JIT path is made to fail), pointers passed as ints, in
    either way of queueing it, into outputs poisoned before each call."""
    variant, num_reqs, vocab_size, supports, num_sampled, dtype = call
    if raw_launcher and not backend._RAW_LAUNCHER:
        pytest.skip(f"triton {triton.__version__}: plans go through CompiledKernel.run")
    monkeypatch.setattr(backend, "_RAW_LAUNCHER", raw_launcher)
    monkeypatch.setattr(backend, "_plans", {})
    logits = make_logits(num_reqs, vocab_size, supports, dtype, seed=8, junk=True, device=DEVICE)
    if num_sampled is not None:
        num_sampled = torch.tensor(num_sampled, dtype=torch.int64, device=DEVICE)
    expected = reference(logits.cpu(), None if num_sampled is None else num_sampled.cpu(), 2_048)
    out = SamplingMask.empty(num_reqs, vocab_size, 2_048, device=DEVICE)
    for call_index in range(2):
        out.token_ids.fill_(0x5A5A5A5A)
        out.counts.fill_(12345)
        out.packed_mask.fill_(0xA5)
        compact_sampling_mask(logits, num_sampled, 2_048, backend=f"triton:{variant}", out=out)
        assert_masks_equal(out, expected)
        if call_index == 0:
            assert len(backend._plans) == 1, "the first call left no launch plan"
            (plan,) = backend._plans.values()
            through_run = hasattr(plan.enqueue, "launch")  # a CudaLauncher, not its C launch
            assert through_run != raw_launcher, f"plan queues through {plan.enqueue!r}"
            monkeypatch.setattr(backend, "_launch", _jit_launch_must_not_run)


def _jit_launch_must_not_run(*args, **kwargs):
    raise AssertionError("a planned shape went through the JIT")


def _split_state() -> torch.Tensor:
    """A copy of the current stream's zeroed scratch, as the last `split` call left it."""
    device = torch.empty(0, device=DEVICE).device  # with an index: the stream is looked up by it
    with backend._stream_scratch(device).hold(1, device) as state:
        return state.cpu()


def test_split_leaves_its_scratch_zero():
    """Ticket, done counter and every tile flag are reset by the call's last program."""
    logits = make_logits(3, 20_001, (5, 0, 9_000), seed=6, junk=True, device=DEVICE)
    num_sampled = torch.tensor([1, 1, 0], device=DEVICE)
    _, num_chunks, _ = backend._split_config(3, 20_001, backend._sm_count(DEVICE))
    assert num_chunks > 1
    for width in (2048, 3):
        actual = compact_sampling_mask(logits, num_sampled, width, backend="triton:split")
        assert_masks_equal(actual, reference(logits.cpu(), num_sampled.cpu(), width))
        state = _split_state()
        assert state.numel() >= 2 + 3 * num_chunks
        assert not state.any(), state.nonzero().flatten().tolist()


# (num_reqs, vocab_size, supports, num_sampled_tokens, width, dtype), run one after another
SPLIT_CALLS = [
    (1, 20_001, 9_000, None, 2_048, torch.float32),  # many chunks, the whole row looked back
    (1, 20_001, 9_000, None, 5, torch.float32),  # every chunk after the first stops early
    (1, 20_001, 9_000, None, 1_000, torch.bfloat16),  # stops a few chunks into the row
    (2, 3_001, (0, 3_001), None, 3_001, torch.float16),  # W = V: every id of a full row
    (3, 4_128, (40, 4_128, 2_000), (1, 0, 2), 100, torch.float32),  # an inactive middle row
    (4, 777, (0, 1, 776, 777), (3, 1, 0, 5), 64, torch.float64),
    (5, 65_536, (1, 300, 20_000, 65_536, 0), (1, -1, 2, 1, 1), 2_048, torch.float32),
    (5, 65_536, (1, 300, 20_000, 65_536, 0), (1, 1, 0, 1, 1), 7, torch.bfloat16),
    (2, 1, (1, 0), None, 1, torch.float32),  # one chunk per row: no look-back at all
    (1, 20_001, 9_000, (0,), 2_048, torch.float32),  # an inactive single row of many chunks
]


@pytest.mark.parametrize("tiles_block", [None, 4])
def test_split_consecutive_calls(monkeypatch, tiles_block):
    """Shapes change from call to call on the same scratch; with `tiles_block` the look-back
    reads its flags a few at a time, so early stops and the last chunk's sum cross blocks."""
    if tiles_block is not None:
        monkeypatch.setattr(backend, "_TILES_BLOCK", tiles_block)
        monkeypatch.setattr(backend, "_plans", {})  # launches planned with the default
    for index, (num_reqs, vocab_size, supports, num_sampled, width, dtype) in enumerate(
        SPLIT_CALLS
    ):
        logits = make_logits(
            num_reqs, vocab_size, supports, dtype, seed=index, junk=True, device=DEVICE
        )
        if num_sampled is not None:
            num_sampled = torch.tensor(num_sampled, device=DEVICE)
        expected = reference(
            logits.cpu(), None if num_sampled is None else num_sampled.cpu(), width
        )
        out = SamplingMask.empty(num_reqs, vocab_size, width, device=DEVICE)
        out.token_ids.fill_(0x5A5A5A5A)  # poisoned: an unwritten entry fails
        out.counts.fill_(12345)
        out.packed_mask.fill_(0xA5)
        compact_sampling_mask(logits, num_sampled, width, backend="triton:split", out=out)
        assert_masks_equal(out, expected)
        assert not _split_state().any(), f"call {index} left its scratch dirty"
