"""CuPy backend: the CUDA C kernels of ``compact.cu``, compiled with NVRTC through CuPy.

Design (shared with the Numba backend, which runs the same kernels in Python syntax):

* Bytes: logits are read once (16-byte streaming loads when a row is contiguous and 16-byte
  aligned, scalar strided loads otherwise), the mask, ids and counts written once. Finiteness is
  tested on the bit pattern (exponent all ones = not kept), so every dtype is read as unsigned
  integers and NaN payloads never matter. The load is ``__ldcs`` (``ld.global.cs``), and no more
  is asked of the L2 than the loads: on the H200 at R = 256-1024 (results/h200-2026-12-02-s7),
  a 256-byte L2 prefetch size (``.L2::256B``, with ``.cs``, ``.nc.L1::no_allocate`` or
  ``.L1::no_allocate``) made every cell 4-13% slower, and prefetching a warp's next group (4 KB)
  into L2 one or two groups ahead of its loads 9-23% (run 2); ``.nc.L1::no_allocate`` left bf16
  within 2% and fp32 1-6% slower, ``.cs.L2::128B`` was within 2% (run 1). Mask bytes are stored
  one byte per lane and segment: storing a bf16 group's as one 8-byte word per lane (the word
  `rank_bytes` regroups) was 0.9-1.1% slower on average, up to 4% (run 3).
* Two passes per range of columns, both warp-level. Pass 1 streams: lane l of a warp owns mask
  byte l of each 256-column *warp segment*, and a warp walks a contiguous range of segments
  issuing 8 16-byte loads per lane before testing them (several segments in flight), writing
  mask bytes and accumulating a lane count: no block barrier, no shuffle inside the loop (the
  previous design's per-segment block scans starved memory-level parallelism). The warp counts
  are combined once. Pass 2 ranks from the mask the warp just wrote (1/32 of the fp32 bytes,
  L2-hot): each lane takes consecutive 32-bit words (four, one 16-byte load, in ``fused``'s long
  ranges; one in ``split``'s short units), a shuffle scan of the lanes' popcounts gives their
  ranks, then only the set bits are visited, and a warp stops as soon as its ranks reach W, so
  ranking costs words + kept ids, not columns. A step of full words (no masked column in a row:
  no truncation) is written as consecutive ids with coalesced stores. Four words per lane cut
  ``fused``'s scans by four and load a 16384-column range in one round trip: on the H200,
  sparse and dense rows at R = 256 and 512 took 0.1-10% less time than with one word per lane
  (full rows within 3% either way); in ``split`` they put a unit's set bits on a quarter of the
  lanes, and full rows at R = 1-16 took 22-34% longer (results/h200-2026-12-01).
* ``split`` (few rows; R=1 must fill the GPU): a *unit* is ``segs_per_unit`` segments of a row,
  one per warp; a tile (block) is ``SPLIT_THREADS / 32`` units; one launch. A block takes a
  ticket from an atomic counter and works on that tile, runs pass 1, publishes the tile's kept
  count as a flag, sums the flags of the row's earlier tiles (a decoupled look-back; a tile
  stops once the sum reaches W, and one that keeps nothing needs none), then runs pass 2; the
  row's last tile writes the count and the -1 padding. A ticket is only ever waited on after
  the block holding it has started, so nothing relies on blocks being co-resident. Counters
  and flags live in the stream's zeroed scratch (`masks.backends.scratch`), which the launch's
  last block resets. One launch, not two: on the H200 the two-launch form (counts through
  scratch, then ranking) cost 1-2 us more device time at R=4..64 and ~5 us more host dispatch.
* ``fused`` (many rows): one block per row, warp k streams the k-th equal range of the row and
  ranks its ids as it goes (``rank_bytes``: a group of kN segments with kept columns passes
  its mask bytes through shared memory so that each lane holds kN consecutive bytes, 8 * kN
  columns, then one shuffle scan of the lanes' popcounts and `emit_ids` over each lane's words):
  warp 0, whose first rank is 0, writes straight into the row's ids, the others into 256 slots
  each of shared memory. One barrier exchanges the warp counts, then each warp copies
  its staged ids into place, or ranks its range from the mask (pass 2) when it needs more than
  it staged. One launch. Ranking after the barrier was the tail of a wave of rows: on the H200
  (results/h200-2026-12-01-s4) it cost 2-4 us at R=256 and 8 us at R=512 (bf16, V=128256,
  against skipping it); ranking during pass 1 took 3-7% off the whole call at R=256 and 7-8%
  at R=512 and 1024 on bf16 rows of 2048 ids, where keeping the mask in shared memory for
  pass 2 gained nothing, and loading the next group before ranking one cost up to 5% on bf16
  and 35% on fp32 (it spilled registers; without spills, 4-12% on bf16: results/
  h200-2026-12-01-s9 run 3). Writing the row's -1 padding before pass 1 (over the loads, one
  more barrier) rather than after the barrier moved sparse bf16 rows at R = 256 and 512 by
  -1.3 to +2.4% and made dense and full ones 0.5-1.8% slower (results/h200-2026-12-01-s7
  run 2). Ranking is what costs at one wave: bf16 rows of 2048 ids at R = 256, V = 128256
  ran 10.0 M instructions against 5.2 M for full rows (Nsight Compute), and pass 1 without
  ranking reached 84% of the copy ceiling against 73% (s9 runs 2 and 4). The previous ranking
  (three scans of 10-bit fields and a bit loop per segment, ~330 instructions a dense bf16
  group, with a shortcut without scan for a group whose kept columns lay in one lane that had
  made sparse rows 1.3% faster) took 4-6% longer than the regrouped one on dense bf16 rows and
  1-4% longer on sparse ones (s9 run 5).
* ``auto`` picks ``fused`` once the rows fill half a wave of resident ``fused`` blocks
  (`tiling.FUSED_MIN_WAVES`, shared with Numba; R >= the SM count at two blocks of 512 threads
  per SM), using the SM count read once per device.

Host side: kernels are compiled once per (device, dtype) behind a lock. A call shape's first
call makes its launch plan (`_Plan`): kernel, grid, block and a parameter block of 64-bit
values, every kernel parameter being 64 bits wide with the data pointers first; a call writes
its ``data_ptr()`` integers into the block and hands it to CuPy's binding of ``cuLaunchKernel``
(``cupy.cuda.driver.launchKernel``) on torch's current stream, given as its raw pointer. No
CuPy array, stream object or argument wrapper is built per call: through CuPy's ``Function``
call with pre-wrapped ``CIntptr`` arguments an API call took 14.7 us at R=1 on the H200, with
the plans 11.7 us (results/h200-2026-12-01-s6, run 2). Nothing reads device memory on the host,
so a call never synchronises.
"""

