"""The CuPy backend: its CUDA C compiles cleanly with nvcc, it reports itself unavailable without
a GPU, and it is right on layouts, tiles, its scratch and concurrent first calls: on a GPU, and
on the CPU through its emulation (``MASKS_CUPY_EMULATE=1``, `masks.backends.cuda_emulation`),
which needs no CuPy.

Bit-for-bit agreement of every variant with the reference on the whole input space is the
shared conformance suite's job; these tests cover what is specific to this backend.
"""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import pytest
import torch
from suite import counting_calls

import masks
from masks import registry
from masks.backends import cuda_emulation, scratch
from masks.testing import (
    NVCC_MISSING,
    NVCC_SKIPPABLE,
    assert_masks_equal,
    make_logits,
    nvcc_check,
    reference,
)

cupy_backend = pytest.importorskip("masks.backends.cupy", reason="cupy is not installed")

EMULATED = cupy_backend.EMULATED
DEVICE = "cpu" if EMULATED else "cuda"
"""Where the backend's kernels run in this process."""
native = pytest.mark.skipif(
    EMULATED, reason=f"checks CuPy itself (the cupy tox env, without {cuda_emulation.SWITCH}=1)"
)
runs_here = pytest.mark.skipif(
    not EMULATED and not torch.cuda.is_available(),
    reason=f"needs a CUDA device or the CPU emulation ({cuda_emulation.SWITCH}=1)",
)
needs_gpu = pytest.mark.skipif(
    EMULATED or not torch.cuda.is_available(), reason="needs a CUDA device, natively"
)
DTYPES = (torch.float32, torch.float16, torch.bfloat16, torch.float64)


@pytest.mark.skipif(NVCC_SKIPPABLE, reason=NVCC_MISSING)
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_cu_compiles_with_nvcc_without_warnings_or_spills(arch: str, tmp_path: Path) -> None:
    """Every kernel the backend can name, for every dtype."""
    (tmp_path / "compact.cu").write_text(cupy_backend.source())
    names = sorted(
        {
            name
            for t in ("F32", "F16", "BF16", "F64")
            for name in cupy_backend.kernel_names(t).values()
        }
    )
    nvcc_check(tmp_path / "compact.cu", names, arch, tmp_path)


def test_kernel_names_cover_both_load_paths() -> None:
    names = cupy_backend.kernel_names("BF16")
    assert names["fused:vec"] == f"compact_fused<BF16, true, {cupy_backend.FUSED_THREADS}>"
    assert names["split:strided"] == f"compact_split<BF16, false, {cupy_backend.SPLIT_THREADS}>"
    assert set(names) == {"split:vec", "split:strided", "fused:vec", "fused:strided"}
    assert cupy_backend.VARIANTS == ("auto", "split", "fused")


@native
@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the no-GPU behaviour")
def test_without_a_gpu_cupy_is_unavailable_with_a_reason() -> None:
    for device in ("cpu", "cuda"):
        assert "cupy" not in masks.available_backends(device)
        assert masks.unavailable_reasons(device)["cupy"]
    logits = make_logits(2, 40, supports=[3, 40], seed=1)
    with pytest.raises(masks.BackendUnavailableError, match="cupy"):
        masks.compact_sampling_mask(logits, backend="cupy")
    with pytest.raises(masks.BackendUnavailableError, match="cupy"):
        masks.compact_sampling_mask(logits, backend="cupy:fused")


@native
def test_unavailable_reason_names_cupys_runtime_error() -> None:
    import cupy

    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as error:
        reason = cupy_backend.unavailable_reason(torch.device("cuda", 0))
        assert reason == f"CuPy sees no CUDA device: {error}"
    else:
        assert cupy_backend.unavailable_reason(torch.device("cuda", 0)) is None
        assert "not cuda:" in cupy_backend.unavailable_reason(torch.device("cuda", count))


