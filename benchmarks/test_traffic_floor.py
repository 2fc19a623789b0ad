"""The traffic-floor kernels compile cleanly for the GPUs they are run on (no GPU needed)."""

from __future__ import annotations

from pathlib import Path

import pytest
import traffic_floor

from masks.testing import NVCC_MISSING, NVCC_SKIPPABLE, nvcc_check


@pytest.mark.skipif(NVCC_SKIPPABLE, reason=NVCC_MISSING)
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_floor_kernels_compile_without_warnings_or_spills(arch: str, tmp_path: Path) -> None:
    names = traffic_floor.kernel_names(bulk=True)
    row_threads = {threads for threads, _, _ in traffic_floor.ROW_CONFIGS}
    chunk_threads = {threads for threads, _ in traffic_floor.CHUNK_CONFIGS}
    layouts = len(traffic_floor.BULK_CONFIGS) + len(row_threads) + len(chunk_threads)
    assert len(names) == 4 + 2 * layouts  # stream: 2 dtypes x 2 unrolls; the rest 2 dtypes each
    nvcc_check(traffic_floor.SOURCE, sorted(names.values()), arch, tmp_path)
