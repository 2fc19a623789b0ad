"""Scratch for two-launch kernels, reused per (device, stream) instead of allocated per call.

The ``split`` variants pass per-tile counts from their first launch to their second through a
small int32 device buffer. Allocating it per call costs a caching-allocator round trip on the
host (a few us of a ~20 us dispatch); here each stream keeps one buffer. A caller holds it from
its first launch to its last (`StreamScratch.hold`), so two host threads launching on the same
stream cannot interleave their launches around it; launches on one stream run in order, so the
next holder's kernels never overlap the previous holder's. A buffer that grows is replaced, and
the old one is kept alive: a CUDA graph captured with it may still be replayed.
"""

from __future__ import annotations

import threading

import torch


class StreamScratch:
    """One growing int32 buffer and one lock per (device, stream pointer)."""

    __slots__ = ("_buffer", "_lock", "_retired")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._buffer: torch.Tensor | None = None
        self._retired: list[torch.Tensor] = []

    def hold(self, numel: int, device: torch.device) -> _Held:
        """``with scratch.hold(n, device) as buffer:`` an int32 buffer of at least ``n`` entries."""
        return _Held(self, numel, device)

    def _acquire(self, numel: int, device: torch.device) -> torch.Tensor:
        self._lock.acquire()
        buffer = self._buffer
        if buffer is None or buffer.numel() < numel:
            if buffer is not None:
                self._retired.append(buffer)
            size = max(numel, 2 * buffer.numel()) if buffer is not None else numel
            buffer = self._buffer = torch.empty(size, dtype=torch.int32, device=device)
        return buffer


class _Held:
    __slots__ = ("_device", "_numel", "_scratch")

    def __init__(self, scratch: StreamScratch, numel: int, device: torch.device) -> None:
        self._scratch, self._numel, self._device = scratch, numel, device

    def __enter__(self) -> torch.Tensor:
        return self._scratch._acquire(self._numel, self._device)

    def __exit__(self, *exc_info) -> None:
        self._scratch._lock.release()


_scratches: dict[tuple[int, int], StreamScratch] = {}
_scratches_lock = threading.Lock()


def for_stream(device_index: int, stream_pointer: int) -> StreamScratch:
    """The scratch of one stream of one device (created on first use)."""
    key = (device_index, stream_pointer)
    scratch = _scratches.get(key)
    if scratch is None:
        with _scratches_lock:
            scratch = _scratches.setdefault(key, StreamScratch())
    return scratch
