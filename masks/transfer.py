"""The host step for CUDA results: only the bytes the answer needs cross to the host.

1. Right after the kernel (same stream, no sync): the ids of ``token_ids`` that are not ``-1``
   padding, packed to the front in row-major order (``nonzero_static``, which needs no size from
   the host, then a gather: three launches). For rows that fit in W this *is* the CSR's ids. An
   asynchronous copy of the counts into pinned host memory follows.
2. When the answer is wanted (`PendingCSR.wait`, typically on the worker's output thread): the
   counts are read, rows wider than W are decoded from the bitmask *on the device* into their
   CSR slots (a bounded chunk of rows at a time: `csr.row_chunks`), and exactly ``total`` ids
   are copied to pinned host memory. This work goes on a side stream of the device
   (`_copy_stream`), so `wait` does not also wait for what the caller queued on its own stream
   after step 1 (the next decode step).

The bitmask never crosses. Rows wider than W are decoded in step 2 from the mask's tensors, so
those must not be overwritten (an ``out=`` reused by the next step) before `wait` returns.
Everything here is plain torch ops, so it runs on CPU tensors too (CI checks it there against
the reference CSR). The pinned buffers come from torch's caching host allocator: the counts'
goes back to it with the `PendingCSR` (as do the packed ids on the device), and the returned ids
are a view of theirs, which goes back once the caller drops the array. A caller that keeps the
ids for long (an RL replay buffer) should copy them (``ids.copy()``), or it holds page-locked
memory, and each later step pins new memory. The library does not copy for everyone: on the
H200's host a copy cost 8-12 us a step at R = 64-1024 with 50 ids per row (4-7% of the host
step), and made full rows, where every id crosses, 5-10x slower (1.9 -> 11.5 ms at R = 64, V =
151936; benchmarks/results/h200-2026-12-04-s3 runs 1-2). The side stream is one of torch's
pooled streams, so an application that takes more than the pool's 32 streams of a device may be
handed the same one; `wait` then also waits for that stream's work.
"""

from __future__ import annotations

from contextlib import nullcontext

import numpy as np
import torch

from masks.csr import csr_offsets, row_chunks
from masks.result import SamplingMask

_copy_streams: dict[torch.device, torch.cuda.Stream] = {}


def _copy_stream(device: torch.device) -> torch.cuda.Stream:
    """The device's stream for `PendingCSR.wait` (one per device; created once, atomically under
    the GIL)."""
    stream = _copy_streams.get(device)
    if stream is None:
        stream = _copy_streams.setdefault(device, torch.cuda.Stream(device))
    return stream


def _host_buffer(like: torch.Tensor, numel: int) -> torch.Tensor:
    """Host memory for ``numel`` elements of ``like``, pinned when ``like`` is on CUDA (on the
    CPU whatever the caller's default device)."""
    return torch.empty(numel, dtype=like.dtype, device="cpu", pin_memory=like.is_cuda)


def _exclusive_cumsum(lengths: torch.Tensor) -> torch.Tensor:
    return torch.cumsum(lengths, dim=0) - lengths


def _packed_ids(token_ids: torch.Tensor) -> torch.Tensor:
    """The non-padding entries of ``token_ids`` (row-major) at the front of an ``[R * W]`` buffer.

    Padding is exactly the ``-1`` entries (the contract), so for rows whose support fits in W
    the first ``sum(counts)`` entries are the CSR ids. No host sync: the output size is static.
    """
    flat = token_ids.reshape(-1)
    if not flat.numel():  # nonzero_static on an empty CUDA tensor crashed before torch 2.9
        return flat
    kept = torch.nonzero_static(flat >= 0, size=flat.numel(), fill_value=0).view(-1)
    return flat.index_select(0, kept)


