"""Baselines the benchmarks compare the library with (not part of the package)."""

from __future__ import annotations

import numpy as np

from masks import SamplingMask


def per_row_loop_csr(mask: SamplingMask) -> tuple[np.ndarray, np.ndarray]:
    """The baseline: what one writes first, a Python loop over rows."""
    counts = mask.counts.numpy()
    token_ids = mask.token_ids.numpy()
    packed = mask.packed_mask.numpy()
    rows = []
    for r in range(mask.num_reqs):
        if counts[r] <= mask.width:
            rows.append(token_ids[r, : counts[r]])
        else:
            bits = np.unpackbits(packed[r], count=mask.vocab_size, bitorder="little")
            rows.append(np.flatnonzero(bits).astype(np.int32))
    offsets = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum([len(row) for row in rows], out=offsets[1:])
    return np.concatenate(rows), offsets
