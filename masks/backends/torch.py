"""Pure-torch reference: the single source of truth every other backend is compared with.

Vectorized over rows (no Python loop over requests) and free of host synchronisation and
host-to-device copies, so it also runs on CUDA, inside CUDA graphs too. Rows are processed in
chunks of at most 2**25 logits (one row where a row is longer), so the `[rows, V]` temporaries
do not grow with R (R=1024, V=262144 fp32 fits a 24 GB CPU machine).
"""

from __future__ import annotations

import torch

from masks.result import SamplingMask

VARIANTS = ("reference",)

# Largest number of logits processed at once; bounds the int64/int32 [rows, V] temporaries.
_CHUNK_ELEMENTS = 1 << 25


def unavailable_reason(device: torch.device) -> str | None:
    return None


def compact(
    logits: torch.Tensor,
    num_sampled_tokens: torch.Tensor | None,
    out: SamplingMask,
    variant: str = VARIANTS[0],
) -> None:
    num_reqs, vocab_size = logits.shape
    rows_per_chunk = max(1, _CHUNK_ELEMENTS // vocab_size)
    for start in range(0, num_reqs, rows_per_chunk):
        rows = slice(start, start + rows_per_chunk)
        active = None if num_sampled_tokens is None else num_sampled_tokens[rows] > 0
        _compact_rows(
            logits[rows], active, out.token_ids[rows], out.counts[rows], out.packed_mask[rows]
        )


def _compact_rows(
    logits: torch.Tensor,
    active: torch.Tensor | None,
    token_ids: torch.Tensor,
    counts: torch.Tensor,
    packed_mask: torch.Tensor,
) -> None:
    num_rows, vocab_size = logits.shape
    width = token_ids.shape[1]
    kept = torch.isfinite(logits)
    if active is not None:
        kept &= active.unsqueeze(1)
    counts.copy_(kept.sum(dim=1, dtype=torch.int32))

    # Bit j % 8 of byte j // 8, padding bits zero (NumPy's bitorder="little").
    bits = torch.zeros(num_rows, packed_mask.shape[1] * 8, dtype=torch.uint8, device=kept.device)
    bits[:, :vocab_size] = kept
    shifts = torch.arange(8, dtype=torch.uint8, device=kept.device)  # made on the device: no copy
    packed_mask.copy_((bits.view(num_rows, -1, 8) << shifts).sum(dim=2, dtype=torch.uint8))

    # The k-th kept column (k < W) goes to slot k; everything else lands in a spill slot W.
    rank = kept.cumsum(dim=1, dtype=torch.int32)
    slot = torch.where(kept & (rank <= width), rank - 1, width).to(torch.int64)
    columns = torch.arange(vocab_size, dtype=torch.int32, device=kept.device)
    padded = torch.full((num_rows, width + 1), -1, dtype=torch.int32, device=kept.device)
    padded.scatter_(1, slot, columns.expand(num_rows, vocab_size))
    token_ids.copy_(padded[:, :width])
