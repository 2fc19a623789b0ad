"""Shared fixtures: the device under test, the emulation switches' guard and the reliability
tests' figure log (what test modules import lives in `suite`)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator

import pytest
import torch
from suite import DEVICE

from masks import registry


@pytest.fixture(scope="session")
def device() -> torch.device:
    return DEVICE


EMULATION_SWITCHES = tuple(
    spec.emulation_env for spec in registry.BACKENDS.values() if spec.emulation_env is not None
)


@pytest.fixture(autouse=True)
def _emulation_switches_stay_as_the_run_set_them() -> Iterator[None]:
    """Fail a test that changes a CPU emulation switch in ``os.environ`` (as `masks compare`
    without a GPU does, for the process it runs in): the backends imported after it would run
    emulated, and a test that skips under an emulation would skip for the rest of the run."""
    before = {name: os.environ.get(name) for name in EMULATION_SWITCHES}
    yield
    after = {name: os.environ.get(name) for name in EMULATION_SWITCHES}
    assert after == before, f"the test changed the emulation switches: {before} -> {after}"


@pytest.fixture
def record_figures(request: pytest.FixtureRequest) -> Callable[..., None]:
    """Print the figures a reliability test measured as one JSON line; with the environment
    variable MASKS_RELIABILITY_LOG set, also append that line to the file it names, so a GPU
    session leaves a record of them (cases fuzzed, bytes, drift, compile counts...)."""

    def record(**figures: object) -> None:
        line = json.dumps({"test": request.node.nodeid, **figures}, default=str)
        print(line)
        path = os.environ.get("MASKS_RELIABILITY_LOG")
        if path:
            with open(path, "a") as log:
                log.write(line + "\n")

    return record
