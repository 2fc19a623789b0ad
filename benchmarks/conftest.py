"""Fixtures of the benchmark suite, none autouse: `test_host_csr.py` needs none of them."""

from __future__ import annotations

import pytest
import torch

from masks import timing


@pytest.fixture(scope="session")
def bench_device() -> torch.device:
    """The device the kernels are benchmarked on: CUDA when present."""
    if torch.cuda.is_available():
        return torch.device("cuda", torch.cuda.current_device())
    return torch.device("cpu")


@pytest.fixture(scope="session")
def copy_ceiling(bench_device: torch.device) -> timing.CopyCeiling:
    """Measured once per session, only when a benchmark asks for it."""
    return timing.copy_ceiling(bench_device)
