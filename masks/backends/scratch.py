"""Scratch for split kernels, reused per (device, stream) instead of allocated per call.

The ``split`` variants of Triton and CuPy pass per-tile counts from their first launch to their
second through a small int32 device buffer (Numba's still takes a fresh one per call). Kernels
that coordinate their programs through counters and flags in one launch take a *zeroed*
scratch instead (``for_stream(..., zeroed=True)``): it is zero when allocated, and every such
kernel leaves it zero when it ends (its last program resets what it used), so no call pays a
memset and a CUDA graph's replays find it zero too.
Allocating it per call costs a caching-allocator round trip on the host (a few us of a ~20 us
dispatch); here each stream keeps one buffer. A caller holds it from its first launch to its
last (`StreamScratch.hold`), so two host threads launching on the same stream cannot interleave
their launches around it; launches on one stream run in order, so the next holder's kernels
never overlap the previous holder's. A call being captured into a CUDA graph gets a buffer of
its own instead, since the graph may later be replayed on another stream.
"""

from __future__ import annotations

import threading

import torch


class StreamScratch:
    """One growing int32 buffer and one lock per (device, stream pointer, zeroed)."""

    __slots__ = ("_buffer", "_lock", "_zeroed")

    def __init__(self, zeroed: bool = False) -> None:
        self._lock = threading.Lock()
        self._buffer: torch.Tensor | None = None
        self._zeroed = zeroed

    def hold(self, numel: int, device: torch.device) -> _Held:
        """``with scratch.hold(n, device) as buffer:`` an int32 buffer of at least ``n`` entries."""
        return _Held(self, numel, device)

    def _acquire(self, numel: int, device: torch.device) -> torch.Tensor:
        self._lock.acquire()
        try:
            return self._buffer_for(numel, device)
        except BaseException:  # e.g. out of memory: the stream's next call must not hang
            self._lock.release()
            raise

    def _new(self, numel: int, device: torch.device) -> torch.Tensor:
        new = torch.zeros if self._zeroed else torch.empty
        return new(numel, dtype=torch.int32, device=device)

    def _buffer_for(self, numel: int, device: torch.device) -> torch.Tensor:
        if device.type == "cuda" and torch.cuda.is_current_stream_capturing():
            # A graph gets a buffer of its own (from its private pool, alive as long as the
            # graph), since it may be replayed on another stream while this one is in use.
            return self._new(numel, device)
        buffer = self._buffer
        if buffer is None or buffer.numel() < numel:
            # The old buffer is freed to torch's allocator, which reuses it in this stream's
            # order (it was allocated on this stream), so kernels still queued on it are safe.
            size = max(numel, 2 * buffer.numel()) if buffer is not None else numel
            buffer = self._buffer = self._new(size, device)
        return buffer


class _Held:
    __slots__ = ("_device", "_numel", "_scratch")

    def __init__(self, scratch: StreamScratch, numel: int, device: torch.device) -> None:
        self._scratch, self._numel, self._device = scratch, numel, device

    def __enter__(self) -> torch.Tensor:
        return self._scratch._acquire(self._numel, self._device)

    def __exit__(self, *exc_info) -> None:
        self._scratch._lock.release()


_scratches: dict[tuple[int, int, bool], StreamScratch] = {}
_scratches_lock = threading.Lock()


def for_stream(device_index: int, stream_pointer: int, zeroed: bool = False) -> StreamScratch:
    """The scratch of one stream of one device (created on first use); ``zeroed``: see above."""
    key = (device_index, stream_pointer, zeroed)
    scratch = _scratches.get(key)
    if scratch is None:
        with _scratches_lock:
            scratch = _scratches.setdefault(key, StreamScratch(zeroed))
    return scratch
