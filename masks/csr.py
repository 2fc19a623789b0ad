"""Host-side decoding of a sampling mask into CSR, shared by every backend.

Works on NumPy arrays only: no Python loop over rows, and the bitmask is unpacked only for the
rows whose support is wider than the compact width W (the compact ids are complete for the
others), so nothing `[R, V]`-sized is built unless such rows exist.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

DECODE_CHUNK_COLUMNS = 1 << 24
"""Bitmask columns decoded at once (`row_chunks`): a decode's scratch, tens of bytes per kept id
(its bits, then `nonzero`'s int64 rows and columns and, on the device, the ids' slots), stays
under about 1 GB however many rows are wider than W. Unchunked, 512 full rows of V = 151936
would need several GB: an RL batch sampled without top-k, beside a serving engine's KV cache."""


def group_positions(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Concatenated ranges ``starts[g] .. starts[g] + lengths[g] - 1``, without a Python loop."""
    group_offsets = np.cumsum(lengths) - lengths
    return np.arange(int(lengths.sum()), dtype=np.int64) + np.repeat(
        starts.astype(np.int64) - group_offsets, lengths
    )


def csr_offsets(counts: np.ndarray) -> np.ndarray:
    offsets = np.zeros(counts.shape[0] + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    return offsets


def row_chunks(num_rows: int, vocab_size: int) -> Iterator[slice]:
    """Consecutive slices of ``range(num_rows)`` of at most `DECODE_CHUNK_COLUMNS` columns each
    (one row at least): a loop over bounded chunks, never over rows."""
    step = max(1, DECODE_CHUNK_COLUMNS // max(1, vocab_size))
    return (slice(start, start + step) for start in range(0, num_rows, step))


def decode_packed_rows(packed_rows: np.ndarray, vocab_size: int) -> tuple[np.ndarray, np.ndarray]:
    """(row index into ``packed_rows``, column) of every set bit, row-major and ascending."""
    bits = np.unpackbits(packed_rows, axis=1, count=vocab_size, bitorder="little")
    rows, columns = np.nonzero(bits)
    return rows, columns.astype(np.int32)


def build_csr(
    counts: np.ndarray,
    token_ids: np.ndarray,
    wide_rows: np.ndarray,
    wide_packed: np.ndarray | None,
    vocab_size: int,
) -> tuple[np.ndarray, np.ndarray]:
    """Assemble ``(ids int32, offsets int64)`` from host copies of a mask's parts.

    ``wide_rows`` are the (ascending) row indices whose count exceeds the width of
    ``token_ids``; ``wide_packed`` holds exactly their bitmask rows (``None`` when there are
    none).
    """
    num_reqs, width = token_ids.shape
    counts = counts.astype(np.int64)
    offsets = csr_offsets(counts)
    row_starts = np.arange(num_reqs, dtype=np.int64) * width
    flat_ids = token_ids.reshape(-1)
    if not wide_rows.size:  # the decode-step case: every support fits in W
        return np.take(flat_ids, group_positions(row_starts, counts)), offsets

    narrow_counts = counts.copy()
    narrow_counts[wide_rows] = 0
    ids = np.empty(int(offsets[-1]), dtype=np.int32)
    ids[group_positions(offsets[:-1], narrow_counts)] = np.take(
        flat_ids, group_positions(row_starts, narrow_counts)
    )
    for chunk in row_chunks(wide_rows.size, vocab_size):
        rows = wide_rows[chunk]
        _, columns = decode_packed_rows(wide_packed[chunk], vocab_size)
        ids[group_positions(offsets[rows], counts[rows])] = columns
    return ids, offsets


def split_csr(ids: np.ndarray, offsets: np.ndarray) -> list[list[int]]:
    """One Python list per row; the slicing runs in C (``map``), not in a Python loop body."""
    flat = ids.tolist()
    bounds = offsets.tolist()
    return list(map(flat.__getitem__, map(slice, bounds[:-1], bounds[1:])))
