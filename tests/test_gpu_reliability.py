"""Reliability on the GPU (issue #8): every backend keeps its promises under the conditions a
serving engine creates.

* Streams: kernels run on the caller's current stream, after a producer still writing the logits
  there (a self-check shows that a launch on another stream would be caught); no host sync.
* Size: inputs of more than 2**31 elements, rows past 32-bit offsets included.
* Threads: eight threads' first calls at once, compilation included.
* Compilation: 24 shapes do not compile a kernel each.
* Memory: 10,000 calls leave device memory flat; a call's extra peak memory is small scratch.
* Errors: a failing compile or driver surfaces naming the backend; nothing is swallowed (but
  `auto` answers a dtype its first backend fails on with the next one, and warns).
* First calls: from a thread that has done no CUDA work, in sync debug mode, during a capture.
* CUDA graphs (last: a capture that fails may leave the CUDA context unusable): a call captured
  with preallocated outputs replays right on new inputs, and shares no scratch with eager calls
  on its capture stream.

Every test is marked `gpu` (``pytest -m gpu tests`` runs them with test_fuzz.py's GPU budget)
and runs once per backend x variant on CUDA; without a GPU each is skipped with the registry's
reason. Each records the figure the issue asks for through `record_figures` (a JSON line;
appended to the file named by MASKS_RELIABILITY_LOG when set). docs/reliability.md explains
the figures and each backend's compilation and memory policy.
"""

from __future__ import annotations

import functools
import importlib
import random
import statistics
import threading
import time
import warnings
from collections.abc import Callable

import pytest
import torch
from cases import ALL_DTYPES
from suite import (
    SLEEP_CYCLES,
    backend_params,
    counting_calls,
    gpu_backend_params,
    probe_cached,
    returns_while_the_stream_spins,
)

from masks import BackendUnavailableError, SamplingMask, compact_sampling_mask, registry
from masks.testing import assert_csr_equal, assert_masks_equal, make_logits, reference

CUDA = torch.device("cuda")
BACKENDS = gpu_backend_params()


