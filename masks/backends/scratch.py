"""Zeroed scratch of the split kernels, reused per (device, stream) instead of allocated per call.

The ``split`` kernels of Triton, CuPy and Numba coordinate the programs of one launch through a
small int32 device buffer: a ticket counter, a done counter and one flag per tile (see
``compact_split`` in compact.cu). The buffer is zero when allocated, and every launch leaves it
zero (its last program resets what it used), so no call pays a memset and the replays of a CUDA
graph find it zero too. Allocating it per call would cost a caching-allocator round trip and a
memset on the host (a few us of a ~15 us dispatch); here each stream keeps one buffer. A caller
holds it until its launch is queued (`StreamScratch.acquire`, then `release`), so two host
threads launching on the same stream cannot interleave around it; launches on one stream run in
order, so the next holder's kernel never overlaps the previous holder's. A call being captured
into a CUDA graph gets a zeroed buffer of its own instead, since the graph may later be replayed
on another stream. The registry of scratches is bounded (`plans.remember`): a scratch dropped
from it stays valid for a caller holding it, and its buffer returns to torch's allocator on its
own stream, so queued kernels still finish with it.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

import torch

from masks.backends.plans import remember


class StreamScratch:
    """One growing, zeroed int32 buffer and one lock per (device, stream pointer)."""

    __slots__ = ("_buffer", "_lock")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._buffer: torch.Tensor | None = None

    def acquire(self, numel: int, device: torch.device) -> torch.Tensor:
        """Lock the scratch and return a zeroed int32 buffer of >= ``numel`` entries, which the
        caller's kernel must leave zero; the caller calls `release` once its launch is queued
        (``try``/``finally``: the hot path of every split call, so no context object)."""
        self._lock.acquire()
        try:
            if _capturing(device):
                # A graph gets a buffer of its own, since it may be replayed on another stream
                # while this one is in use. Its zeroing is captured too, so every replay starts
                # from zero even where the graph's pool gives the memory to a later allocation.
                return torch.zeros(numel, dtype=torch.int32, device=device)
            if self._buffer is None or self._buffer.numel() < numel:
                # The old buffer is freed to torch's allocator, which reuses it in this stream's
                # order (it was allocated on this stream), so kernels still queued on it are safe.
                size = numel if self._buffer is None else max(numel, 2 * self._buffer.numel())
                self._buffer = torch.zeros(size, dtype=torch.int32, device=device)
            return self._buffer
        except BaseException:  # e.g. out of memory: the stream's next call must not hang
            self._lock.release()
            raise

    def release(self) -> None:
        self._lock.release()

    @contextlib.contextmanager
    def hold(self, numel: int, device: torch.device) -> Iterator[torch.Tensor]:
        """``with scratch.hold(n, device) as buffer:`` `acquire` and `release` around a block."""
        buffer = self.acquire(numel, device)
        try:
            yield buffer
        finally:
            self.release()


def _capturing(device: torch.device) -> bool:
    """Whether torch's current stream is capturing a CUDA graph (never on the CPU)."""
    return device.type == "cuda" and _stream_capturing()


_stream_capturing = getattr(
    torch._C, "_cuda_isCurrentStreamCapturing", torch.cuda.is_current_stream_capturing
)
"""`torch.cuda.is_current_stream_capturing` without its Python layer (every split call)."""


_scratches: dict[tuple[int, int], StreamScratch] = {}
_scratches_lock = threading.Lock()


def for_stream(device_index: int, stream_pointer: int) -> StreamScratch:
    """The scratch of one stream of one device (created on first use)."""
    key = (device_index, stream_pointer)
    scratch = _scratches.get(key)
    if scratch is None:
        with _scratches_lock:
            scratch = remember(_scratches, key, StreamScratch())
    return scratch
