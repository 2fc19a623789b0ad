"""Gather `SamplingMask`s across the ranks of a process group, for batch-sharded sampling.

Why this exists: a server that shards the sampling batch across GPUs has each rank sample (and
compact the mask of) its own slice of the requests, but one rank builds the responses. vLLM
rejects sampling masks together with batch-sharded sampling because its gather does not forward
them; `gather_sampling_masks` is that missing gather.

Protocol, two collectives on the caller's group (NCCL for CUDA masks, gloo for CPU masks):

1. Header: one ``all_gather`` of ``[num_reqs, vocab_size, width, ok]`` (int64, on the mask's
   device). Every rank learns every rank's sizes, so all ranks validate identically: a mismatch
   raises the same ``ValueError`` on every rank (no rank is left waiting in a collective) and the
   group stays usable. Reading the header is the one host synchronisation: the output sizes
   depend on it.
2. Payload: each rank packs its three tensors into ONE uint8 buffer padded to the largest
   ``num_reqs`` (block layout ``token_ids | counts | packed_mask``), so one collective moves
   everything. ``dst`` given: ``gather`` (only ``dst`` receives; torch's NCCL backend has had
   ``gather`` since about torch 1.11, below this package's floor), otherwise ``all_gather``.
   Receivers trim each rank's blocks to its ``num_reqs`` and concatenate in group-rank order:
   one copy per output byte, no further synchronisation.
"""

from __future__ import annotations

import torch
import torch.distributed as dist

from masks.api import as_integer
from masks.result import SamplingMask

_HEADER_FIELDS = 4  # num_reqs, vocab_size, width, ok


def gather_sampling_masks(
    mask: SamplingMask,
    group: dist.ProcessGroup | None = None,
    dst: int | None = None,
) -> SamplingMask | None:
    """Concatenate every rank's mask (rows in group-rank order) on ``dst`` or on every rank.

    Args:
        mask: this rank's mask; ``num_reqs`` may differ between ranks (0 included), while
            ``vocab_size`` and the width must agree on every rank.
        group: the process group (default: the world group). Every member must call this.
        dst: GLOBAL rank that receives the result (torch's convention for ``dst``); the other
            ranks return None. ``None``: every rank receives the result. Must be the same on
            every rank.

    Raises ``ValueError`` on every rank when the ranks' vocab sizes or widths differ, or when a
    rank passes an inconsistent mask. A rank that never calls this (it failed earlier) makes the
    others fail with the process group's timeout, not hang.
    """
    if not isinstance(mask, SamplingMask):
        raise TypeError(f"mask must be a SamplingMask, got {type(mask).__name__}")
    if not (dist.is_available() and dist.is_initialized()):
        raise RuntimeError("gather_sampling_masks needs an initialised torch.distributed group")
    group_rank = dist.get_rank(group)
    if group_rank < 0:
        raise ValueError("this process is not a member of the given process group")
    world_size = dist.get_world_size(group)
    receives = dst is None or _group_rank_of(group, dst, world_size) == group_rank
    device = mask.device

    problem = _inconsistency(mask)
    table = _exchange_header(mask, problem is None, group, world_size)
    num_reqs, vocab_size, width = _validate(table, problem)

    max_reqs = max(num_reqs)
    mask_bytes = (vocab_size + 7) // 8
    if max_reqs == 0:  # every rank agrees: nothing to move
        empty = SamplingMask.empty(0, vocab_size, width, device=device)
        return empty if receives else None

    layout = _Layout(max_reqs, width, mask_bytes)
    send = torch.empty(layout.total, dtype=torch.uint8, device=device)
    ids, counts, packed = layout.fields(send)
    ids[: mask.num_reqs].copy_(mask.token_ids)
    counts[: mask.num_reqs].copy_(mask.counts)
    packed[: mask.num_reqs].copy_(mask.packed_mask)

    received = (
        torch.empty((world_size, layout.total), dtype=torch.uint8, device=device)
        if receives
        else None
    )
    buffers = list(received.unbind(0)) if received is not None else None
    if dst is None:
        dist.all_gather(buffers, send, group=group)
    else:
        dist.gather(send, gather_list=buffers, dst=dst, group=group)
    if received is None:
        return None

    parts = [layout.fields(buffer) for buffer in received.unbind(0)]
    return SamplingMask(
        token_ids=torch.cat([p[0][:n] for p, n in zip(parts, num_reqs, strict=True)]),
        counts=torch.cat([p[1][:n] for p, n in zip(parts, num_reqs, strict=True)]),
        packed_mask=torch.cat([p[2][:n] for p, n in zip(parts, num_reqs, strict=True)]),
        vocab_size=vocab_size,
    )