def _layouts(logits: torch.Tensor) -> dict[str, torch.Tensor]:
    """The same values as contiguous rows, a misaligned column slice, and a transposed view."""
    num_reqs, vocab = logits.shape
    padded = torch.full(
        (num_reqs, vocab + 5), float("nan"), dtype=logits.dtype, device=logits.device
    )
    padded[:, 1 : vocab + 1] = logits
    transposed = logits.t().contiguous().t()
    return {
        "contiguous": logits,
        "column_slice": padded[:, 1 : vocab + 1],
        "transposed": transposed,
    }


@pytest.mark.skipif(not EMULATED, reason=f"checks the emulation ({cuda_emulation.SWITCH}=1)")
def test_the_emulation_runs_on_cpu_tensors_only() -> None:
    assert "cupy" in masks.available_backends("cpu")
    assert cupy_backend.unavailable_reason(torch.device("cpu")) is None
    failure = registry.probe_failure(registry.BACKENDS["cupy"], torch.device("cuda", 0))
    assert f"runs its CPU emulation ({cuda_emulation.SWITCH}=1)" in str(failure)
    assert "cupy" not in sys.modules, "the emulation imported CuPy"


@runs_here
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("variant", ["split", "fused"])
@pytest.mark.parametrize("vocab", [40_003, 40_064])
def test_layouts_and_tiles_match_the_reference(
    dtype: torch.dtype, variant: str, vocab: int, monkeypatch
) -> None:
    """Vector loads (contiguous aligned rows: 40_064) and strided loads (the other layouts),
    each checked to be the kernel that ran, unaligned mask rows (40_003), several tiles per row,
    counts above W, inactive rows."""
    num_reqs = 5
    supports = [0, 17, 3_000, vocab, 40_000]
    logits = make_logits(num_reqs, vocab, supports, dtype=dtype, seed=3, device=DEVICE, junk=True)
    num_sampled = torch.tensor([1, 9, 1, 9, 0, 9, 2, 9, 1, 9], device=DEVICE)[::2]  # strided
    masks.compact_sampling_mask(logits[:, :8], backend="cupy")  # the registry's probe, if not run
    for name, view in _layouts(logits).items():
        vector = name == "contiguous" and vocab == 40_064
        for width in (0, 5, 2048):
            plans: dict = {}
            monkeypatch.setattr(cupy_backend, "_plans", plans)
            expected = reference(view.cpu(), num_sampled.cpu(), width)
            actual = masks.compact_sampling_mask(view, num_sampled, width, f"cupy:{variant}")
            try:
                assert_masks_equal(actual, expected)
            except AssertionError as error:
                raise AssertionError(f"{name}, W={width}: {error}") from None
            (plan,) = plans.values()
            kernels = getattr(cupy_backend._kernels[(view.get_device(), dtype)], variant)
            loads = "16-byte" if vector else "strided"
            assert plan.kernel is kernels[vector], f"{name}: not {variant}'s {loads} loads"


@needs_gpu
def test_runs_on_torchs_current_stream() -> None:
    """Inputs produced on a side stream, results read there: no hidden default-stream use."""
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        for variant in ("split", "fused"):
            logits = make_logits(8, 151_936, 50, seed=5, device="cuda") * 1.0
            actual = masks.compact_sampling_mask(logits, backend=f"cupy:{variant}")
            expected = reference(logits.cpu())
            stream.synchronize()
            assert_masks_equal(actual, expected)


@runs_here
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
@pytest.mark.parametrize("tail", [808, 896], ids=["mask-rows-unaligned", "mask-rows-aligned"])
def test_fused_ranges_longer_than_one_batch_of_rank_steps(dtype: torch.dtype, tail: int) -> None:
    """``rank_mask`` loads 4 steps of 4096 columns per round trip: warp ranges past 16384
    columns (V > 16 warps x 16384) take a second batch, full steps (consecutive ids) sit next
    to steps with masked columns, and W is cut inside a step; mask rows that are (896) and are
    not (808) 16-byte aligned, so rows with holes go through both the 16-byte and the word
    loads."""
    vocab = cupy_backend.FUSED_THREADS // 32 * 4 * 4096 + tail
    logits = make_logits(3, vocab, [vocab, vocab, 4_000], dtype=dtype, seed=1, device=DEVICE)
    logits[1, 1_030] = logits[1, 200_000] = float("-inf")
    for width in (1_500, 5_000, vocab):
        expected = reference(logits.cpu(), None, width)
        actual = masks.compact_sampling_mask(logits, None, width, "cupy:fused")
        assert_masks_equal(actual, expected)


