"""`SamplingMask`: the three outputs of `compact_sampling_mask` and their host-side views."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import torch

from masks import csr

if TYPE_CHECKING:
    from masks.transfer import PendingCSR

MAX_COMPACT_SUPPORT = 2048
"""vLLM's cap on the compact width (the batch's largest top_k is capped at this)."""


@dataclass(frozen=True, eq=False)
class SamplingMask:
    """Support of each request's sampling distribution, computed on the logits' device.

    ``token_ids`` int32 ``[R, W]``: the first ``min(counts[r], W)`` kept column ids of row r in
    ascending order, then ``-1``. ``counts`` int32 ``[R]``: the full number of kept (finite)
    logits. ``packed_mask`` uint8 ``[R, ceil(V / 8)]``: bit ``j % 8`` of byte ``j // 8`` is
    set iff logit j is finite.
    """

    token_ids: torch.Tensor
    counts: torch.Tensor
    packed_mask: torch.Tensor
    vocab_size: int

    @classmethod
    def empty(
        cls,
        num_reqs: int,
        vocab_size: int,
        max_num_kept: int = MAX_COMPACT_SUPPORT,
        device: torch.device | str = "cpu",
    ) -> SamplingMask:
        """Uninitialised outputs to pass as ``out=`` (serving loops, CUDA graph capture)."""
        if num_reqs < 0 or vocab_size < 0 or max_num_kept < 0:  # per call: no min() or dict
            sizes = {"num_reqs": num_reqs, "vocab_size": vocab_size, "max_num_kept": max_num_kept}
            name, value = next((name, value) for name, value in sizes.items() if value < 0)
            raise ValueError(f"{name} must be >= 0, got {value}")
        width = min(max_num_kept, vocab_size)
        return cls(
            token_ids=torch.empty((num_reqs, width), dtype=torch.int32, device=device),
            counts=torch.empty((num_reqs,), dtype=torch.int32, device=device),
            packed_mask=torch.empty(
                (num_reqs, (vocab_size + 7) // 8), dtype=torch.uint8, device=device
            ),
            vocab_size=vocab_size,
        )

    @property
    def num_reqs(self) -> int:
        return self.counts.shape[0]

    @property
    def width(self) -> int:
        return self.token_ids.shape[1]

    @property
    def device(self) -> torch.device:
        return self.counts.device

    def to_csr(self) -> tuple[np.ndarray, np.ndarray]:
        """``(ids int32, offsets int64)``: row r's support is ``ids[offsets[r]:offsets[r+1]]``.

        Rows wider than W are decoded from the bitmask, so every row is complete. On CUDA only
        the counts and exactly the kept ids cross to the host (see `to_csr_async`), and ``ids``
        is a view of a pinned buffer of torch's host cache: copy it to keep it for long.
        """
        if self.counts.is_cuda:
            return self.to_csr_async().wait()
        # On the CPU, NumPy: at R = 512, V = 151936 with 50 ids per row 0.07 ms on the
        # development machine (no GPU), against 39 ms through the CUDA path's torch ops.
        counts = self.counts.cpu().numpy()
        wide_rows = np.flatnonzero(counts > self.width)
        wide_packed = None
        if wide_rows.size:
            index = torch.from_numpy(wide_rows).to(self.device)
            wide_packed = self.packed_mask[index].cpu().numpy()
        return csr.build_csr(
            counts, self.token_ids.cpu().numpy(), wide_rows, wide_packed, self.vocab_size
        )

    def to_csr_async(self) -> PendingCSR:
        """Queue the host step's first half on the current stream now; ``.wait()`` returns the CSR.

        For serving loops: call right after the kernel and ``wait()`` on the output thread. The
        counts' copy and the packing of the ids run behind the kernel; ``wait()`` copies the ids
        on a side stream, so it does not wait for the next step's kernels. The mask must not be
        overwritten before ``wait()`` returns (rows wider than W are decoded from it then).
        """
        from masks.transfer import PendingCSR

        return PendingCSR(self)

    def tolists(self) -> list[list[int]]:
        """One ascending list of kept ids per request (equal to the CSR rows)."""
        return csr.split_csr(*self.to_csr())

    def support(self, index: int) -> np.ndarray:
        """Kept ids of request ``index`` (int32, ascending), copying only that row (a new array:
        it never aliases the mask, which a serving loop's ``out=`` overwrites)."""
        try:
            index = range(self.num_reqs)[index]  # normalises negative indices
        except IndexError:
            raise IndexError(
                f"index must be in [-{self.num_reqs}, {self.num_reqs}) for "
                f"{self.num_reqs} request(s), got {index}"
            ) from None
        count = int(self.counts[index])
        if count <= self.width:
            return self.token_ids[index, :count].to("cpu", copy=True).numpy()
        packed = self.packed_mask[index : index + 1].cpu().numpy()
        return csr.decode_packed_rows(packed, self.vocab_size)[1]