@functools.cache
def inputs_and_reference(
    num_reqs: int,
    vocab_size: int,
    width: int,
    dtype: torch.dtype,
    counts_dtype: torch.dtype | None,
    seed: int,
) -> tuple[torch.Tensor, torch.Tensor | None, SamplingMask]:
    """Seeded CUDA logits whose rows keep 0, 1, around W, half or all of their columns, with
    +inf and NaNs, optional counts with inactive rows, and their reference computed on the CPU
    (independent of any CUDA code path). Built once per session: callers must not modify them.
    """
    rng = random.Random(seed)
    choices = (0, 1, width - 1, width, width + 1, vocab_size // 2, vocab_size)
    supports = [min(vocab_size, max(0, rng.choice(choices))) for _ in range(num_reqs)]
    logits = make_logits(num_reqs, vocab_size, supports, dtype, seed, CUDA, junk=True)
    counts = None
    if counts_dtype is not None:
        values = [rng.choice((-1, 0, 1, 2)) for _ in range(num_reqs)]
        counts = torch.tensor(values, dtype=counts_dtype, device=CUDA)
    return logits, counts, expected_for(logits, counts, width)


def expected_for(logits: torch.Tensor, counts: torch.Tensor | None, width: int) -> SamplingMask:
    """The reference, computed on the CPU."""
    return reference(logits.cpu(), None if counts is None else counts.cpu(), width)


def copy_of(mask: SamplingMask) -> SamplingMask:
    fields = (mask.token_ids, mask.counts, mask.packed_mask)
    return SamplingMask(*(t.clone() for t in fields), vocab_size=mask.vocab_size)


def poison(out: SamplingMask) -> None:
    """Overwrite a result with plausible garbage, so an entry left unwritten is seen."""
    out.token_ids.fill_(0x5A5A5A5A)
    out.counts.fill_(12345)
    out.packed_mask.fill_(0xA5)


# --- streams ----------------------------------------------------------------------------------

STREAM_SHAPE = (16, 32_003, 512)  # R, V (odd: strided loads, unaligned mask rows), W


def produce_then_compact(
    backend: str, on_producer_stream: bool
) -> tuple[SamplingMask, tuple, SamplingMask]:
    """A producer spins on a side stream, then overwrites stale logits (every column kept) with
    fresh ones; the backend runs on that stream (or, for the self-check, on the default one),
    and so does the host step. Returns (result, its CSR, the fresh logits' reference)."""
    width = STREAM_SHAPE[2]
    fresh, counts, expected = inputs_and_reference(*STREAM_SHAPE, torch.bfloat16, torch.int32, 21)
    compact_sampling_mask(fresh, counts, width, backend=backend)  # compile outside the window
    logits = torch.ones_like(fresh)
    torch.cuda.synchronize()
    producer = torch.cuda.Stream()
    with torch.cuda.stream(producer):
        torch.cuda._sleep(SLEEP_CYCLES)
        logits.copy_(fresh)
    with torch.cuda.stream(producer if on_producer_stream else torch.cuda.default_stream()):
        actual = compact_sampling_mask(logits, counts, width, backend=backend)
        csr = actual.to_csr()
    torch.cuda.synchronize()
    return actual, csr, expected


@pytest.mark.parametrize("backend", BACKENDS)
def test_runs_on_the_callers_stream(backend: str, record_figures) -> None:
    actual, csr, expected = produce_then_compact(backend, on_producer_stream=True)
    assert_masks_equal(actual, expected)
    assert_csr_equal(csr, expected.to_csr())
    stale, _, _ = produce_then_compact(backend, on_producer_stream=False)
    with pytest.raises(AssertionError, match="differs"):  # self-check: a wrong stream is seen
        assert_masks_equal(stale, expected)
    record_figures(backend=backend, producer_sleep_cycles=SLEEP_CYCLES, wrong_stream_caught=True)


@pytest.mark.parametrize("backend", BACKENDS)
def test_no_host_synchronisation(backend: str, monkeypatch) -> None:
    """torch's sync debug mode raises on any synchronising torch call inside the backend; also
    on a first call made in that mode, whose registry probe (a copy to the device and a
    comparison on the host) sets the mode aside rather than failing, and caching the failure.
    What the mode cannot see, a synchronisation by the backend's own runtime (CuPy, Numba,
    Triton's driver calls): a spin queued before a call keeps the stream busy far longer than
    any call's host dispatch, so it must still be running when the call returns."""
    logits, counts, expected = inputs_and_reference(4, 32_003, 512, torch.float32, torch.int64, 22)
    out = SamplingMask.empty(4, 32_003, 512, device=CUDA)
    compact_sampling_mask(logits, counts, 512, backend=backend, out=out)  # resolve and compile
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")
    try:
        compact_sampling_mask(logits, counts, 512, backend=backend, out=out)
        monkeypatch.setattr(registry, "_probe_failures", {})
        monkeypatch.setattr(registry, "_resolved", {})
        poison(out)
        compact_sampling_mask(logits, counts, 512, backend=backend, out=out)  # probed first
        assert torch.cuda.get_sync_debug_mode() == 2  # the probe restored the caller's mode
    finally:
        torch.cuda.set_sync_debug_mode("default")
    assert_masks_equal(out, expected)
    poison(out)
    still_busy, _ = returns_while_the_stream_spins(
        lambda: compact_sampling_mask(logits, counts, 512, backend=backend, out=out)
    )
    assert still_busy, f"{backend} returned only after its stream had drained"
    assert_masks_equal(out, expected)


# --- size -------------------------------------------------------------------------------------

HUGE_SHAPE = (8_200, 262_144)
"""2,149,580,800 elements (> 2**31): the last rows start past 32-bit element offsets."""
HUGE_KEEP = (0.0, 1e-4, 0.01, 0.5, 1.0)
"""Row r keeps about HUGE_KEEP[r % 5] of its columns: empty, sparse, wider than W, dense, full."""
HUGE_INACTIVE_ROW = HUGE_SHAPE[0] - 4
HUGE_ROWS_CHECKED = (0, 1, 2, 3, 4, 4_103, 8_195, 8_196, 8_197, 8_198, 8_199)
"""The first rows, one in the middle and the last five: every kind of row, the inactive one,
and the last row, full, whose last logit is the tensor's last element."""
HUGE_WIDTH = 2_048


@pytest.fixture(scope="module", params=[torch.float32, torch.bfloat16], ids=str)
def huge_input(request: pytest.FixtureRequest):
    """(logits, counts, checked rows, their reference) for one dtype, built on the GPU.

    Uniform values masked to -inf by a per-row threshold, then NaN and +inf in strided
    patterns; the reference is computed on the CPU for a handful of rows only.
    """
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA device")
    dtype = request.param
    num_reqs, vocab_size = HUGE_SHAPE
    needed = num_reqs * vocab_size * (dtype.itemsize + 1) + (2 << 30)  # logits, a bool mask
    free, _ = torch.cuda.mem_get_info()
    if free < needed:
        pytest.skip(
            f"needs {needed / 2**30:.1f} GiB of free device memory, {free / 2**30:.1f} free"
        )
    generator = torch.Generator(device=CUDA).manual_seed(8)
    logits = torch.rand(HUGE_SHAPE, generator=generator, device=CUDA, dtype=dtype)
    keep = torch.tensor(HUGE_KEEP, device=CUDA)[torch.arange(num_reqs, device=CUDA) % 5]
    logits.masked_fill_(logits >= keep.to(dtype).unsqueeze(1), float("-inf"))
    logits[0::3, 7::101] = float("nan")
    logits[1::3, 11::89] = float("inf")
    counts = torch.ones(num_reqs, dtype=torch.int64, device=CUDA)
    counts[HUGE_INACTIVE_ROW] = 0
    rows = torch.tensor(HUGE_ROWS_CHECKED, device=CUDA)
    expected = expected_for(logits[rows], counts[rows], HUGE_WIDTH)
    assert int(expected.counts.max()) > HUGE_WIDTH, "no checked row is wider than W"
    yield logits, counts, rows, expected
    del logits, counts
    torch.cuda.empty_cache()


def rows_of(mask: SamplingMask, rows: torch.Tensor) -> SamplingMask:
    """Some rows of a result, as a result of their own (to compare with a row slice's)."""
    fields = (mask.token_ids, mask.counts, mask.packed_mask)
    return SamplingMask(*(t[rows] for t in fields), vocab_size=mask.vocab_size)


def extra_peak_bytes(run: Callable[[], object]) -> int:
    """Device memory ``run`` allocates at its peak beyond what was allocated before it."""
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    before = torch.cuda.memory_allocated()
    run()
    torch.cuda.synchronize()
    return torch.cuda.max_memory_allocated() - before


@pytest.mark.parametrize("backend", BACKENDS)
def test_inputs_past_2_31_elements(backend: str, huge_input, record_figures) -> None:
    logits, counts, rows, expected = huge_input
    out = SamplingMask.empty(*HUGE_SHAPE, HUGE_WIDTH, device=CUDA)
    started = time.perf_counter()
    peak = extra_peak_bytes(
        lambda: compact_sampling_mask(logits, counts, HUGE_WIDTH, backend=backend, out=out)
    )
    seconds = time.perf_counter() - started
    record_figures(
        backend=backend,
        dtype=str(logits.dtype),
        elements=logits.numel(),
        bytes=logits.numel() * logits.element_size(),
        seconds_first_call=round(seconds, 3),
        extra_peak_bytes=peak,
        rows_checked=list(HUGE_ROWS_CHECKED),
    )
    assert_masks_equal(rows_of(out, rows), expected)
    assert peak <= scratch_bound(backend, *HUGE_SHAPE)


# --- threads ----------------------------------------------------------------------------------

THREADS = 8
CALLS_PER_THREAD = 3
KERNEL_CACHES = {
    "triton": ("_plans",),
    "cupy": ("_kernels", "_plans"),
    "numba": ("_kernels", "_plans", "_streams"),
}
"""Module-level caches each backend fills on first use (compiled kernels, launch plans, stream
wrappers); Triton's JIT also keeps compiled kernels per function (`device_caches`)."""


def _triton_jit_functions() -> list:
    import triton

    from masks.backends import triton as backend

    return [f for f in vars(backend).values() if isinstance(f, triton.runtime.JITFunction)]


def forget_kernels(backend: str, monkeypatch: pytest.MonkeyPatch) -> Callable[[], int]:
    """Empty the backend's kernel caches (restored after the test) so the next calls start cold;
    returns a function counting the kernels compiled (or loaded from a disk cache) since, at the
    kernel language's own compile entry point (CuPy's ``RawModule``, Numba's ``compile``,
    Triton's per-device cache), so a compile on any path of the backend counts."""
    name = backend.partition(":")[0]
    if name == "torch":
        return lambda: 0  # nothing to compile
    module = importlib.import_module(f"masks.backends.{name}")
    for cache in KERNEL_CACHES[name]:
        monkeypatch.setattr(module, cache, {})
    if name == "cupy":  # one NVRTC module per (device, dtype) holds every kernel
        return counting_calls(monkeypatch, importlib.import_module("cupy"), "RawModule")
    if name == "numba":
        from numba.cuda.dispatcher import CUDADispatcher

        return counting_calls(monkeypatch, CUDADispatcher, "compile")
    functions = _triton_jit_functions()
    if not all(hasattr(f, "device_caches") for f in functions):
        pytest.skip("this Triton version keeps no per-device kernel cache (`device_caches`)")
    for function in functions:
        function.device_caches.clear()
    return lambda: sum(len(c[0]) for f in functions for c in f.device_caches.values())


def on_threads_at_once(work: Callable[[int], None]) -> float:
    """Run ``work(index)`` on `THREADS` threads, each on its own CUDA stream, released together
    at a barrier; return the seconds until all joined, or raise the first thread's error."""
    barrier = threading.Barrier(THREADS)
    errors: list[tuple[int, BaseException]] = []

    def run(index: int) -> None:
        try:
            stream = torch.cuda.Stream()
            barrier.wait(timeout=60)
            with torch.cuda.stream(stream):
                work(index)
        except BaseException as error:  # collected, re-raised on the main thread
            errors.append((index, error))

    threads = [threading.Thread(target=run, args=(i,)) for i in range(THREADS)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        index, error = errors[0]
        raise AssertionError(f"thread {index} of {THREADS}: {error!r}") from error
    return time.perf_counter() - started


@pytest.mark.parametrize("backend", BACKENDS)
def test_concurrent_cold_start(backend: str, monkeypatch, record_figures) -> None:
    """Eight threads, each on its own stream with its own dtype and counts dtype, make their
    first calls at once after the registry and the backend's caches were emptied."""
    inputs = []
    for index in range(THREADS):
        counts_dtype = (torch.int32, torch.int64)[index // len(ALL_DTYPES)]
        dtype = ALL_DTYPES[index % len(ALL_DTYPES)]
        inputs.append(inputs_and_reference(3, 20_011, 100, dtype, counts_dtype, index))
    monkeypatch.setattr(registry, "_probe_failures", {})
    monkeypatch.setattr(registry, "_resolved", {})
    forget_kernels(backend, monkeypatch)

    def work(index: int) -> None:
        logits, counts, expected = inputs[index]
        for _ in range(CALLS_PER_THREAD):
            actual = compact_sampling_mask(logits, counts, 100, backend=backend)
            assert_masks_equal(actual, expected)

    seconds = on_threads_at_once(work)
    record_figures(
        backend=backend,
        threads=THREADS,
        calls=THREADS * CALLS_PER_THREAD,
        seconds_cold=round(seconds, 3),
    )


SHARED_SHAPE_CALLS = 25


@pytest.mark.parametrize("backend", BACKENDS)
def test_threads_calling_one_shape_get_their_own_results(backend: str, record_figures) -> None:
    """Eight threads call one shape at once, each with its own logits, counts and outputs on its
    own stream, so they share whatever the backend keeps per shape (a launch plan, CuPy's
    parameter block): every call must see its own pointers."""
    inputs = [
        inputs_and_reference(4, 20_011, 100, torch.bfloat16, torch.int32, 70 + index)
        for index in range(THREADS)
    ]
    outs = [SamplingMask.empty(4, 20_011, 100, device=CUDA) for _ in range(THREADS)]
    compact_sampling_mask(inputs[0][0], inputs[0][1], 100, backend=backend)  # plan made

    def work(index: int) -> None:
        logits, counts, expected = inputs[index]
        out = outs[index]
        for _ in range(SHARED_SHAPE_CALLS):
            poison(out)
            compact_sampling_mask(logits, counts, 100, backend=backend, out=out)
            assert_masks_equal(out, expected)

    on_threads_at_once(work)
    record_figures(backend=backend, threads=THREADS, calls=THREADS * SHARED_SHAPE_CALLS)


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="runs the CUDA host step")
def test_threads_waiting_at_once_get_their_own_csr() -> None:
    """Eight threads, each with its own stream and result (rows keeping 0, 1, around W, half or
    all of their columns, so `wait()` also decodes on the device), take their CSR at once, 10
    times each: they share the device's side stream of `PendingCSR.wait`, and each must get its
    own answer."""
    masks_and_expected = []
    for index in range(THREADS):
        logits, counts, _ = inputs_and_reference(6, 20_011, 100, torch.float32, None, 80 + index)
        mask = compact_sampling_mask(logits, counts, 100, backend="torch")
        masks_and_expected.append((mask, expected_for(logits, counts, 100).to_csr()))
    torch.cuda.synchronize()

    def work(index: int) -> None:
        mask, expected = masks_and_expected[index]
        for _ in range(10):
            assert_csr_equal(mask.to_csr_async().wait(), expected)

    on_threads_at_once(work)


FRESH_THREAD_SHAPE = (256, 4_099, 64)
"""Many rows (`auto` runs `fused`, which needs no scratch) and an odd vocabulary."""


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_threads_first_cuda_work_is_a_call(backend: str) -> None:
    """A new thread whose first CUDA work is a call with preallocated outputs, on a shape whose
    plan another thread made: nothing before the launch binds the device's context to the
    thread, so the backend must (a driver-API launch finds none otherwise)."""
    num_reqs, vocab_size, width = FRESH_THREAD_SHAPE
    logits, _, expected = inputs_and_reference(*FRESH_THREAD_SHAPE, torch.float32, None, 73)
    out = SamplingMask.empty(num_reqs, vocab_size, width, device=CUDA)
    compact_sampling_mask(logits, None, width, backend=backend, out=out)  # the plan, made here
    poison(out)
    torch.cuda.synchronize()
    raised: list[BaseException] = []

    def first_cuda_work() -> None:
        try:
            compact_sampling_mask(logits, None, width, backend=backend, out=out)
        except BaseException as error:  # reported below, in the test's thread
            raised.append(error)

    thread = threading.Thread(target=first_cuda_work)
    thread.start()
    thread.join()
    if raised:
        raise raised[0]
    torch.cuda.synchronize()
    assert_masks_equal(out, expected)


# --- compilation ------------------------------------------------------------------------------

COMPILE_SHAPES = [  # (R, V): common vocabularies, batch sizes from 1 to 512
    (1, 32_000), (2, 32_064), (3, 50_257), (4, 50_304), (5, 65_536), (8, 100_352),
    (12, 128_256), (16, 129_280), (24, 151_936), (32, 152_064), (48, 163_840), (64, 201_088),
    (96, 250_880), (128, 256_000), (160, 262_144), (200, 30_522), (256, 51_200),
    (300, 49_152), (384, 102_400), (512, 151_936), (2, 92_553), (6, 106_496), (40, 180_000),
    (640, 64_000),
]  # fmt: skip
MAX_KERNELS = {
    "torch": 0, "cupy": 1, "numba": 2, "triton": 20, "triton:split": 12, "triton:fused": 8,
    "triton:rowwise": 6,
}  # fmt: skip
"""Kernels one dtype may need over any number of contiguous shapes of V > 1
(docs/reliability.md), by backend, or by variant where the variants' kernels differ: CuPy one
module per (device, dtype) holding every variant's kernels; Numba two kernels per (device,
element size, counts dtype); Triton, with WORDS = mask rows word-aligned: `split` 3 CHUNK
buckets x (V % 16 == 0 or not) x WORDS, `fused` (V % 16) x WORDS x 2 block sizes (by rows per
SM), 12 + 8 = 20 for `auto`; `rowwise` (V % 16) x (W % 16 == 0, W == 1 or neither). Each is
below the number of `COMPILE_SHAPES`, so a backend that compiled a kernel per shape would
fail."""


def max_kernels(backend: str) -> int:
    """`MAX_KERNELS` of a variant, else of its backend (``"triton:auto"`` is ``"triton"``)."""
    return MAX_KERNELS.get(backend, MAX_KERNELS[backend.partition(":")[0]])


def test_the_kernel_bounds_are_below_the_shapes() -> None:
    assert max(MAX_KERNELS.values()) < len(COMPILE_SHAPES)


@pytest.mark.parametrize("backend", BACKENDS)
def test_shapes_do_not_compile_a_kernel_each(backend: str, monkeypatch, record_figures) -> None:
    compiled = forget_kernels(backend, monkeypatch)
    largest = max(num_reqs * vocab_size for num_reqs, vocab_size in COMPILE_SHAPES)
    values = torch.randn(largest, device=CUDA)
    compiling_calls, compile_seconds, call_seconds = 0, 0.0, []
    for num_reqs, vocab_size in COMPILE_SHAPES:
        logits = values[: num_reqs * vocab_size].view(num_reqs, vocab_size)
        before = compiled()
        started = time.perf_counter()
        compact_sampling_mask(logits, backend=backend)
        torch.cuda.synchronize()
        seconds = time.perf_counter() - started
        if compiled() > before:
            compiling_calls += 1
            compile_seconds += seconds
        else:
            call_seconds.append(seconds)
    record_figures(
        backend=backend,
        shapes=len(COMPILE_SHAPES),
        kernels_compiled=compiled(),
        calls_that_compiled=compiling_calls,
        seconds_in_compiling_calls=round(compile_seconds, 3),
        median_call_ms_without_compiling=statistics.median(call_seconds) * 1e3
        if call_seconds
        else None,
    )
    assert compiled() <= max_kernels(backend)


# --- memory -----------------------------------------------------------------------------------

MEMORY_SHAPE = (4, 151_936, 2_048)
MEMORY_CALLS = 10_000
DEVICE_DRIFT_TOLERANCE = 4 << 20
"""Free device memory may move by an allocator page or two (driver-side lazy allocations);
a per-call leak of even 1 KiB would move it by 10 MB over the calls."""
TORCH_SCRATCH_BYTES_PER_ELEMENT = 32
"""The torch backend's temporaries per logit of one chunk (bool kept, int32 ranks, int64
slots, bytes of bits: about 19 bytes, rounded up for the allocator)."""


def scratch_bound(backend: str, num_reqs: int, vocab_size: int) -> int:
    """Extra device memory a call with preallocated outputs may use at its peak: for the GPU
    backends a small fraction of the logits (split's scratch: two counters and one int32 flag
    per tile of >= 256 columns),
    for the torch reference its temporaries over one chunk of rows."""
    if not backend.startswith("torch"):
        return num_reqs * vocab_size // 8
    from masks.backends import torch as reference_backend

    rows_per_chunk = max(1, reference_backend._CHUNK_ELEMENTS // vocab_size)
    return TORCH_SCRATCH_BYTES_PER_ELEMENT * min(num_reqs, rows_per_chunk) * vocab_size


@pytest.mark.parametrize("backend", BACKENDS)
def test_memory_stays_flat_over_many_calls(backend: str, record_figures) -> None:
    num_reqs, vocab_size, width = MEMORY_SHAPE
    logits, counts, expected = inputs_and_reference(*MEMORY_SHAPE, torch.float32, torch.int64, 51)
    out = SamplingMask.empty(num_reqs, vocab_size, width, device=CUDA)
    for _ in range(10):
        compact_sampling_mask(logits, counts, width, backend=backend, out=out)
    torch.cuda.synchronize()
    allocated, (free, _) = torch.cuda.memory_allocated(), torch.cuda.mem_get_info()
    started = time.perf_counter()
    for _ in range(MEMORY_CALLS):
        compact_sampling_mask(logits, counts, width, backend=backend, out=out)
    torch.cuda.synchronize()
    seconds = time.perf_counter() - started
    allocated_drift = torch.cuda.memory_allocated() - allocated
    device_drift = free - torch.cuda.mem_get_info()[0]
    record_figures(
        backend=backend,
        calls=MEMORY_CALLS,
        torch_allocated_drift_bytes=allocated_drift,
        device_used_drift_bytes=device_drift,
        us_per_call=round(1e6 * seconds / MEMORY_CALLS, 1),
    )
    assert_masks_equal(out, expected)
    assert allocated_drift == 0
    assert abs(device_drift) <= DEVICE_DRIFT_TOLERANCE


@pytest.mark.parametrize("num_reqs", [4, 512])
@pytest.mark.parametrize("backend", BACKENDS)
def test_peak_extra_memory_per_call(backend: str, num_reqs: int, record_figures) -> None:
    """With preallocated outputs a call allocates only scratch: no [R, V] temporaries."""
    vocab_size, width = 151_936, 2_048
    logits = torch.randn(num_reqs, vocab_size, device=CUDA)
    logits[:, ::3] = float("-inf")
    out = SamplingMask.empty(num_reqs, vocab_size, width, device=CUDA)
    compact_sampling_mask(logits, None, width, backend=backend, out=out)  # compile, first scratch
    peak = extra_peak_bytes(
        lambda: compact_sampling_mask(logits, None, width, backend=backend, out=out)
    )
    bound = scratch_bound(backend, num_reqs, vocab_size)
    record_figures(
        backend=backend,
        shape=[num_reqs, vocab_size, width],
        logits_bytes=logits.numel() * logits.element_size(),
        extra_peak_bytes=peak,
        bound_bytes=bound,
    )
    assert peak <= bound


# --- errors -----------------------------------------------------------------------------------

LOADERS = {"torch": "_compact_rows", "triton": "_launch", "cupy": "_load", "numba": "_kernel"}
"""The function through which each backend compiles, loads or runs its kernels."""


class InjectedFailure(RuntimeError):
    """Stands for a compiler or driver error; its message does not name the backend."""


def one_param_per_backend(params: list) -> list:
    """The first variant of each backend (errors are injected below the variants)."""
    seen: set[str] = set()
    kept = []
    for param in params:
        name = param.values[0].partition(":")[0]
        if name not in seen:
            seen.add(name)
            kept.append(param)
    return kept


def inject_failure(backend: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the backend's loader raise, with its caches emptied so the loader is reached."""
    name = backend.partition(":")[0]
    forget_kernels(backend, monkeypatch)

    def fail(*args, **kwargs):
        raise InjectedFailure("injected: the compiler or driver failed")

    module = importlib.import_module(f"masks.backends.{name}")
    monkeypatch.setattr(module, LOADERS[name], fail)


def exception_chain(error: BaseException) -> list[BaseException]:
    chain = []
    while error is not None and error not in chain:
        chain.append(error)
        error = error.__cause__ or error.__context__
    return chain


ERROR_BACKENDS = one_param_per_backend(BACKENDS)
PROBED_BACKENDS = [p for p in ERROR_BACKENDS if not p.values[0].startswith(registry.REFERENCE)]
"""The reference is not probed: its failures surface from the call, as after first use."""


@pytest.mark.parametrize("backend", PROBED_BACKENDS)
def test_failure_on_first_use_names_the_backend(backend: str, monkeypatch) -> None:
    """A compile or driver failure during the registry's probe: unavailable, with the reason."""
    logits, _, _ = inputs_and_reference(2, 1_000, 16, torch.float32, None, 61)  # before: the
    # reference is the torch backend, which the injection breaks for the torch case
    monkeypatch.setattr(registry, "_probe_failures", {})
    monkeypatch.setattr(registry, "_resolved", {})
    inject_failure(backend, monkeypatch)
    name = backend.partition(":")[0]
    with pytest.raises(BackendUnavailableError, match=rf"backend '{name}'.*injected") as caught:
        compact_sampling_mask(logits, backend=backend)
    assert any(isinstance(e, InjectedFailure) for e in exception_chain(caught.value))


AFTER_FIRST_USE = [
    *(
        pytest.param(p.values[0], "cpu", id=f"cpu-{p.id}", marks=p.marks)
        for p in backend_params(torch.device("cpu"))
        if p.values[0].startswith("torch")
    ),
    *(pytest.param(p.values[0], "cuda", id=f"cuda-{p.id}", marks=p.marks) for p in ERROR_BACKENDS),
]


@pytest.mark.parametrize(("backend", "device"), AFTER_FIRST_USE)
def test_failure_after_first_use_names_the_backend(backend: str, device: str, monkeypatch) -> None:
    """A compile or driver failure after the backend was resolved (a new dtype, a lost device):
    raised, never swallowed, and naming the backend. (On the CPU: the torch backend.)"""
    logits = make_logits(2, 1_000, (5, 1_000), seed=62, device=device, junk=True)
    compact_sampling_mask(logits, backend=backend)  # resolved and working
    inject_failure(backend, monkeypatch)
    try:
        compact_sampling_mask(logits.double(), backend=backend)
    except Exception as error:
        raised = error
    else:
        pytest.fail(f"{backend}: the injected failure was swallowed")
    assert any(isinstance(e, InjectedFailure) for e in exception_chain(raised))
    notes = getattr(raised, "__notes__", [])  # a note keeps the exception's own type
    assert any(f"'{backend.partition(':')[0]}:" in note for note in notes), notes


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="runs the GPU backends")
def test_auto_passes_over_a_backend_failing_on_a_new_dtype(monkeypatch) -> None:
    """`auto`'s first backend raises on float64 only (a kernel that does not compile for it; the
    registry's probe runs float32): float64's first call warns and the reference answers it,
    later ones go to the next backend; float32 calls stay on the first."""
    monkeypatch.setattr(registry, "_probe_failures", {})
    monkeypatch.setattr(registry, "_resolved", {})
    monkeypatch.setattr(registry, "_dtype_failures", {})
    first = registry.backend_of(registry.resolve("auto", CUDA)).partition(":")[0]
    if first == registry.REFERENCE:
        pytest.skip("no GPU backend runs here: auto is the reference")
    module = importlib.import_module(f"masks.backends.{first}")
    compact = module.compact

    def no_float64(logits, num_sampled_tokens, out, variant):
        if logits.dtype == torch.float64:
            raise InjectedFailure("injected: no float64 kernel")
        compact(logits, num_sampled_tokens, out, variant)

    monkeypatch.setattr(module, "compact", no_float64)
    monkeypatch.setattr(registry, "_resolved", {})
    logits, counts, expected = inputs_and_reference(4, 32_003, 64, torch.float32, torch.int32, 75)
    wide, _, wide_expected = inputs_and_reference(4, 32_003, 64, torch.float64, torch.int32, 75)
    assert_masks_equal(compact_sampling_mask(logits, counts, 64), expected)
    with pytest.warns(UserWarning, match=rf"passes over '{first}' for torch.float64"):
        assert_masks_equal(compact_sampling_mask(wide, counts, 64), wide_expected)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # passed over once, not warned again
        assert_masks_equal(compact_sampling_mask(wide, counts, 64), wide_expected)
    chosen = {
        dtype: registry.backend_of(registry.resolve("auto", wide.device, dtype))
        for dtype in (torch.float32, torch.float64)
    }
    assert chosen[torch.float32].startswith(f"{first}:")
    assert not chosen[torch.float64].startswith(f"{first}:")


# --- CUDA graphs ------------------------------------------------------------------------------

GRAPH_CASES = [  # R, V, W, dtype, counts dtype: `split` at few rows, `fused` at many
    (1, 151_936, 2_048, torch.float32, None),
    (4, 32_003, 64, torch.bfloat16, torch.int32),
    (256, 50_304, 2_048, torch.float16, torch.int64),
]


def capture(backend: str, logits, counts, width: int, out: SamplingMask, stream=None):
    """Warm up on a side stream, then capture one call (on ``stream`` if given)."""
    side = stream if stream is not None else torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            compact_sampling_mask(logits, counts, width, backend=backend, out=out)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=stream):
        compact_sampling_mask(logits, counts, width, backend=backend, out=out)
    return graph


@pytest.mark.parametrize("case", GRAPH_CASES, ids=lambda c: f"R{c[0]}-V{c[1]}-W{c[2]}")
@pytest.mark.parametrize("backend", BACKENDS)
def test_cuda_graph_replays_new_inputs(backend: str, case: tuple, record_figures) -> None:
    num_reqs, vocab_size, width, dtype, _ = case
    logits, counts, _ = inputs_and_reference(*case, seed=0)
    static_logits = logits.clone()
    static_counts = None if counts is None else counts.clone()
    out = SamplingMask.empty(num_reqs, vocab_size, width, device=CUDA)
    graph = capture(backend, static_logits, static_counts, width, out)
    for seed in (1, 2, 3):
        logits, counts, expected = inputs_and_reference(*case, seed=seed)
        static_logits.copy_(logits)
        if counts is not None:
            static_counts.copy_(counts)
        poison(out)
        graph.replay()
        try:
            assert_masks_equal(out, expected)
        except AssertionError as error:
            raise AssertionError(f"replay with inputs of seed {seed}: {error}") from None
    record_figures(backend=backend, shape=case[:3], dtype=str(dtype), replays=3)


SCRATCH_RACE_SHAPE = (64, 262_144, 2_048)  # `split` everywhere; each pass reads 64 MB
SCRATCH_RACE_ROUNDS = 20
ALIGN_CYCLES = 1 << 20
"""Both streams spin this long (~0.5 ms) before their call, so their kernels start together."""


@pytest.mark.parametrize("backend", BACKENDS)
def test_graph_shares_no_scratch_with_its_capture_stream(backend: str, record_figures) -> None:
    """A graph captured on stream S is replayed on the default stream while eager calls on S
    (a pool stream handed out again, say) work on other logits: both stay right only if the
    graph owns the scratch it was captured with. Probabilistic: a shared buffer is caught when
    the two streams' launches interleave, which the aligned spins make likely every round."""
    num_reqs, vocab_size, width = SCRATCH_RACE_SHAPE
    graph_logits, _, graph_expected = inputs_and_reference(
        *SCRATCH_RACE_SHAPE, torch.float32, None, 31
    )
    eager_logits, _, eager_expected = inputs_and_reference(
        *SCRATCH_RACE_SHAPE, torch.float32, None, 32
    )
    capture_stream = torch.cuda.Stream()
    out = SamplingMask.empty(num_reqs, vocab_size, width, device=CUDA)
    graph = capture(backend, graph_logits, None, width, out, stream=capture_stream)
    eager_outs, graph_outs = [], []
    for _ in range(SCRATCH_RACE_ROUNDS):
        with torch.cuda.stream(capture_stream):
            torch.cuda._sleep(ALIGN_CYCLES)
            eager_outs.append(compact_sampling_mask(eager_logits, None, width, backend=backend))
        torch.cuda._sleep(ALIGN_CYCLES)
        graph.replay()
        graph_outs.append(copy_of(out))
        torch.cuda.synchronize()
    for results, expected in ((graph_outs, graph_expected), (eager_outs, eager_expected)):
        for result in results:
            assert_masks_equal(result, expected)
    record_figures(backend=backend, rounds=SCRATCH_RACE_ROUNDS, shape=SCRATCH_RACE_SHAPE)


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="captures a CUDA graph")
def test_a_first_call_during_graph_capture(monkeypatch) -> None:
    """The first call on the device is made while a CUDA graph is being captured, when the
    registry cannot probe (a probe copies to and from the device): `auto` captures the first
    backend known to run, the reference, and warns; a named GPU backend raises, saying to call
    it before capturing; neither answer is cached, so after the capture both run natively."""
    named = [  # the GPU backends that run here
        p.values[0].partition(":")[0]
        for p in PROBED_BACKENDS
        if not any(mark.name == "skip" for mark in p.marks)
    ]
    num_reqs, vocab_size, width = 4, 32_003, 64
    logits, counts, expected = inputs_and_reference(
        num_reqs, vocab_size, width, torch.bfloat16, torch.int32, 74
    )
    out = SamplingMask.empty(num_reqs, vocab_size, width, device=CUDA)
    monkeypatch.setattr(registry, "_probe_failures", {})
    monkeypatch.setattr(registry, "_resolved", {})
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        with pytest.warns(UserWarning, match="could be probed"):
            compact_sampling_mask(logits, counts, width, backend="auto", out=out)
        for name in named:
            with pytest.raises(BackendUnavailableError, match="being captured"):
                compact_sampling_mask(logits, counts, width, backend=name, out=out)
    poison(out)
    graph.replay()
    assert_masks_equal(out, expected)
    assert not registry._resolved
    assert not any(probe_cached(name, logits.device) for name in named)
    for name in named:  # probed now, and running natively
        assert_masks_equal(compact_sampling_mask(logits, counts, width, backend=name), expected)
    chosen = registry.backend_of(registry.resolve("auto", logits.device, logits.dtype))
    chosen = chosen.partition(":")[0]
    assert chosen == next((n for n in registry.AUTO_ORDER["cuda"] if n in named), "torch")
    assert_masks_equal(compact_sampling_mask(logits, counts, width), expected)
