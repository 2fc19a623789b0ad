"""CuPy backend: the CUDA C kernels of ``compact.cu``, compiled with NVRTC through CuPy.

Design (the one every GPU backend of masks follows):

* Bytes: logits are read once (16-byte streaming loads when a row is contiguous and 16-byte
  aligned, scalar strided loads otherwise), the mask, ids and counts written once. Finiteness is
  tested on the bit pattern (exponent all ones = not kept), so every dtype is read as unsigned
  integers and NaN payloads never matter.
* Each thread owns eight consecutive columns, i.e. one mask byte, per segment of
  ``threads * 8`` columns, so mask stores are coalesced bytes. Kept ids are ranked with warp
  votes (``__ballot_sync`` + ``__popc`` over the bit planes of the per-thread counts) and one
  shared-memory pass over the warp sums: no element-level scan.
* ``split`` (few rows; R=1 must fill the GPU): tiles of ``segs_per_tile`` segments of a row.
  Launch 1 writes each tile's mask bytes and kept count (a scratch ``[R, C]`` int32 tensor);
  launch 2 turns the row's tile counts into the tile's prefix and the row total, writes the
  count and the -1 padding, and ranks the tile's ids from its mask bytes (1/32 of the bits of
  fp32 logits) while the prefix is < W. No block ever waits for another, so nothing relies on
  blocks being co-resident.
* ``fused`` (many rows): one block per row ranks segment by segment until W ids are placed,
  then only writes mask bytes and counts. One launch.
* ``auto`` picks ``fused`` from about two waves of row blocks on, using the SM count read once
  per device.

Host side: kernels are compiled once per (device, dtype) behind a lock and launched through
CuPy's ``Function`` with raw ``data_ptr()`` integers (64-bit kernel parameters; no CuPy array
is built per call) on torch's current stream, wrapped once per stream pointer. Nothing reads
device memory on the host, so a call never synchronises.
"""

from __future__ import annotations

import threading
from importlib import resources

import cupy
import torch

from masks.result import SamplingMask

VARIANTS = ("auto", "split", "fused")

# Tuning knobs, read when a (device, dtype) is first compiled and at each call (a tuning script
# may change them and clear `_kernels`).
SPLIT_THREADS = 256
"""Threads of split launch 1; a segment, the smallest tile, is ``8 * SPLIT_THREADS`` columns."""
RANK_THREADS = 256
"""Threads of split launch 2 (ranks ``RANK_THREADS`` mask bytes per round)."""
FUSED_THREADS = 512
"""Threads of the fused kernel (one block per row)."""
SPLIT_TILES_PER_SM = 32
"""split: the largest tile (up to ``MAX_SEGS_PER_TILE`` segments) leaving this many tiles per SM."""
MAX_SEGS_PER_TILE = 8
FUSED_MIN_WAVES = 2
"""auto: fused once the rows fill this many waves of resident fused blocks."""

_TYPE_NAMES = {
    torch.float32: "F32",
    torch.float16: "F16",
    torch.bfloat16: "BF16",
    torch.float64: "F64",
}
_OPTIONS = ("-std=c++17",)
_MAX_THREADS_PER_SM = 2048  # sm_80 and sm_90


def kernel_names(type_name: str) -> dict[str, str]:
    """NVRTC name expressions of the kernels of one dtype, keyed by role (``"fused:vec"``...)."""
    names = {"rank": f"compact_split_rank<{RANK_THREADS}>"}
    for vec in ("true", "false"):
        key = "vec" if vec == "true" else "strided"
        names[f"count:{key}"] = f"compact_split_count<{type_name}, {vec}, {SPLIT_THREADS}>"
        names[f"fused:{key}"] = f"compact_fused<{type_name}, {vec}, {FUSED_THREADS}>"
    return names


def source() -> str:
    """The CUDA C source (package data next to this module)."""
    return resources.files("masks.backends").joinpath("compact.cu").read_text()