from __future__ import annotations

import ctypes
import threading
from importlib import resources

import cupy
import torch

from masks.backends import scratch
from masks.backends.cuda_state import raw_stream, sm_count
from masks.backends.plans import call_shape, remember
from masks.backends.tiling import geometry, wide_rows
from masks.result import SamplingMask

VARIANTS = ("auto", "split", "fused")

# Tuning knobs: the block sizes are compiled into a (device, dtype)'s kernels, the tiles per SM
# read by a shape's first call (a tuning script that changes one must clear `_kernels` and
# `_plans`, whose launches copy the values).
SPLIT_THREADS = 128
"""Threads of a split tile: ``SPLIT_THREADS / 32`` units, one per warp."""
FUSED_THREADS = 512
"""Threads of the fused kernel (one block per row)."""
SPLIT_TILES_PER_SM = 2
"""split: the longest unit (`masks.backends.tiling`) leaving at least
this many tiles per SM (H200, V=151936 fp32, full rows: 2 gave 9.2/10.1/11.8 us at R=1/4/16,
4 gave 9.2/9.7/12.3, 8 gave 9.1/9.8/13.6; benchmarks/tune.py)."""

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
        with cupy.cuda.Device(index):
            module = cupy.RawModule(
                code=source(), options=_OPTIONS, name_expressions=list(names.values())
            )
            # `.kernel` compiles (or loads from CuPy's cache) for the current device.
            functions = {key: module.get_function(name).kernel for key, name in names.items()}
        self.split = (functions["split:strided"], functions["split:vec"])
        self.fused = (functions["fused:strided"], functions["fused:vec"])
        self.threads = (FUSED_THREADS, SPLIT_THREADS)
        self.sm_count = sm_count(index)


_lock = threading.Lock()
_kernels: dict[tuple[int, torch.dtype], _Kernels] = {}
_thread = threading.local()
_get_device = cupy.cuda.runtime.getDevice
_launch_kernel = cupy.cuda.driver.launchKernel


def _load(index: int, dtype: torch.dtype) -> _Kernels:
    with _lock:
        kernels = _kernels.get((index, dtype))
        if kernels is None:
            kernels = _kernels[(index, dtype)] = _Kernels(index, dtype)
    return kernels


def unavailable_reason(device: torch.device) -> str | None:
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

    def launch(self, pointers: tuple, index: int, device: torch.device) -> None:
        """Queue the kernel on torch's current stream of device ``index`` (the current device);
        ``split`` holds the stream's zeroed scratch until it is queued."""
        stream = raw_stream(index)
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
    if _get_device() == index:
        if getattr(_thread, "device", None) != index:
            _bind_primary_context(index)  # before a first call's module load, too
        plan = _plans.get(key) or _make_plan(key, logits, num_sampled_tokens, out, variant)
        plan.launch(pointers, index, logits.device)
    else:  # multi-GPU: CuPy's guard makes the device current (binding its context), then restores
        with cupy.cuda.Device(index):
            plan = _plans.get(key) or _make_plan(key, logits, num_sampled_tokens, out, variant)
            plan.launch(pointers, index, logits.device)


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
