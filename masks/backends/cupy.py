"""CuPy backend: the CUDA C kernels of ``compact.cu``, compiled with NVRTC through CuPy.

Design (shared with the Numba backend, which runs the same kernels in Python syntax; the
measurements behind it: docs/design.md, "CUDA C kernels and the CuPy backend"):

* Bytes: logits are read once with streaming loads (``__ldcs``; 16-byte vectors when a row is
  contiguous and 16-byte aligned, scalar strided loads otherwise), the mask, ids and counts
  written once. Nothing more is asked of the L2: L2 prefetches were slower, the other cache
  hints tried within 2% or slower. Finiteness is tested on the bit pattern (exponent all ones =
  not kept), so every dtype is read as unsigned integers and NaN payloads never matter.
* Layout: a row is cut into 256-column *warp segments*; lane l owns mask byte l of a segment
  (columns 8l..8l+7), so a mask store is one coalesced byte per lane.
* Pass 1 streams a warp's contiguous range of segments, issuing 8 16-byte loads per lane before
  testing any (several segments in flight), writing mask bytes and accumulating a lane count. No
  block barrier in the loop, and no shuffle but ``fused``'s one scan per group (below): the
  previous design's block scans per segment starved memory-level parallelism. The warp counts
  are combined once.
* Pass 2 ranks from the mask the warp just wrote (1/32 of the fp32 bytes, L2-hot): each lane
  takes consecutive 32-bit words, a shuffle scan of the lanes' popcounts gives their ranks, only
  the set bits are visited, and the warp stops once its ranks reach W, so ranking costs words +
  kept ids, not columns. A step of full words (no masked column: no truncation) is written as
  consecutive ids with coalesced stores. ``fused``'s long ranges take four words per lane (one
  16-byte load; a 16384-column range in one round trip, a quarter of the scans); ``split``'s
  short units take one, since four would pile a unit's set bits onto a quarter of the lanes.
* ``split`` (few rows; R=1 must fill the GPU): a *unit* is ``segs_per_unit`` segments of a row,
  one per warp; a tile (block) is ``SPLIT_THREADS / 32`` units. A block takes a ticket from an
  atomic counter and works on that tile: pass 1, then it publishes the tile's kept count as a
  flag and sums the flags of the row's earlier tiles (a decoupled look-back; a tile other than
  the row's last stops once the sum reaches W, and one that keeps nothing needs none), then
  pass 2; the row's last tile writes the count and the -1 padding. A ticket is only ever waited
  on after the block holding it has started, so nothing relies on blocks being co-resident.
  Counters and flags live in the stream's zeroed scratch (`masks.backends.scratch`), which the
  last block to finish reading flags resets. One launch: a counting launch then a ranking launch
  costs more device time and host dispatch.
* ``fused`` (many rows): one block per row; warp k streams the k-th equal range of the row and
  ranks its ids during pass 1 (``rank_bytes``: a group's mask bytes pass through shared memory so
  that each lane holds consecutive bytes, then one shuffle scan), because at one wave of rows
  ranking after the loads is the kernel's tail. Warp 0, whose first rank is 0, writes straight
  into the row's ids, the others stage up to 256 ids each in shared memory. One barrier
  exchanges the warp counts; then each warp copies its staged ids into place, or ranks its range
  from the mask (pass 2) when it needs more than it staged.
* ``auto`` picks ``fused`` once the rows fill half a wave of resident ``fused`` blocks
  (`tiling.FUSED_MIN_WAVES`, shared with Numba; R >= the SM count at two blocks of 512 threads
  per SM), using the SM count read once per device.

Host side: kernels are compiled once per (device, dtype) behind a lock. A call shape's first
call makes its launch plan (`_Plan`): kernel, grid, block and a parameter block of 64-bit
values, every kernel parameter being 64 bits wide with the data pointers first. A call writes
its ``data_ptr()`` integers into the block and hands it to CuPy's binding of ``cuLaunchKernel``
(``cupy.cuda.driver.launchKernel``) on torch's current stream, given as its raw pointer. No CuPy
array, stream object or argument wrapper is built per call (CuPy's ``Function`` call, even with
pre-wrapped arguments, took 14.7 us against 11.7 at R=1 on the H200: docs/design.md).
Nothing reads device memory on the host, so a call never synchronises.

CPU mode: with ``MASKS_CUPY_EMULATE=1`` (read at import) the same kernels are built for the CPU
by `masks.backends.cuda_emulation` and take CPU tensors; plans and parameter blocks are made as
above, for `tiling.EMULATED_SM_COUNT` SMs, and handed to the emulation's ``launch_kernel``, which
runs the grid before it returns. CuPy is not imported.
"""

from __future__ import annotations

import ctypes
import os
import threading
from importlib import resources

import torch

from masks.backends import cuda_emulation, scratch
from masks.backends.cuda_state import raw_stream, sm_count
from masks.backends.plans import call_shape, remember
from masks.backends.tiling import EMULATED_SM_COUNT, geometry, wide_rows
from masks.result import SamplingMask