class _Kernels:
    """Compiled kernels of one (device, dtype) and the shape thresholds of that device."""

    __slots__ = ("count", "fused", "fused_min_rows", "itemsize", "rank", "target_tiles")

    def __init__(self, index: int, dtype: torch.dtype) -> None:
        names = kernel_names(_TYPE_NAMES[dtype])
        with cupy.cuda.Device(index):
            module = cupy.RawModule(
                code=source(), options=_OPTIONS, name_expressions=list(names.values())
            )
            # `.kernel` compiles (or loads from CuPy's cache) for the current device.
            functions = {key: module.get_function(name).kernel for key, name in names.items()}
            sm_count = cupy.cuda.runtime.getDeviceProperties(index)["multiProcessorCount"]
        self.rank = functions["rank"]
        self.count = (functions["count:strided"], functions["count:vec"])
        self.fused = (functions["fused:strided"], functions["fused:vec"])
        self.itemsize = torch.empty((), dtype=dtype).element_size()
        self.target_tiles = SPLIT_TILES_PER_SM * sm_count
        self.fused_min_rows = FUSED_MIN_WAVES * sm_count * (_MAX_THREADS_PER_SM // FUSED_THREADS)


_lock = threading.Lock()
_kernels: dict[tuple[int, torch.dtype], _Kernels] = {}
_streams: dict[int, object] = {}
_MAX_STREAMS = 64
_get_device = cupy.cuda.runtime.getDevice
_raw_stream = getattr(torch._C, "_cuda_getCurrentRawStream", None)


def _load(index: int, dtype: torch.dtype) -> _Kernels:
    with _lock:
        kernels = _kernels.get((index, dtype))
        if kernels is None:
            kernels = _kernels[(index, dtype)] = _Kernels(index, dtype)
    return kernels


class _StreamHandle:
    """A raw stream pointer speaking the CUDA stream protocol (for ``Stream.from_external``)."""

    __slots__ = ("ptr",)

    def __init__(self, ptr: int) -> None:
        self.ptr = ptr

    def __cuda_stream__(self) -> tuple[int, int]:
        return (0, self.ptr)


def _stream(index: int):
    """CuPy's view of torch's current stream on device ``index`` (one object per pointer)."""
    if _raw_stream is not None:
        ptr = _raw_stream(index)
    else:
        ptr = torch.cuda.current_stream(index).cuda_stream
    stream = _streams.get(ptr)
    if stream is None:
        if hasattr(cupy.cuda.Stream, "from_external"):  # CuPy >= 14
            stream = cupy.cuda.Stream.from_external(_StreamHandle(ptr))
        else:
            stream = cupy.cuda.ExternalStream(ptr)
        if len(_streams) >= _MAX_STREAMS:
            _streams.clear()
        _streams[ptr] = stream
    return stream


def unavailable_reason(device: torch.device) -> str | None:
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as error:  # CUDARuntimeError: no driver, no device, driver too old
        return f"CuPy sees no CUDA device: {error}"
    index = 0 if device.index is None else device.index
    if index >= count:
        return f"CuPy sees {count} CUDA device(s), not {device}"
    return None


def compact(
    logits: torch.Tensor,
    num_sampled_tokens: torch.Tensor | None,
    out: SamplingMask,
    variant: str = VARIANTS[0],
) -> None:
    index = logits.get_device()
    kernels = _kernels.get((index, logits.dtype)) or _load(index, logits.dtype)
    num_reqs, num_cols = logits.shape
    row_stride, col_stride = logits.stride()
    address = logits.data_ptr()
    row_bytes = row_stride * kernels.itemsize if num_reqs > 1 else 0
    vec = int(col_stride == 1 and (address | row_bytes) % 16 == 0)
    if num_sampled_tokens is None:
        active = (0, 0, 0)
    else:
        active = (
            num_sampled_tokens.data_ptr(),
            int(num_sampled_tokens.dtype == torch.int64),
            num_sampled_tokens.stride(0),
        )
    if variant == "auto":
        variant = "fused" if num_reqs >= kernels.fused_min_rows else "split"
    logits_args = (address, row_stride, col_stride, num_cols, *active)
    stream = _stream(index)
    if _get_device() == index:
        _launch(kernels, variant, vec, logits_args, logits.device, out, stream)
    else:
        with cupy.cuda.Device(index):
            _launch(kernels, variant, vec, logits_args, logits.device, out, stream)


def _launch(
    kernels: _Kernels,
    variant: str,
    vec: int,
    logits_args: tuple[int, ...],
    device: torch.device,
    out: SamplingMask,
    stream,
) -> None:
    """Launch ``variant`` on ``stream``; ``logits_args`` = the kernels' first seven arguments."""
    num_reqs, width = out.token_ids.shape
    num_cols = logits_args[3]
    mask = out.packed_mask.data_ptr()
    ids, counts = out.token_ids.data_ptr(), out.counts.data_ptr()
    if variant == "fused":
        args = (*logits_args, mask, ids, width, counts)
        kernels.fused[vec]((num_reqs,), (FUSED_THREADS,), args, stream=stream)
        return
    segments = -(-num_cols // (8 * SPLIT_THREADS))
    segs_per_tile = 1
    while (
        segs_per_tile < MAX_SEGS_PER_TILE
        and num_reqs * -(-segments // (2 * segs_per_tile)) >= kernels.target_tiles
    ):
        segs_per_tile *= 2
    tiles_per_row = -(-segments // segs_per_tile)
    tiles = num_reqs * tiles_per_row
    tile_counts = torch.empty(tiles, dtype=torch.int32, device=device)  # alive until launched
    scratch = tile_counts.data_ptr()
    count_args = (*logits_args, mask, scratch, tiles_per_row, segs_per_tile)
    kernels.count[vec]((tiles,), (SPLIT_THREADS,), count_args, stream=stream)
    tile_bytes = segs_per_tile * SPLIT_THREADS
    rank_args = (mask, num_cols, scratch, tiles_per_row, tile_bytes, ids, width, counts)
    kernels.rank((tiles,), (RANK_THREADS,), rank_args, stream=stream)