def _scatter_prefixes(
    token_ids: torch.Tensor, lengths: torch.Tensor, starts: torch.Tensor, buffer: torch.Tensor
) -> None:
    """Write ``token_ids[r, :lengths[r]]`` at ``buffer[starts[r]:]``, no sync; everything past a
    row's length lands in ``buffer``'s last entry, a spill slot."""
    columns = torch.arange(token_ids.shape[1], dtype=torch.int64, device=token_ids.device)
    spill = buffer.numel() - 1
    destination = torch.where(columns < lengths.unsqueeze(1), starts.unsqueeze(1) + columns, spill)
    buffer.scatter_(0, destination.reshape(-1), token_ids.reshape(-1))


class PendingCSR:
    """A CSR transfer in flight; `wait()` completes it and returns ``(ids, offsets)``.

    Created on the stream that produced the mask, right after it; `wait()` may run on another
    thread, and does not wait for later work on that stream. The mask must stay unchanged until
    `wait()` returns.
    """

    def __init__(self, mask: SamplingMask) -> None:
        self._mask = mask
        # The CSR of every row whose support fits in W, assembled before its size is known.
        self._compact = _packed_ids(mask.token_ids)
        self._counts = _host_buffer(mask.counts, mask.num_reqs)
        self._counts.copy_(mask.counts, non_blocking=True)
        self._ready = None
        if mask.counts.is_cuda:
            self._ready = torch.cuda.Event()
            self._ready.record(torch.cuda.current_stream(mask.device))

    def wait(self) -> tuple[np.ndarray, np.ndarray]:
        # Once the host has seen this event, everything the mask needs is done on the device, so
        # the side stream needs no device-side wait.
        if self._ready is not None:
            self._ready.synchronize()
        counts = self._counts.numpy()
        offsets = csr_offsets(counts)
        total = int(offsets[-1])
        wide_rows = np.flatnonzero(counts > self._mask.width)
        side = _copy_stream(self._mask.device) if self._ready is not None else None
        with torch.cuda.stream(side) if side is not None else nullcontext():
            if wide_rows.size:
                csr = self._csr_with_wide_rows(offsets, wide_rows)
            else:
                csr = self._compact[:total]
            ids = _host_buffer(csr, total)
            ids.copy_(csr, non_blocking=True)
            if side is not None:
                copied = torch.cuda.Event()
                copied.record(side)  # only this wait's work, if other threads share the stream
                copied.synchronize()
        return ids.numpy(), offsets  # a view of the pinned buffer (module docstring)

    def _csr_with_wide_rows(self, offsets: np.ndarray, wide_rows: np.ndarray) -> torch.Tensor:
        """Rows wider than W are decoded from the bitmask on the mask's device, a bounded chunk
        of rows at a time (`csr.row_chunks`)."""
        mask = self._mask
        device = mask.device
        total = int(offsets[-1])
        starts = torch.from_numpy(offsets[:-1]).to(device, non_blocking=True)
        wide = torch.from_numpy(wide_rows).to(device, non_blocking=True)
        lengths = mask.counts.to(torch.int64).index_fill(0, wide, 0)
        csr = torch.empty(total + 1, dtype=torch.int32, device=device)  # + the spill slot
        _scatter_prefixes(mask.token_ids, lengths, starts, csr)

        shifts = torch.arange(8, dtype=torch.uint8, device=device)
        for chunk in row_chunks(wide.numel(), mask.vocab_size):
            rows_of_chunk = wide[chunk]
            bits = (mask.packed_mask[rows_of_chunk].unsqueeze(2) >> shifts) & 1
            bits = bits.reshape(rows_of_chunk.numel(), -1)[:, : mask.vocab_size]
            rows, columns = bits.nonzero(as_tuple=True)
            del bits
            counts = mask.counts[rows_of_chunk].to(torch.int64)
            rank = torch.arange(rows.numel(), device=device) - _exclusive_cumsum(counts)[rows]
            csr[starts[rows_of_chunk][rows] + rank] = columns.to(torch.int32)
        return csr[:total]