EMULATED = os.environ.get(cuda_emulation.SWITCH) == "1"
"""The kernels run on the CPU (`masks.backends.cuda_emulation`; read at import), without CuPy."""
if not EMULATED:
    import cupy

VARIANTS = ("auto", "split", "fused")

# Tuning knobs: the block sizes are compiled into a (device, dtype)'s kernels, the tiles per SM
# read by a shape's first call (a tuning script that changes one must clear `_kernels` and
# `_plans`, whose launches copy the values).
SPLIT_THREADS = 128
"""Threads of a split tile: ``SPLIT_THREADS / 32`` units, one per warp."""
FUSED_THREADS = 512
"""Threads of the fused kernel (one block per row)."""
SPLIT_TILES_PER_SM = 2
"""split: the longest unit (`masks.backends.tiling`) leaving at least this many tiles per SM
(tuned with benchmarks/tune.py; figures in docs/design.md)."""

_TYPE_NAMES = {
    torch.float32: "F32",
    torch.float16: "F16",
    torch.bfloat16: "BF16",
    torch.float64: "F64",
}
_OPTIONS = ("-std=c++17",)


def kernel_names(type_name: str) -> dict[str, str]:
    """NVRTC name expressions of the kernels of one dtype, keyed by role (``"fused:vec"``...)."""
    names = {}
    for vec in ("true", "false"):
        key = "vec" if vec == "true" else "strided"
        names[f"split:{key}"] = f"compact_split<{type_name}, {vec}, {SPLIT_THREADS}>"
        names[f"fused:{key}"] = f"compact_fused<{type_name}, {vec}, {FUSED_THREADS}>"
    return names


def source() -> str:
    """The CUDA C source (package data next to this module)."""
    return resources.files("masks.backends").joinpath("compact.cu").read_text()


class _Kernels:
    """Compiled kernels of one (device, dtype), the block sizes they were compiled for, and the
    device's SM count."""

    __slots__ = ("fused", "sm_count", "split", "threads")

    def __init__(self, index: int, dtype: torch.dtype) -> None:
        names = kernel_names(_TYPE_NAMES[dtype])
        if EMULATED:
            emulated = cuda_emulation.Module(source(), names.values())
            functions = {key: emulated.get_function(name) for key, name in names.items()}
            self.sm_count = EMULATED_SM_COUNT
        else:
            with cupy.cuda.Device(index):
                module = cupy.RawModule(
                    code=source(), options=_OPTIONS, name_expressions=list(names.values())
                )
                # `.kernel` compiles (or loads from CuPy's cache) for the current device.
                functions = {key: module.get_function(name).kernel for key, name in names.items()}
            self.sm_count = sm_count(index)
        self.split = (functions["split:strided"], functions["split:vec"])
        self.fused = (functions["fused:strided"], functions["fused:vec"])
        self.threads = (FUSED_THREADS, SPLIT_THREADS)


_lock = threading.Lock()
_kernels: dict[tuple[int, torch.dtype], _Kernels] = {}
_thread = threading.local()
if EMULATED:
    _launch_kernel = cuda_emulation.launch_kernel
else:
    _get_device = cupy.cuda.runtime.getDevice
    _launch_kernel = cupy.cuda.driver.launchKernel


def _load(index: int, dtype: torch.dtype) -> _Kernels:
    with _lock:
        kernels = _kernels.get((index, dtype))
        if kernels is None:
            kernels = _kernels[(index, dtype)] = _Kernels(index, dtype)
    return kernels


def unavailable_reason(device: torch.device) -> str | None:
    if EMULATED:  # the registry refuses CUDA tensors under the switch
        return cuda_emulation.unavailable_reason()
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as error:  # CUDARuntimeError: no driver, no device, driver too old
        return f"CuPy sees no CUDA device: {error}"
    index = 0 if device.index is None else device.index
    if index >= count:
        return f"CuPy sees {count} CUDA device(s), not {device}"
    return None


