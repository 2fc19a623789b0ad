"""The suite's device under test, its backend x variant parameter lists and helpers that test
modules import (`conftest.py` holds only fixtures: a module named ``conftest`` cannot be
imported by name once ``benchmarks/conftest.py`` is collected in the same run).

Every registered backend appears in the parameter list; those that cannot run here are skipped
with their reason, so the pytest summary (-ra) says why each one did not run, except the
backends the environment requires (MASKS_REQUIRE_BACKENDS), whose tests then fail.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
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


def counting_calls(
    monkeypatch: pytest.MonkeyPatch, owner: object, name: str, delay_s: float = 0.0
) -> Callable[[], int]:
    """Wrap ``owner.name`` (restored after the test) to count its calls: put on a kernel
    language's compile entry point, it counts compiles whichever path of a backend asks.
    ``delay_s`` holds each call back first, so that threads racing to compile meet inside it
    even where the compile itself is cached and fast."""
    original = getattr(owner, name)
    calls = [0]

    def counted(*args, **kwargs):
        calls[0] += 1
        time.sleep(delay_s)
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
