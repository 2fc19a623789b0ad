"""Backend registry: names, lazy imports, availability probes, and `auto` selection.

A backend is probed by actually running it on a tiny input and comparing with the reference,
so an installed-but-broken package reports itself unavailable with the reason. Probe results
are cached per (backend, device) behind a lock, so concurrent first calls probe once; they are
cached without their tracebacks, whose frames would hold the first caller's tensors, and an
out-of-memory error is raised as it is, not cached. The reference itself (``torch``) is not
probed: it defines the answer, and a probe of it could only fail because of the caller's
context. A probe copies to and from the device, which a CUDA graph
capture forbids: during a capture an unprobed backend is reported unavailable without caching
(name it once before capturing), and ``"auto"`` takes the first backend of its order known to
run, for that call only (a probe that fails because another thread is capturing is not cached
either). The probe runs float32: when a call of ``"auto"``'s backend raises on a dtype (a
kernel that does not compile for it, say) and the reference then answers it, ``"auto"`` passes
over that backend for the dtype on that device from then on, with a warning (`pass_over`).
An explicitly named backend never falls back; only ``"auto"`` chooses.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import threading
import traceback
import warnings
from dataclasses import dataclass
from functools import partial
from importlib import resources
from types import ModuleType
from typing import Protocol

import torch

from masks.errors import BackendUnavailableError
from masks.result import SamplingMask


class Kernel(Protocol):
    """What `resolve` returns: a backend's ``compact`` bound to a variant, named by ``backend``
    (``"name:variant"``, for errors and `pass_over`)."""

    backend: str

    def __call__(
        self, logits: torch.Tensor, num_sampled_tokens: torch.Tensor | None, out: SamplingMask
    ) -> None: ...


@dataclass(frozen=True)
class BackendSpec:
    name: str
    extra: str | None
    """pip extra that installs its dependency (``pip install masks[extra]``)."""
    gpu_only: bool
    emulation_env: str | None = None
    """Environment variable that, set to 1, runs the GPU kernels on the CPU (not for speed)."""

    @property
    def module(self) -> str:
        return f"masks.backends.{self.name}"

    def emulated(self) -> bool:
        return self.emulation_env is not None and os.environ.get(self.emulation_env) == "1"


BACKENDS: dict[str, BackendSpec] = {
    spec.name: spec
    for spec in (
        BackendSpec("torch", extra=None, gpu_only=False),
        BackendSpec("triton", extra="triton", gpu_only=True, emulation_env="TRITON_INTERPRET"),
        BackendSpec("cupy", extra="cupy", gpu_only=True, emulation_env="MASKS_CUPY_EMULATE"),
        BackendSpec("numba", extra="numba", gpu_only=True, emulation_env="NUMBA_ENABLE_CUDASIM"),
    )
}
AUTO = "auto"
REFERENCE = "torch"

_lock = threading.RLock()
_modules: dict[str, ModuleType] = {}
_probe_failures: dict[tuple[str, torch.device, bool], BaseException | None] = {}
_dtype_failures: dict[tuple[torch.device, torch.dtype], dict[str, str]] = {}
"""Backends passed over by `auto` per (device, dtype), with what their call raised (text: an
exception would keep its traceback's tensors alive)."""


def _device_key(device: torch.device | str) -> torch.device:
    device = torch.device(device)
    if device.type == "cuda" and device.index is None and torch.cuda.is_available():
        device = torch.device("cuda", torch.cuda.current_device())
    return device


def parse_backend(name: str) -> tuple[BackendSpec | None, str | None]:
    """``"triton:rowwise"`` -> (spec, "rowwise"); ``"auto"`` -> (None, None)."""
    if not isinstance(name, str):
        raise TypeError(f"backend must be a str, got {type(name).__name__}")
    base, colon, variant = name.partition(":")
    if base == AUTO:
        if colon:
            raise ValueError(f"backend 'auto' takes no variant, got {name!r}")
        return None, None
    if base not in BACKENDS:
        known = ", ".join([*BACKENDS, AUTO])
        raise ValueError(
            f"backend must be one of {known} (a backend optionally as 'name:variant'), got {name!r}"
        )
    if colon and not variant:
        raise ValueError(f"backend {name!r} names no variant after ':'")
    return BACKENDS[base], variant or None


def _import(spec: BackendSpec) -> ModuleType:
    with _lock:
        if spec.name not in _modules:
            try:
                _modules[spec.name] = importlib.import_module(spec.module)
            except ImportError as error:
                hint = f" (pip install 'masks[{spec.extra}]')" if spec.extra else ""
                raise BackendUnavailableError(
                    f"backend {spec.name!r} cannot be imported{hint}: {error}"
                ) from error
        return _modules[spec.name]


def _device_failure(spec: BackendSpec, device: torch.device) -> str | None:
    """Why ``spec`` cannot take tensors on ``device``, from the device and the emulation switch
    alone (before the backend is imported): a GPU backend under its switch runs its emulation,
    never its GPU kernels, so CUDA tensors are refused rather than copied through the CPU."""
    if spec.emulated() and device.type == "cuda":
        return (
            f"backend {spec.name!r} runs its CPU emulation ({spec.emulation_env}=1), which takes "
            "CPU tensors only; got a CUDA tensor (unset the switch to run its GPU kernels)"
        )
    if device.type == "cpu" and spec.gpu_only and not spec.emulated():
        hint = (
            f" (for its CPU emulation, set {spec.emulation_env}=1 before the backend is imported)"
            if spec.emulation_env
            else ""
        )
        return f"backend {spec.name!r} runs on CUDA tensors only; got a CPU tensor{hint}"
    if device.type == "cuda" and not torch.cuda.is_available():
        return f"backend {spec.name!r}: torch sees no CUDA device"
    if device.type not in ("cpu", "cuda"):
        return f"backend {spec.name!r} supports CPU and CUDA tensors, got device {device}"
    return None


class _NotProbedDuringCapture(BackendUnavailableError):
    """A backend not yet probed on a device whose current stream is capturing a CUDA graph."""


@contextlib.contextmanager
def _sync_debug_mode_off(device: torch.device):
    """CUDA's sync debug mode off while the probe copies and compares on the host (the mode is
    the process's: other threads' calls go unchecked meanwhile)."""
    mode = torch.cuda.get_sync_debug_mode() if device.type == "cuda" else 0
    if mode == 0:
        yield
        return
    torch.cuda.set_sync_debug_mode(0)
    try:
        yield
    finally:
        torch.cuda.set_sync_debug_mode(mode)


def _probe(spec: BackendSpec, module: ModuleType, device: torch.device) -> None:
    """Run the backend on a tiny input with every kind of non-finite value; raise on mismatch.

    The expected result comes from the reference module on the CPU, not through `resolve`. The
    caller's context is set aside (a default-device context, CUDA's sync debug mode), so that
    what is cached says whether the backend works, not where it was first called.
    """
    from masks.backends import torch as reference_backend
    from masks.testing import assert_masks_equal, make_logits

    with torch.device("cpu"), _sync_debug_mode_off(device):
        logits = make_logits(3, 77, supports=[5, 0, 77], dtype=torch.float32, seed=0, junk=True)
        num_sampled = torch.tensor([1, 0, 2], dtype=torch.int32)
        expected = SamplingMask.empty(3, 77, 9)
        reference_backend.compact(logits, num_sampled, expected)
        actual = SamplingMask.empty(3, 77, 9, device=device)
        module.compact(logits.to(device), num_sampled.to(device), actual, module.VARIANTS[0])
        assert_masks_equal(actual, expected)


def probe_failure(spec: BackendSpec, device: torch.device | str) -> BaseException | None:
    """Why ``spec`` cannot run on ``device`` (cached, but for an unprobed backend during a CUDA
    graph capture), or ``None`` when it can. A probe that runs out of memory raises that error,
    uncached, as `auto`'s calls do (`may_pass_over`)."""
    device = _device_key(device)
    key = (spec.name, device, spec.emulated())  # an emulation switched on later is probed anew
    with _lock:
        if key in _probe_failures:
            return _probe_failures[key]
        failure: BaseException | None
        reason = _device_failure(spec, device)
        if reason is not None:
            failure = BackendUnavailableError(reason)
        else:
            try:
                module = _import(spec)
                reason = module.unavailable_reason(device)
                if reason is not None:
                    raise BackendUnavailableError(f"backend {spec.name!r}: {reason}")
                if spec.name != REFERENCE:
                    if device.type == "cuda" and torch.cuda.is_current_stream_capturing():
                        return _NotProbedDuringCapture(
                            f"backend {spec.name!r} has not been probed on {device} and cannot "
                            "be while a CUDA graph is being captured: call it once (or "
                            f"masks.available_backends({str(device)!r})) before capturing"
                        )
                    _probe(spec, module, device)
                failure = None
            except BackendUnavailableError as error:
                failure = error
            except Exception as error:  # a broken install: report, never swallow silently
                if out_of_memory(error):
                    raise  # the device's state, not the backend's: the caller's, not cached
                # another thread's capture forbade the probe: not cached, as during our own
                captured = "captur" in str(error).lower()
                kind = _NotProbedDuringCapture if captured else BackendUnavailableError
                failure = kind(
                    f"backend {spec.name!r} failed its probe on {device}: "
                    f"{type(error).__name__}: {error}"
                )
                failure.__cause__ = error
                if captured:
                    return failure
        _probe_failures[key] = None if failure is None else _without_frames(failure)
        return _probe_failures[key]


def _without_frames(failure: BaseException) -> BaseException:
    """``failure`` with the tracebacks of it and of its causes dropped, theirs kept as text in a
    note: cached with their frames, they would keep the first caller's locals (its logits, on
    the GPU) alive for the life of the process."""
    error: BaseException | None = failure
    seen = set()
    while error is not None and id(error) not in seen:  # a chain set by hand may loop
        seen.add(id(error))
        if error.__traceback__ is not None:
            if error is not failure and hasattr(error, "add_note"):  # Python >= 3.11
                error.add_note("".join(traceback.format_tb(error.__traceback__)).rstrip())
            error.__traceback__ = None
        error = error.__cause__ or error.__context__
    return failure


def _load_auto_order() -> dict[str, list[str]]:
    text = resources.files("masks").joinpath("auto_order.json").read_text()
    return json.loads(text)["order"]


AUTO_ORDER: dict[str, list[str]] = _load_auto_order()
"""Fastest-first preference per device type, derived from committed benchmark results."""


def _auto(device: torch.device, dtype: torch.dtype | None = None) -> tuple[BackendSpec, list[str]]:
    """The first backend of the device's order that runs natively here (and has not raised on
    ``dtype``), and the backends before it that could not be probed now (during a CUDA graph
    capture): the choice is final when there are none."""
    unprobed = []
    passed_over = _dtype_failures.get((device, dtype), {})
    for name in AUTO_ORDER.get(device.type, [REFERENCE]):
        spec = BACKENDS[name]
        if spec.emulated() or name in passed_over:
            continue
        failure = probe_failure(spec, device)
        if failure is None:
            return spec, unprobed
        if isinstance(failure, _NotProbedDuringCapture):
            unprobed.append(name)
    return BACKENDS[REFERENCE], unprobed


_resolved: dict[tuple[str, torch.device, torch.dtype | None], Kernel] = {}


def resolve(name: str, device: torch.device, dtype: torch.dtype | None = None) -> Kernel:
    """The kernel that ``backend=name`` runs on ``device`` for logits of ``dtype``; raises if it
    cannot run there.

    The per-call path is one dict lookup once a (name, device, dtype) has been resolved.
    """
    try:
        kernel = _resolved.get((name, device, dtype))
    except TypeError:  # an unhashable backend: parse_backend's error names the argument
        parse_backend(name)
        raise
    if kernel is None:
        with _lock:  # a `pass_over` cannot come between the choice and its caching
            kernel, final = _resolve(name, device, dtype)
            if final:
                kernel = _resolved.setdefault((name, device, dtype), kernel)
    return kernel


def backend_of(kernel: Kernel) -> str:
    """``"name:variant"`` of a kernel `resolve` returned."""
    return kernel.backend


def may_pass_over(kernel: Kernel, error: Exception) -> bool:
    """Whether `auto` may answer with the reference when ``kernel`` raised ``error``: not when
    it is the reference, nor for an out-of-memory error (the caller's to see, and no reason to
    drop a backend for good)."""
    return not out_of_memory(error) and backend_of(kernel).partition(":")[0] != REFERENCE


def out_of_memory(error: BaseException) -> bool:
    """Whether ``error`` says the device (or host) ran out of memory: a state of the device,
    never a reason to drop a backend."""
    return isinstance(error, MemoryError | torch.cuda.OutOfMemoryError)


def pass_over(kernel: Kernel, device: torch.device, dtype: torch.dtype, error: Exception) -> None:
    """`auto`'s ``kernel`` raised on logits of ``dtype`` on ``device`` and the reference answered:
    record it and warn; `auto` resolves that dtype on that device again without its backend."""
    name = backend_of(kernel).partition(":")[0]
    device = _device_key(device)
    with _lock:
        _dtype_failures.setdefault((device, dtype), {})[name] = f"{type(error).__name__}: {error}"
        for key in list(_resolved):
            if key[0] == AUTO and key[2] == dtype and _device_key(key[1]) == device:
                del _resolved[key]
    warnings.warn(
        f"masks: backend 'auto' passes over {name!r} for {dtype} on {device} from now on: a "
        f"call raised {type(error).__name__}: {error} (the reference answered it)",
        stacklevel=4,
    )


def _resolve(
    name: str, device: torch.device, dtype: torch.dtype | None = None
) -> tuple[Kernel, bool]:
    """The kernel, and whether it is the final choice (`auto` during a CUDA graph capture may
    have had to pass over unprobed backends: then it is used for this call only)."""
    spec, variant = parse_backend(name)
    if device.type not in ("cpu", "cuda"):  # checked here, once per device: not per call
        raise ValueError(f"logits must be on a CPU or CUDA device, got {device}")
    device = _device_key(device)
    final = True
    if spec is None:
        spec, unprobed = _auto(device, dtype)
        if unprobed:
            final = False
            warnings.warn(
                f"masks: backend 'auto' on {device} chose {spec.name!r} for a call made during "
                f"a CUDA graph capture, before {', '.join(map(repr, unprobed))} could be probed "
                f"(call masks.available_backends({str(device)!r}) before capturing)",
                stacklevel=4,
            )
    if variant is not None:
        _check_variant(spec, variant)
    failure = probe_failure(spec, device)
    if failure is not None:
        raise BackendUnavailableError(str(failure)) from failure.__cause__ or failure
    module = _modules[spec.name]
    if variant is None:
        variant = module.VARIANTS[0]
    kernel = partial(module.compact, variant=variant)
    kernel.backend = f"{spec.name}:{variant}"  # for errors and `pass_over`
    return kernel, final


def _check_variant(spec: BackendSpec, variant: str) -> None:
    """Raise ValueError for a variant the backend does not have, before asking whether it can
    run here: a typo in a GPU backend's name is caught on a CPU-only machine too. (A backend
    that cannot be imported has no known variants; its import error is reported instead.)"""
    try:
        known = _import(spec).VARIANTS
    except BackendUnavailableError:
        return
    if variant not in known:
        raise ValueError(f"backend {spec.name!r} has variants {', '.join(known)}, got {variant!r}")


def variants(name: str) -> tuple[str, ...]:
    """The variant names of an importable backend (the first is its default)."""
    spec, _ = parse_backend(name)
    if spec is None:
        raise ValueError("'auto' has no variants")
    return _import(spec).VARIANTS


def available_backends(device: torch.device | str = "cpu") -> list[str]:
    """Backends that can run on ``device`` here (emulations included; see `is_emulated`)."""
    return [name for name, spec in BACKENDS.items() if probe_failure(spec, device) is None]


def unavailable_reasons(device: torch.device | str = "cpu") -> dict[str, str]:
    """For each backend that cannot run on ``device``: why."""
    return {
        name: str(failure)
        for name, spec in BACKENDS.items()
        if (failure := probe_failure(spec, device)) is not None
    }


def is_emulated(name: str) -> bool:
    """True when ``name`` runs through a CPU emulation (its timings mean nothing)."""
    spec, _ = parse_backend(name)
    return spec is not None and spec.emulated()
