"""The CPU emulation of CUDA C (`masks.backends.cuda_emulation`), tested as a harness: its
built-ins follow CUDA's definitions, it runs blocks concurrently and lanes out of lockstep, it
turns misuse into errors, and it rejects known-wrong versions of the CuPy backend's kernels.

The built-in tests build small kernels of their own; the known-wrong kernels run through the
`cupy` backend, so they need its emulation switch (the ``cupy-emulated`` tox env).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

from masks import compact_sampling_mask
from masks.backends import cuda_emulation, scratch
from masks.testing import (
    NVCC_MISSING,
    NVCC_SKIPPABLE,
    assert_masks_equal,
    make_logits,
    nvcc_check,
    reference,
)

pytestmark = pytest.mark.skipif(
    cuda_emulation.compiler() is None, reason=cuda_emulation.unavailable_reason() or ""
)

POISON = 0xA5A5A5A5
FULL = 0xFFFFFFFF

KERNELS = r"""
__global__ void collectives(unsigned* out) {
  const unsigned lane = threadIdx.x & 31u;
  const unsigned value = (blockIdx.x + 1) * 1000u + threadIdx.x;
  unsigned* mine = out + (blockIdx.x * blockDim.x + threadIdx.x) * 5;
  mine[0] = __ballot_sync(0xFFFFFFFFu, (threadIdx.x + blockIdx.x) % 3 == 0);
  mine[1] = __shfl_sync(0xFFFFFFFFu, value, 31);
  mine[2] = __shfl_sync(0xFFFFFFFFu, value, lane ^ 5u);
  mine[3] = __shfl_up_sync(0xFFFFFFFFu, value, 3);
  mine[4] = __reduce_add_sync(0xFFFFFFFFu, value);
}

__global__ void bit_built_ins(const unsigned* in, unsigned* out) {
  const unsigned i = threadIdx.x;
  const unsigned x = in[3 * i], y = in[3 * i + 1], selector = in[3 * i + 2];
  out[4 * i] = __byte_perm(x, y, selector);
  out[4 * i + 1] = __popc(x);
  out[4 * i + 2] = __popcll((static_cast<unsigned long long>(y) << 32) | x);
  out[4 * i + 3] = __ffs(static_cast<int>(x));
}

template <bool kSync>
__global__ void read_neighbour(unsigned* out) {
  __shared__ unsigned slots[32];
  const unsigned lane = threadIdx.x & 31u;
  slots[lane] = lane + 1u;
  if (kSync) __syncwarp();
  out[lane] = slots[(lane + 1u) & 31u];
}

__global__ void read_before_write(unsigned* out) {
  __shared__ unsigned value;
  __syncthreads();
  if (threadIdx.x == 0) {
    out[blockIdx.x] = value;
    value = 7u;
  }
}

__global__ void exit_then_barrier(unsigned* out) {
  if (threadIdx.x >= 64) return;
  __syncthreads();
  out[threadIdx.x] = 1u;
}

__global__ void half_warp_exits(unsigned* out) {
  if ((threadIdx.x & 31u) < 16u) return;
  out[threadIdx.x] = __reduce_add_sync(0xFFFFFFFFu, 1u);
}

__global__ void divergent_collectives(unsigned* out) {
  if ((threadIdx.x & 31u) < 16u) {
    out[threadIdx.x] = __ballot_sync(0xFFFFFFFFu, 1);
  } else {
    out[threadIdx.x] = __shfl_sync(0xFFFFFFFFu, 1u, 0);
  }
}

__global__ void partial_mask(unsigned* out) { out[threadIdx.x] = __ballot_sync(0xFFFFu, 1); }

__global__ void vector_load(const unsigned char* in, long long offset, unsigned* out) {
  const uint4 q = __ldcs(reinterpret_cast<const uint4*>(in + offset));
  if (threadIdx.x == 0) out[0] = q.x ^ q.y ^ q.z ^ q.w;
}

// Block 0 finishes only once block 1 has run: blocks must run concurrently.
__global__ void wait_for_next_block(unsigned* flag, unsigned* out) {
  if (threadIdx.x != 0) return;
  if (blockIdx.x == 0) {
    while (*static_cast<volatile unsigned*>(flag) == 0u) {}
    out[0] = 1u;
  } else {
    atomicExch(flag, 1u);
  }
}