@pytest.mark.skipif(not EMULATED, reason=f"checks the emulation ({cuda_emulation.SWITCH}=1)")
@pytest.mark.parametrize("workers", [2, 4])
def test_split_look_back_under_other_interleavings(workers: int, monkeypatch) -> None:
    """More workers and other thread orders: tiles finish in other orders, so a tile waits on
    flags still unpublished at other points (W reached early, late, or not at all)."""
    monkeypatch.setattr(cuda_emulation, "WORKERS", workers)
    vocab = 40_003
    logits = make_logits(3, vocab, [vocab, 900, 0], seed=11, device=DEVICE, junk=True)
    for seed in range(3):
        monkeypatch.setattr(cuda_emulation, "SEED", seed)
        for width in (5, 1_000, 2_048):
            actual = masks.compact_sampling_mask(logits, None, width, "cupy:split")
            assert_masks_equal(actual, reference(logits, None, width))


@runs_here
def test_split_leaves_its_scratch_zero_for_the_next_call() -> None:
    """Ticket, done counter and flags are reset by the launch's last block: consecutive calls of
    any shape (early stop at small W, full rows, inactive rows) stay exact with no memset."""
    stream = 0 if EMULATED else torch.cuda.current_stream().cuda_stream
    for seed, (num_reqs, vocab, width) in enumerate(
        [(1, 151_936, 2048), (16, 151_936, 4), (3, 40_003, 0), (7, 262_144, 2048), (1, 300, 9)]
    ):
        supports = [(0, 9, vocab)[r % 3] for r in range(num_reqs)]
        logits = make_logits(num_reqs, vocab, supports, seed=seed, device=DEVICE)
        num_sampled = (torch.arange(num_reqs, device=DEVICE) % 4) - 1  # -1, 0, 1, 2, ...
        for active in (None, num_sampled):
            expected = reference(logits.cpu(), None if active is None else active.cpu(), width)
            actual = masks.compact_sampling_mask(logits, active, width, "cupy:split")
            assert_masks_equal(actual, expected)
            state = scratch.for_stream(logits.get_device(), stream)
            with state.hold(1, logits.device) as buffer:
                assert not buffer.any(), buffer.nonzero()[:8].tolist()


@runs_here
def test_concurrent_first_calls_compile_once(monkeypatch) -> None:
    """Eight threads released together call a (device, dtype) with no kernels yet; each build is
    held back 50 ms, so without the backend's lock several would build."""
    logits = make_logits(3, 5_000, [1, 40, 5_000], dtype=torch.float16, seed=7, device=DEVICE)
    expected = reference(logits.cpu(), None, 64)
    masks.compact_sampling_mask(logits[:, :8], backend="cupy")  # the registry's probe, if not run
    monkeypatch.setattr(cupy_backend, "_kernels", {})
    monkeypatch.setattr(cupy_backend, "_plans", {})
    if EMULATED:
        modules = counting_calls(monkeypatch, cuda_emulation, "Module", delay_s=0.05)
    else:
        modules = counting_calls(monkeypatch, sys.modules["cupy"], "RawModule", delay_s=0.05)
    errors: list[BaseException] = []
    barrier = threading.Barrier(8)

    def call() -> None:
        try:
            barrier.wait()
            assert_masks_equal(masks.compact_sampling_mask(logits, None, 64, "cupy"), expected)
        except BaseException as error:
            errors.append(error)

    threads = [threading.Thread(target=call) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors[0]
    assert list(cupy_backend._kernels) == [(logits.get_device(), torch.float16)]
    assert modules() == 1, f"{modules()} NVRTC modules compiled for one (device, dtype)"