class _Plan:
    """One call shape's launch (`plans.call_shape`, the device, the variant and whether the
    logits start 16-byte aligned): its kernel, grid, threads and parameter block.

    Every parameter of the kernels is 64 bits wide, the data pointers first (compact.cu), so
    the block is one int64 array and a call writes only its pointers into it before handing it
    to CuPy's binding of ``cuLaunchKernel``, which copies the parameters: no argument is wrapped
    or inspected per call. The lock keeps another thread's pointers out of the block until the
    driver has copied it.
    """

    __slots__ = (
        "function",
        "grid",
        "kernel",
        "lock",
        "params",
        "params_address",
        "scratch_size",
        "threads",
        "values",
    )

    def __init__(self, kernel, grid: int, threads: int, scalars: tuple, scratch_size: int) -> None:
        self.kernel = kernel  # keeps its module loaded while the plan holds its handle
        self.function, self.grid, self.threads = kernel.ptr, grid, threads
        self.scratch_size = scratch_size
        pointers = 6 if scratch_size else 5  # logits, num_sampled, mask, ids, counts[, state]
        self.values = (ctypes.c_int64 * (pointers + len(scalars)))(*([0] * pointers), *scalars)
        first = ctypes.addressof(self.values)
        self.params = (ctypes.c_void_p * len(self.values))(
            *(first + 8 * index for index in range(len(self.values)))
        )
        self.params_address = ctypes.addressof(self.params)
        self.lock = threading.Lock()

    def launch(self, pointers: tuple, stream: int, index: int, device: torch.device) -> None:
        """Queue the kernel on ``stream`` of device ``index`` (the current device); ``split``
        holds the stream's zeroed scratch until it is queued."""
        if not self.scratch_size:
            self._enqueue(pointers, stream)
            return
        zeroed = scratch.for_stream(index, stream)
        state = zeroed.acquire(self.scratch_size, device)
        try:
            self._enqueue((*pointers, state.data_ptr()), stream)
        finally:
            zeroed.release()

    def _enqueue(self, pointers: tuple, stream: int) -> None:
        with self.lock:
            self.values[: len(pointers)] = pointers
            _launch_kernel(
                self.function, self.grid, 1, 1, self.threads, 1, 1, 0, stream, self.params_address,
                0,
            )  # fmt: skip


_plans: dict[tuple, _Plan] = {}


def compact(
    logits: torch.Tensor,
    num_sampled_tokens: torch.Tensor | None,
    out: SamplingMask,
    variant: str = VARIANTS[0],
) -> None:
    index = logits.get_device()
    address = logits.data_ptr()
    pointers = (
        address,
        0 if num_sampled_tokens is None else num_sampled_tokens.data_ptr(),
        out.packed_mask.data_ptr(),
        out.token_ids.data_ptr(),
        out.counts.data_ptr(),
    )
    # the start's 16-byte alignment picks the load path, with the strides
    key = (index, variant, address % 16 == 0, *call_shape(logits, num_sampled_tokens, out))
    if EMULATED:  # CPU tensors (index -1); the kernel has run when the launch returns
        plan = _plans.get(key) or _make_plan(key, logits, num_sampled_tokens, out, variant)
        plan.launch(pointers, 0, index, logits.device)
    elif _get_device() == index:
        if getattr(_thread, "device", None) != index:
            _bind_primary_context(index)  # before a first call's module load, too
        plan = _plans.get(key) or _make_plan(key, logits, num_sampled_tokens, out, variant)
        plan.launch(pointers, raw_stream(index), index, logits.device)
    else:  # multi-GPU: CuPy's guard makes the device current (binding its context), then restores
        with cupy.cuda.Device(index):
            plan = _plans.get(key) or _make_plan(key, logits, num_sampled_tokens, out, variant)
            plan.launch(pointers, raw_stream(index), index, logits.device)


def _bind_primary_context(index: int) -> None:
    """Give the calling thread the current device's primary context if it has none (once per
    thread): ``cuLaunchKernel`` runs in the thread's current context, and a thread that never
    made a CUDA runtime call has none. ``cudaSetDevice`` of the current device binds it and
    changes nothing else."""
    if cupy.cuda.driver.ctxGetCurrent() == 0:
        cupy.cuda.runtime.setDevice(index)
    _thread.device = index


def _make_plan(
    key: tuple,
    logits: torch.Tensor,
    num_sampled_tokens: torch.Tensor | None,
    out: SamplingMask,
    variant: str,
) -> _Plan:
    """Choose the variant, kernel, grid and scalar parameters of a call shape (compiling its
    dtype's kernels on first use) and keep them as the shape's plan."""
    index = logits.get_device()
    kernels = _kernels.get((index, logits.dtype)) or _load(index, logits.dtype)
    num_reqs, num_cols = logits.shape
    row_stride, col_stride = logits.stride()
    vec = int(wide_rows(logits) and logits.data_ptr() % 16 == 0)
    if num_sampled_tokens is None:
        counts_in = (0, 0)
    else:
        counts_in = (int(num_sampled_tokens.dtype == torch.int64), num_sampled_tokens.stride(0))
    scalars = (row_stride, col_stride, num_cols, *counts_in, out.token_ids.shape[1])
    shape = geometry(
        num_reqs, num_cols, variant, kernels.sm_count, kernels.threads, SPLIT_TILES_PER_SM
    )
    fused_threads, split_threads = kernels.threads
    if shape.fused:
        plan = _Plan(kernels.fused[vec], num_reqs, fused_threads, scalars, 0)
    else:
        tiles = num_reqs * shape.tiles_per_row
        # Ticket, done counter and one flag per tile: zero before and after every launch.
        split_scalars = (*scalars, shape.tiles_per_row, shape.segs_per_unit)
        plan = _Plan(kernels.split[vec], tiles, split_threads, split_scalars, 2 + tiles)
    with _lock:
        return remember(_plans, key, plan)
