"""An independent NumPy implementation of the contract, written from CONTRACT.md alone.

It checks the torch reference (which every backend is then compared with); it is deliberately
simple (a Python loop over rows) and shares no code with the package.
"""

from __future__ import annotations

import numpy as np
import torch


def numpy_contract(
    logits: torch.Tensor, num_sampled_tokens: torch.Tensor | None, max_num_kept: int
) -> dict[str, np.ndarray]:
    values = logits.detach().cpu().to(torch.float64).numpy()  # upcasting keeps finiteness
    num_reqs, vocab_size = values.shape
    width = min(max_num_kept, vocab_size)
    kept = np.isfinite(values)
    if num_sampled_tokens is not None:
        kept &= (num_sampled_tokens.cpu().numpy() > 0)[:, None]
    token_ids = np.full((num_reqs, width), -1, dtype=np.int32)
    rows = []
    for r in range(num_reqs):
        ids = np.flatnonzero(kept[r]).astype(np.int32)
        rows.append(ids)
        token_ids[r, : min(len(ids), width)] = ids[:width]
    counts = np.array([len(ids) for ids in rows], dtype=np.int32)
    offsets = np.concatenate([[0], np.cumsum(counts, dtype=np.int64)]).astype(np.int64)
    return {
        "token_ids": token_ids,
        "counts": counts,
        "packed_mask": np.packbits(kept, axis=1, bitorder="little").reshape(num_reqs, -1),
        "csr_ids": np.concatenate(rows).astype(np.int32) if rows else np.zeros(0, np.int32),
        "csr_offsets": offsets,
    }