__global__ void wait_forever(unsigned* flag) {
  while (*static_cast<volatile unsigned*>(flag) == 0u) {}
}
"""
NAMES = [
    "collectives", "bit_built_ins", "read_neighbour<false>", "read_neighbour<true>",
    "read_before_write", "exit_then_barrier", "half_warp_exits", "divergent_collectives",
    "partial_mask", "vector_load", "wait_for_next_block", "wait_forever",
]  # fmt: skip


@pytest.fixture(scope="module")
def module() -> cuda_emulation.Module:
    return cuda_emulation.Module(KERNELS, NAMES)


@pytest.fixture
def forget_failures(monkeypatch) -> None:
    """For a test whose launches fail on purpose: its failure is forgotten afterwards (as in a
    new process), and split's scratch registry is its own, since a failed launch leaves its
    scratch dirty."""
    monkeypatch.setattr(cuda_emulation, "_failure", None)
    monkeypatch.setattr(scratch, "_scratches", {})


def launch(module: cuda_emulation.Module, name: str, blocks: int, threads: int, *args: int) -> None:
    """Launch as the `cupy` backend does: a cuLaunchKernel array of pointers to 64-bit values."""
    cuda_emulation.launch(module.get_function(name), blocks, threads, args)


def words(count: int) -> torch.Tensor:
    return torch.full((count,), POISON, dtype=torch.int64).to(torch.int32)


def unsigned(tensor: torch.Tensor) -> list[int]:
    return [value & FULL for value in tensor.tolist()]


def test_warp_collectives_follow_cudas_definitions(module) -> None:
    blocks, threads = 2, 64
    out = words(blocks * threads * 5)
    launch(module, "collectives", blocks, threads, out.data_ptr())
    got = unsigned(out)
    for block in range(blocks):
        for thread in range(threads):
            warp, lane = thread - thread % 32, thread % 32
            values = [(block + 1) * 1000 + warp + other for other in range(32)]
            ballot = sum(1 << other for other in range(32) if (warp + other + block) % 3 == 0)
            expected = [
                ballot,
                values[31],
                values[lane ^ 5],
                values[lane - 3] if lane >= 3 else values[lane],
                sum(values) & FULL,
            ]
            at = (block * threads + thread) * 5
            assert got[at : at + 5] == expected, (block, thread)


def ptx_prmt(x: int, y: int, selector: int) -> int:
    """PTX ``prmt.b32`` in its default mode (CUDA's ``__byte_perm``): result byte n is byte
    ``selector[4n+2:4n]`` of the eight bytes {y, x}."""
    bytes_ = (y << 32 | x).to_bytes(8, "little")
    return int.from_bytes(bytes(bytes_[(selector >> 4 * n) & 7] for n in range(4)), "little")


def test_bit_built_ins_follow_cudas_definitions(module) -> None:
    generator = torch.Generator().manual_seed(3)
    triples = torch.randint(0, 1 << 32, (64, 3), generator=generator, dtype=torch.int64)
    triples[0] = torch.tensor([0x33221100, 0x77665544, 0x7531])  # the kernels' permute
    triples[1] = torch.tensor([0, 0, 0x3210])  # ffs(0) = 0
    flat = triples.flatten().to(torch.int32)
    out = words(64 * 4)
    launch(module, "bit_built_ins", 1, 64, flat.data_ptr(), out.data_ptr())
    got = unsigned(out)
    assert got[0] == 0x77553311
    for i, (x, y, selector) in enumerate(triples.tolist()):
        both = y << 32 | x
        ffs = (x & -x).bit_length()
        assert got[4 * i : 4 * i + 4] == [
            ptx_prmt(x, y, selector),
            x.bit_count(),
            both.bit_count(),
            ffs,
        ]


def test_lanes_do_not_run_in_lockstep(module) -> None:
    """Without __syncwarp some lane reads its neighbour's slot before the neighbour wrote it (a
    lockstep simulator would hide the missing barrier); with it, every lane reads the value."""
    racy, synced = words(32), words(32)
    launch(module, "read_neighbour<false>", 1, 32, racy.data_ptr())
    launch(module, "read_neighbour<true>", 1, 32, synced.data_ptr())
    neighbours = [(lane + 1) % 32 + 1 for lane in range(32)]
    assert unsigned(synced) == neighbours
    assert POISON in unsigned(racy)


def test_shared_memory_is_poisoned_at_every_block_start(module) -> None:
    out = words(6)
    launch(module, "read_before_write", 6, 64, out.data_ptr())
    assert unsigned(out) == [POISON] * 6


def test_syncthreads_waits_only_for_threads_that_have_not_exited(module) -> None:
    out = torch.zeros(128, dtype=torch.int32)
    launch(module, "exit_then_barrier", 1, 128, out.data_ptr())
    assert out.tolist() == [1] * 64 + [0] * 64


def test_blocks_run_concurrently(module) -> None:
    flag, out = torch.zeros(1, dtype=torch.int32), torch.zeros(1, dtype=torch.int32)
    launch(module, "wait_for_next_block", 2, 32, flag.data_ptr(), out.data_ptr())
    assert out.tolist() == [1]


@pytest.mark.parametrize(
    ("kernel", "message"),
    [
        ("half_warp_exits", r"block 0: deadlock: no thread can run; waiting: 32 at __reduce_add"),
        (
            "divergent_collectives",
            r"block 0, thread \d+: reached __\w+_sync while other lanes of its warp wait at __",
        ),
        ("partial_mask", r"block 0, thread \d+: __ballot_sync with a partial mask"),
    ],
)
def test_warp_misuse_is_an_error_naming_the_block(
    module, kernel: str, message: str, forget_failures
) -> None:
    out = words(64)
    with pytest.raises(RuntimeError, match=message):
        launch(module, kernel, 1, 64, out.data_ptr())


def test_after_a_failed_launch_the_process_launches_nothing(module, forget_failures) -> None:
    out = words(64)
    with pytest.raises(RuntimeError, match="partial mask"):
        launch(module, "partial_mask", 1, 64, out.data_ptr())
    with pytest.raises(RuntimeError, match=r"an earlier launch failed.*restart the process"):
        launch(module, "exit_then_barrier", 1, 64, out.data_ptr())


def test_a_misaligned_vector_load_is_an_error(module, forget_failures) -> None:
    data, out = torch.arange(64, dtype=torch.uint8), words(1)
    aligned = -data.data_ptr() % 16
    launch(module, "vector_load", 1, 32, data.data_ptr(), aligned, out.data_ptr())
    with pytest.raises(RuntimeError, match=r"block 0, thread \d+: misaligned 16-byte load"):
        launch(module, "vector_load", 1, 32, data.data_ptr(), aligned + 4, out.data_ptr())


def test_a_stalled_launch_fails_and_later_launches_are_refused() -> None:
    """In a child process: the spinning block is abandoned, so the process refuses to go on."""
    script = textwrap.dedent(
        """
        import os
        import torch
        import test_cuda_emulation as t
        from masks.backends import cuda_emulation, scratch
        cuda_emulation.STALL_SECONDS = 1
        module = cuda_emulation.Module(t.KERNELS, t.NAMES)
        flag = torch.zeros(1, dtype=torch.int32)
        for attempt in range(2):
            try:
                t.launch(module, "wait_forever", 1, 32, flag.data_ptr())
            except RuntimeError as error:
                print(error, flush=True)
        os._exit(0)  # the abandoned block spins on `flag`: no finalizer may free it
        """
    )
    tests = os.path.dirname(__file__)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([tests, os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr
    first, second = done.stdout.splitlines()
    assert "wait_forever: stalled: no block finished in 1 s" in first
    assert "restart the process" in second


@pytest.mark.skipif(NVCC_SKIPPABLE, reason=NVCC_MISSING)
def test_the_kernels_here_are_cuda_c(tmp_path: Path) -> None:
    """nvcc compiles them for sm_90, warnings as errors: the emulation accepts no other dialect."""
    (tmp_path / "kernels.cu").write_text(KERNELS)
    nvcc_check(tmp_path / "kernels.cu", NAMES, "sm_90", tmp_path)


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_built_ins_agree_with_the_gpu(module) -> None:
    """The built-in kernels' outputs on the GPU (through CuPy) equal the emulation's."""
    cupy = pytest.importorskip("cupy", reason="cupy is not installed")
    gpu = cupy.RawModule(code=KERNELS, options=("-std=c++17",), name_expressions=NAMES)
    triples = torch.randint(0, 1 << 32, (64, 3), generator=torch.Generator().manual_seed(5))
    inputs = triples.flatten().to(torch.int32)
    runs = [("collectives", 2, 64, [], 2 * 64 * 5), ("bit_built_ins", 1, 64, [inputs], 64 * 4)]
    for name, blocks, threads, args, size in runs:
        emulated = words(size)
        launch(module, name, blocks, threads, *(a.data_ptr() for a in args), emulated.data_ptr())
        on_gpu = words(size).cuda()
        args_gpu = [a.cuda() for a in args]
        pointers = [cupy.uint64(a.data_ptr()) for a in args_gpu]
        gpu.get_function(name)((blocks,), (threads,), (*pointers, cupy.uint64(on_gpu.data_ptr())))
        torch.cuda.synchronize()
        assert unsigned(on_gpu.cpu()) == unsigned(emulated), name


def test_every_kernel_parameter_must_be_64_bits_wide() -> None:
    with pytest.raises(RuntimeError, match="every kernel parameter is 64 bits wide"):
        cuda_emulation.Module("__global__ void narrow(int* out, int value) {}", ["narrow"])


def test_a_library_is_built_once_per_program(monkeypatch, tmp_path: Path) -> None:
    """Once per process (the loaded library is reused), and once per cache directory: a new
    process loads the library from disk without compiling it."""
    monkeypatch.setenv("MASKS_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(cuda_emulation, "_libraries", {})
    cuda_emulation.Module(KERNELS, NAMES)
    assert len(list(tmp_path.glob("compact-emulated-*.so"))) == 1
    build = cuda_emulation._build
    monkeypatch.setattr(cuda_emulation, "_build", lambda program: pytest.fail("built again"))
    cuda_emulation.Module(KERNELS, NAMES)
    # a new process: nothing loaded yet, and no compiler run allowed
    monkeypatch.setattr(cuda_emulation, "_libraries", {})
    monkeypatch.setattr(cuda_emulation, "_build", build)

    run = subprocess.run

    def no_compiler(command, *args, **kwargs):
        if "-shared" in command:
            pytest.fail(f"compiled again: {command}")
        return run(command, *args, **kwargs)

    monkeypatch.setattr(cuda_emulation.subprocess, "run", no_compiler)
    cuda_emulation.Module(KERNELS, NAMES)


# ---- Known-wrong kernels: compact.cu with one synchronisation, alignment or index broken ------

MUTANTS = {
    "no __syncwarp before reading regrouped bytes": (
        "    __syncwarp();\n    const unsigned char* mine",
        "    const unsigned char* mine",
    ),
    "no __syncthreads before split's look-back": (
        "  __syncthreads();  // also orders the mask stores before pass 2's loads\n",
        "",
    ),
    "no __syncthreads before fused's exchange": (
        "  __syncthreads();  // also orders the mask and staged stores before their loads below\n",
        "",
    ),
    "word loads of mask bytes off 4 bytes": (
        "if (b + 4 <= end && (reinterpret_cast<unsigned long long>(row_mask + b) & 3u) == 0u) {",
        "if (b + 4 <= end) {",
    ),
    "16-byte loads of mask bytes off 16 bytes": (
        "(reinterpret_cast<unsigned long long>(row_mask + b) & 15u) == 0u)",
        "(reinterpret_cast<unsigned long long>(row_mask + b) & 7u) == 0u)",
    ),
    "a group's total read from lane 30": (
        "total = __shfl_sync(kFullMask, inclusive, 31)",
        "total = __shfl_sync(kFullMask, inclusive, 30)",
    ),
}


@pytest.mark.parametrize("mutant", MUTANTS)
def test_known_wrong_kernels_are_rejected(mutant: str, monkeypatch, forget_failures) -> None:
    """Each mutant differs from compact.cu by one line; a synchronisation removed is caught only
    because lanes and warps do not run in lockstep here. Inputs the real kernels get right
    (checked first) must fail with the mutant."""
    backend = pytest.importorskip("masks.backends.cupy", reason="needs the cupy backend module")
    if not backend.EMULATED:
        pytest.skip(f"needs the cupy backend's emulation ({cuda_emulation.SWITCH}=1)")
    cases = [
        (1, 2_101, 2_048, "split", [2_101]),
        (3, 20_001, 2_048, "split", [20_001, 6_667, 17]),
        (8, 20_001, 2_048, "fused", [20_001, 6_667, 17, 0] * 2),
        (6, 5_000, 300, "fused", [5_000, 1_666, 17] * 2),
        # 2504 mask bytes a row: odd rows start 8 bytes off a 16-byte boundary
        (4, 20_032, 2_048, "fused", [20_032, 6_677] * 2),
    ]

    def failures() -> list[str]:
        found = []
        for num_reqs, vocab, width, variant, supports in cases:
            logits = make_logits(num_reqs, vocab, supports, seed=1, junk=True)
            try:
                actual = compact_sampling_mask(logits, None, width, f"cupy:{variant}")
                assert_masks_equal(actual, reference(logits, None, width))
            except (AssertionError, RuntimeError) as error:
                found.append(f"{variant} R={num_reqs}: {error}")
        return found

    monkeypatch.setattr(backend, "_kernels", {})
    monkeypatch.setattr(backend, "_plans", {})
    assert failures() == []
    before, after = MUTANTS[mutant]
    source = backend.source()
    assert source.count(before) == 1
    monkeypatch.setattr(backend, "source", lambda: source.replace(before, after))
    monkeypatch.setattr(backend, "_kernels", {})
    monkeypatch.setattr(backend, "_plans", {})
    assert failures(), f"the mutant ({mutant}) passed every case"