class _Layout:
    """Byte layout of one rank's padded buffer: ``token_ids | counts | packed_mask`` blocks."""

    def __init__(self, max_reqs: int, width: int, mask_bytes: int) -> None:
        self.max_reqs, self.width, self.mask_bytes = max_reqs, width, mask_bytes
        self.ids_end = max_reqs * width * 4
        self.counts_end = self.ids_end + max_reqs * 4  # a multiple of 4: int32 views stay aligned
        # Rounded up to 4 bytes so every rank's buffer in [world_size, total] starts aligned.
        self.total = -(-(self.counts_end + max_reqs * mask_bytes) // 4) * 4

    def fields(self, buffer: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Typed views ``(token_ids [M, W], counts [M], packed_mask [M, P])`` into ``buffer``."""
        ids = buffer[: self.ids_end].view(torch.int32).view(self.max_reqs, self.width)
        counts = buffer[self.ids_end : self.counts_end].view(torch.int32)
        packed_end = self.counts_end + self.max_reqs * self.mask_bytes
        packed = buffer[self.counts_end : packed_end].view(self.max_reqs, self.mask_bytes)
        return ids, counts, packed


def _group_rank_of(group: dist.ProcessGroup | None, dst: int, world_size: int) -> int:
    """Group rank of global rank ``dst``; raises ValueError (on every rank) if not a member."""
    rank = as_integer(dst)
    if rank is None:
        raise TypeError(f"dst must be an int global rank or None, got {type(dst).__name__}")
    dst = rank
    if group is None or group is dist.group.WORLD:
        if not 0 <= dst < world_size:
            raise ValueError(f"dst must be a rank in [0, {world_size}), got {dst}")
        return dst
    try:
        return dist.get_group_rank(group, dst)
    except (ValueError, RuntimeError) as error:
        raise ValueError(f"dst={dst} is not a member of the given process group") from error


def _inconsistency(mask: SamplingMask) -> str | None:
    """Why this rank's mask cannot be gathered, or None (checked locally, reported to all)."""
    ids, counts, packed = mask.token_ids, mask.counts, mask.packed_mask
    if (ids.dtype, counts.dtype, packed.dtype) != (torch.int32, torch.int32, torch.uint8):
        return f"dtypes {ids.dtype}/{counts.dtype}/{packed.dtype}, expected int32/int32/uint8"
    if ids.dim() != 2 or counts.dim() != 1 or packed.dim() != 2:
        return f"ranks {ids.dim()}/{counts.dim()}/{packed.dim()}, expected 2/1/2"
    num_reqs = counts.shape[0]
    if ids.shape[0] != num_reqs or tuple(packed.shape) != (num_reqs, (mask.vocab_size + 7) // 8):
        return (
            f"shapes token_ids {list(ids.shape)}, counts {list(counts.shape)}, packed_mask "
            f"{list(packed.shape)} do not fit vocab_size {mask.vocab_size}"
        )
    if not ids.device == counts.device == packed.device:
        return f"devices {ids.device}/{counts.device}/{packed.device} differ"
    return None


def _exchange_header(
    mask: SamplingMask, ok: bool, group: dist.ProcessGroup | None, world_size: int
) -> list[list[int]]:
    """All ranks' ``[num_reqs, vocab_size, width, ok]`` rows: the one all_gather of sizes."""
    values = [mask.num_reqs, mask.vocab_size, mask.width, 1] if ok else [0, 0, 0, 0]
    on_cuda = mask.device.type == "cuda"
    # Pinned + non_blocking: the upload does not wait for the kernels queued before it.
    header = torch.tensor(values, dtype=torch.int64, device="cpu", pin_memory=on_cuda)
    header = header.to(mask.device, non_blocking=True)
    table = torch.empty((world_size, _HEADER_FIELDS), dtype=torch.int64, device=mask.device)
    dist.all_gather(list(table.unbind(0)), header, group=group)
    return table.tolist()  # the one host sync: output sizes depend on it


def _validate(table: list[list[int]], problem: str | None) -> tuple[list[int], int, int]:
    """``(num_reqs per rank, vocab_size, width)``; identical ValueErrors on every rank."""
    bad = [rank for rank, row in enumerate(table) if not row[3]]
    if bad:
        detail = f" (this rank: {problem})" if problem else ""
        raise ValueError(f"inconsistent SamplingMask on group rank(s) {bad}{detail}")
    for column, name in ((1, "vocab_size"), (2, "width")):
        values = [row[column] for row in table]
        if len(set(values)) > 1:
            per_rank = ", ".join(f"rank {rank}: {value}" for rank, value in enumerate(values))
            raise ValueError(f"{name} must agree on every rank, got {per_rank}")
    return [row[0] for row in table], table[0][1], table[0][2]
