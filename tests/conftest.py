"""Shared fixtures: the device under test and the backend x variant parameter list.

Every registered backend appears in the parameter list; those that cannot run here are skipped
with their reason, so the pytest summary (-ra) says why each one did not run, except the
backends the environment requires (MASKS_REQUIRE_BACKENDS), whose tests then fail.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from typing import TypeVar

import pytest
import torch

from masks import registry

DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")
REQUIRED = {name for name in os.environ.get("MASKS_REQUIRE_BACKENDS", "").split(",") if name}
"""Backends that must run on the CPU when it is the device under test (the torch, triton,
cupy-emulated and numba tox envs name their own, for CI's CPU modes): one whose probe fails
there (a wrong result, a broken install, a missing emulation switch) fails the tests that use it
instead of being skipped. On a CUDA host the device under test is CUDA, this does not apply and
the registry's skips stand: under the emulation switches that those envs set, their backends
skip CUDA tensors, so native runs are ``pytest tests`` outside tox."""
if unknown := sorted(REQUIRED - set(registry.BACKENDS)):
    raise ValueError(f"MASKS_REQUIRE_BACKENDS names unknown backends: {unknown}")

Result = TypeVar("Result")


SLEEP_CYCLES = 1 << 27
"""GPU clock cycles a spin (`torch.cuda._sleep`) keeps a stream busy (~70 ms at 1.98 GHz): far
longer than any call's host dispatch or host step, so work queued behind it is seen to wait."""


def returns_while_the_stream_spins(call: Callable[[], Result]) -> tuple[bool, Result]:
    """Queue a spin on the current CUDA stream, then ``call()``: (whether the spin was still
    running when the call returned, its result). False means the call waited for the stream (a
    synchronisation, or waiting for work queued before it)."""
    torch.cuda._sleep(SLEEP_CYCLES)
    result = call()
    still_busy = not torch.cuda.current_stream().query()
    torch.cuda.synchronize()
    return still_busy, result


def counting_calls(monkeypatch: pytest.MonkeyPatch, owner: object, name: str) -> Callable[[], int]:
    """Wrap ``owner.name`` (restored after the test) to count its calls: put on a kernel
    language's compile entry point, it counts compiles whichever path of a backend asks."""
    original = getattr(owner, name)
    calls = [0]

    def counted(*args, **kwargs):
        calls[0] += 1
        return original(*args, **kwargs)

    monkeypatch.setattr(owner, name, counted)
    return lambda: calls[0]


def probe_cached(name: str, device: torch.device) -> bool:
    """Whether the registry holds a probe result of ``name`` on ``device`` (either emulation
    state)."""
    return any(key[:2] == (name, device) for key in registry._probe_failures)


def backend_params(device: torch.device = DEVICE, marks: tuple = ()) -> list:
    """Every backend x variant on ``device``, each with ``marks``; a backend that cannot run
    there is one parameter, skipped with the registry's reason unless it is REQUIRED (then its
    tests run and fail with that reason)."""
    params = []
    for name, spec in registry.BACKENDS.items():
        failure = registry.probe_failure(spec, device)
        if failure is not None and name in REQUIRED and device == DEVICE and device.type == "cpu":
            params.append(pytest.param(name, id=name, marks=marks))
            continue
        if failure is not None:
            skip = pytest.mark.skip(reason=str(failure))
            params.append(pytest.param(name, id=name, marks=[*marks, skip]))
            continue
        params += [
            pytest.param(f"{name}:{v}", id=f"{name}:{v}", marks=marks)
            for v in registry.variants(name)
        ]
    return params


def gpu_backend_params() -> list:
    """Every backend x variant on CUDA, marked `gpu`; without a GPU each backend is skipped with
    the registry's reason."""
    return backend_params(torch.device("cuda"), marks=(pytest.mark.gpu,))


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
