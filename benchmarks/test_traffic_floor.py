"""The traffic-floor kernels compile cleanly for the GPUs they are run on, and the tile floor's
handoff is exact under the CuPy backend's CPU emulation (no GPU needed)."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest
import torch
import traffic_floor

from masks.backends import cuda_emulation
from masks.testing import NVCC_MISSING, NVCC_SKIPPABLE, nvcc_check


@pytest.mark.skipif(NVCC_SKIPPABLE, reason=NVCC_MISSING)
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_floor_kernels_compile_without_warnings_or_spills(arch: str, tmp_path: Path) -> None:
    names = traffic_floor.kernel_names(bulk=True)
    row_threads = {threads for threads, _, _ in traffic_floor.ROW_CONFIGS}
    chunk_threads = {threads for threads, _ in traffic_floor.CHUNK_CONFIGS}
    tile_threads = {threads for threads, _, _ in traffic_floor.TILE_CONFIGS}
    layouts = len(traffic_floor.BULK_CONFIGS) + len(row_threads) + len(chunk_threads)
    layouts += len(tile_threads)
    assert len(names) == 4 + 2 * layouts  # stream: 2 dtypes x 2 unrolls; the rest 2 dtypes each
    nvcc_check(traffic_floor.SOURCE, sorted(names.values()), arch, tmp_path)


def _folded_mask(logits: torch.Tensor, vecs: int) -> torch.Tensor:
    """The floors' mask: byte g folds (XOR) the bytes of vectors vecs * g .. vecs * g + vecs - 1."""
    words = logits.view(logits.shape[0], -1, 4 * vecs)
    folded = functools.reduce(torch.bitwise_xor, words.unbind(-1)).long() & 0xFFFFFFFF
    return ((folded ^ (folded >> 8) ^ (folded >> 16) ^ (folded >> 24)) & 0xFF).to(torch.uint8)


@pytest.mark.skipif(cuda_emulation.compiler() is None, reason="no C++ compiler")
@pytest.mark.parametrize(("vecs", "threads"), [(1, 256), (2, 256), (1, 512)])
def test_tile_floor_hands_each_row_to_its_last_tile(vecs: int, threads: int) -> None:
    """The tile floor, built by the CuPy backend's CPU emulation (blocks on two threads): every
    handoff writes the folded mask and the ids, and the last arriver's count is the row's set
    bits with its arrival counter back at zero, so a lost, doubled or unreset arrival fails. The
    tile counts start poisoned, so a last arriver that reads one not yet written fails when the
    threads' timing lets it (not every run: a wrong choice of the last tile may go unseen)."""
    ldcg = "template <class T> T __ldcg(const T* address) { return __ldcs(address); }\n"
    name = traffic_floor.kernel_names(bulk=False)["tile", vecs, threads]
    source = ldcg + traffic_floor.SOURCE.read_text()  # the emulation has compact.cu's built-ins
    kernel = cuda_emulation.Module(source, [name]).get_function(name)
    num_reqs, width = 5, 64
    groups_per_row = 16 * (320 if vecs == 1 else 160)  # 2 to 3 tiles per row
    tiles_per_row = -(-groups_per_row // (threads * 8 // vecs))
    generator = torch.Generator().manual_seed(threads + vecs)
    logits = torch.randint(
        -(2**31), 2**31 - 1, (num_reqs, groups_per_row * 4 * vecs), generator=generator,
        dtype=torch.int32,
    )  # fmt: skip
    expected_mask = _folded_mask(logits, vecs)
    arrivals = torch.zeros(num_reqs, dtype=torch.int32)
    for handoff in (0, 1, 2, 3, 4, 1):  # each launch starts from the counters the last left
        mask = torch.zeros(num_reqs, groups_per_row, dtype=torch.uint8)
        ids = torch.full((num_reqs, width), -7, dtype=torch.int32)
        counts = torch.full((num_reqs,), -1, dtype=torch.int32)
        tile_counts = torch.full((num_reqs * tiles_per_row,), -(2**30), dtype=torch.int32)
        sink = torch.zeros(num_reqs, dtype=torch.int32)
        tensors = (logits, mask, ids, counts, tile_counts, arrivals, sink)
        scalars = (groups_per_row, width, tiles_per_row, handoff)
        cuda_emulation.launch(
            kernel, num_reqs * tiles_per_row, threads, (*(t.data_ptr() for t in tensors), *scalars)
        )
        assert torch.equal(mask, expected_mask)
        assert torch.equal(ids, torch.arange(width, dtype=torch.int32).expand(num_reqs, width))
        if handoff:
            traffic_floor.check_handoff(f"h{handoff}", counts, mask, arrivals)
        else:
            assert counts.tolist() == list(range(num_reqs))
            assert not arrivals.any()
