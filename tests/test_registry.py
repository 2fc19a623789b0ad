"""Backend registry: lazy imports, probing, caching, no silent fallback, `auto`."""

from __future__ import annotations

import gc
import subprocess
import sys
import threading
import types
import warnings
import weakref

import pytest
import torch
from suite import probe_cached

import masks
from masks import BackendUnavailableError, compact_sampling_mask, registry
from masks.testing import assert_masks_equal, make_logits, reference


@pytest.fixture
def fresh_registry(monkeypatch):
    """An empty probe/resolve cache, restored afterwards."""
    monkeypatch.setattr(registry, "_probe_failures", {})
    monkeypatch.setattr(registry, "_resolved", {})
    monkeypatch.setattr(registry, "_dtype_failures", {})
    monkeypatch.setattr(registry, "_modules", dict(registry._modules))
    return registry


def test_import_masks_imports_no_kernel_language() -> None:
    code = (
        "import sys, masks, masks.api, masks.registry, masks.testing; "
        "bad = sorted({'triton', 'cupy', 'numba'} & set(sys.modules)); "
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_torch_is_always_available_on_cpu() -> None:
    assert "torch" in masks.available_backends("cpu")
    assert "torch" not in masks.unavailable_reasons("cpu")


def test_every_unavailable_backend_has_a_reason() -> None:
    for device in ["cpu", "cuda"]:
        available = set(masks.available_backends(device))
        reasons = masks.unavailable_reasons(device)
        assert available.isdisjoint(reasons)
        assert available | set(reasons) == set(registry.BACKENDS)
        assert all(f"backend '{name}'" in reason for name, reason in reasons.items())


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the no-GPU path")
def test_no_gpu_means_no_cuda_backend() -> None:
    reasons = masks.unavailable_reasons("cuda")
    assert set(reasons) == set(registry.BACKENDS)
    assert "no CUDA device" in reasons["cupy"]


def assert_named(error: BaseException, backend: str) -> None:
    """The error names the backend that raised (a note: Python >= 3.11 has them)."""
    if sys.version_info >= (3, 11):
        assert f"raised by masks backend '{backend}'" in error.__notes__, error.__notes__


def _install_fake_backend(
    monkeypatch,
    name: str,
    module: types.ModuleType | None,
    gpu_only: bool = False,
    emulation_env: str | None = None,
) -> None:
    """Register backend ``name`` as ``module`` (``None``: its import fails)."""
    spec = registry.BackendSpec(name, None, gpu_only, emulation_env)
    monkeypatch.setitem(registry.BACKENDS, name, spec)
    monkeypatch.setitem(sys.modules, spec.module, module)


def _fake_module(compact) -> types.ModuleType:
    module = types.ModuleType("fake")
    module.VARIANTS = ("only",)
    module.unavailable_reason = lambda device: None
    module.compact = compact
    return module


def test_broken_backend_reports_its_failure(fresh_registry, monkeypatch) -> None:
    def compact(logits, num_sampled, out, variant):
        raise RuntimeError("driver exploded")

    _install_fake_backend(monkeypatch, "broken", _fake_module(compact))
    reasons = masks.unavailable_reasons("cpu")
    assert "driver exploded" in reasons["broken"]
    with pytest.raises(BackendUnavailableError, match="driver exploded") as caught:
        compact_sampling_mask(torch.randn(2, 5), backend="broken")
    assert isinstance(caught.value.__cause__, RuntimeError)


def test_wrong_backend_fails_its_probe(fresh_registry, monkeypatch) -> None:
    """Installed but computing garbage: unavailable, with the first difference in the reason."""
    from masks.backends import torch as reference_backend

    def compact(logits, num_sampled, out, variant):
        reference_backend.compact(logits, num_sampled, out)
        out.counts.add_(1)

    _install_fake_backend(monkeypatch, "wrong", _fake_module(compact))
    assert "counts differs at row 0" in masks.unavailable_reasons("cpu")["wrong"]


def test_import_error_is_reraised_for_a_named_backend(fresh_registry, monkeypatch) -> None:
    spec = registry.BackendSpec("missing", extra="missing", gpu_only=False)
    monkeypatch.setitem(registry.BACKENDS, "missing", spec)
    monkeypatch.setitem(sys.modules, spec.module, None)  # makes the import fail
    with pytest.raises(BackendUnavailableError, match=r"masks\[missing\]") as caught:
        compact_sampling_mask(torch.randn(2, 5), backend="missing")
    assert isinstance(caught.value.__cause__, ImportError)


def _raises_in_its_probe(logits, num_sampled, out, variant):
    raise RuntimeError("driver exploded")


@pytest.mark.parametrize("failure", ["import", "reason", "probe"])
def test_a_cached_probe_failure_holds_no_callers_tensor(
    fresh_registry, monkeypatch, failure: str
) -> None:
    """The failure is cached for the process; with its traceback it would keep the frames of
    the first call, and the caller's logits in them, alive as long."""
    module = _fake_module(_raises_in_its_probe)
    if failure == "reason":
        module.unavailable_reason = lambda device: "no such device"
    _install_fake_backend(monkeypatch, "failing", None if failure == "import" else module)

    def first_step() -> weakref.ref:
        logits = torch.randn(2, 5)
        with pytest.raises(BackendUnavailableError):
            compact_sampling_mask(logits, backend="failing")
        return weakref.ref(logits)

    logits = first_step()
    gc.collect()
    assert logits() is None, "the cached failure keeps the caller's logits alive"
    assert probe_cached("failing", torch.device("cpu"))
    with pytest.raises(BackendUnavailableError) as caught:  # still reported, with its cause
        compact_sampling_mask(torch.randn(2, 5), backend="failing")
    if failure == "probe":
        assert isinstance(caught.value.__cause__, RuntimeError)
        if sys.version_info >= (3, 11):  # the cause's traceback, kept as text
            assert "_raises_in_its_probe" in "".join(caught.value.__cause__.__notes__)


@pytest.mark.parametrize("error", [MemoryError(), torch.cuda.OutOfMemoryError("full")])
def test_a_probe_that_runs_out_of_memory_raises_and_is_not_cached(
    fresh_registry, monkeypatch, error: Exception
) -> None:
    """The device's state, not the backend's fault: the caller sees the error, and the backend
    is probed again on the next call rather than dropped for the life of the process."""
    from masks.backends import torch as reference_backend

    calls = []

    def compact(logits, num_sampled, out, variant):
        calls.append(1)
        if len(calls) == 1:
            raise error
        reference_backend.compact(logits, num_sampled, out)

    _install_fake_backend(monkeypatch, "tight", _fake_module(compact))
    logits = torch.randn(2, 5)
    with pytest.raises(type(error)):
        compact_sampling_mask(logits, backend="tight")
    assert not probe_cached("tight", torch.device("cpu"))
    assert_masks_equal(compact_sampling_mask(logits, backend="tight"), reference(logits))


def _install_gpu_only_backend(
    monkeypatch, name: str = "gpu", emulation_env: str | None = None
) -> None:
    """A backend ``name`` for CUDA tensors only (with ``emulation_env``, also CPU ones when it
    is set), computing the reference."""
    from masks.backends import torch as reference_backend

    module = _fake_module(reference_backend.compact)
    _install_fake_backend(monkeypatch, name, module, gpu_only=True, emulation_env=emulation_env)


def test_a_mistyped_variant_is_an_unknown_name_where_the_backend_cannot_run(
    fresh_registry, monkeypatch
) -> None:
    """A typo in a GPU backend's name is the contract's ValueError on a CPU-only machine too,
    not the backend's unavailability (which a correct name gets)."""
    _install_gpu_only_backend(monkeypatch)
    with pytest.raises(ValueError, match=r"backend 'gpu' has variants only, got 'typo'"):
        compact_sampling_mask(torch.randn(2, 5), backend="gpu:typo")
    with pytest.raises(BackendUnavailableError, match="CUDA tensors only"):
        compact_sampling_mask(torch.randn(2, 5), backend="gpu:only")


def test_an_emulation_switched_on_after_a_refusal_is_probed_anew(
    fresh_registry, monkeypatch
) -> None:
    """The refusal names the emulation switch; setting it then must work, not repeat the
    cached refusal."""
    _install_gpu_only_backend(monkeypatch, emulation_env="FAKE_SIM")
    monkeypatch.delenv("FAKE_SIM", raising=False)
    logits = torch.randn(2, 5)
    with pytest.raises(BackendUnavailableError, match=r"FAKE_SIM=1"):
        compact_sampling_mask(logits, backend="gpu")
    monkeypatch.setenv("FAKE_SIM", "1")
    assert_masks_equal(compact_sampling_mask(logits, backend="gpu"), reference(logits))


def test_an_emulation_refuses_cuda_tensors(fresh_registry, monkeypatch) -> None:
    """Under its switch a GPU backend runs its emulation, never its GPU kernels: CUDA tensors
    are refused, not run through host copies (whether or not a GPU is present)."""
    _install_gpu_only_backend(monkeypatch, emulation_env="FAKE_SIM")
    monkeypatch.setenv("FAKE_SIM", "1")
    failure = registry.probe_failure(registry.BACKENDS["gpu"], torch.device("cuda", 0))
    assert isinstance(failure, BackendUnavailableError)
    assert "runs its CPU emulation (FAKE_SIM=1), which takes CPU tensors only" in str(failure)
    assert registry.probe_failure(registry.BACKENDS["gpu"], torch.device("cpu")) is None


def test_named_backend_never_falls_back(fresh_registry, monkeypatch) -> None:
    def compact(logits, num_sampled, out, variant):
        raise RuntimeError("no")

    _install_fake_backend(monkeypatch, "broken", _fake_module(compact))
    monkeypatch.setitem(registry.AUTO_ORDER, "cpu", ["broken", "torch"])
    with pytest.raises(BackendUnavailableError):
        compact_sampling_mask(torch.randn(2, 5), backend="broken")
    # ... while auto skips it and still answers.
    assert compact_sampling_mask(torch.randn(2, 5), backend="auto").counts.tolist() == [5, 5]


def test_auto_never_picks_an_emulation(fresh_registry, monkeypatch) -> None:
    _install_gpu_only_backend(monkeypatch, "emulated", emulation_env="FAKE_SIM")
    monkeypatch.setenv("FAKE_SIM", "1")
    monkeypatch.setitem(registry.AUTO_ORDER, "cpu", ["emulated", "torch"])
    assert "emulated" in masks.available_backends("cpu")
    assert masks.is_emulated("emulated")
    assert registry._auto(torch.device("cpu"))[0].name == "torch"


def test_the_reference_is_not_probed(fresh_registry, monkeypatch) -> None:
    """torch defines the answer: a probe of it could only fail because of where it was first
    called, and would then take `auto` down with it."""

    def probe(spec, module, device):
        raise AssertionError(f"probed {spec.name}")

    monkeypatch.setattr(registry, "_probe", probe)
    logits = torch.randn(2, 50)
    assert "torch" in masks.available_backends("cpu")
    assert compact_sampling_mask(logits, backend="torch").counts.tolist() == [50, 50]
    assert compact_sampling_mask(logits, backend="auto").counts.tolist() == [50, 50]


def test_a_probe_ignores_the_callers_default_device(fresh_registry, monkeypatch) -> None:
    """A first call made under a default-device context (``with torch.device("meta")``, as
    model-building code does): the probe's own tensors stay on the CPU, so the backend is
    found working, and stays so outside the context."""
    from masks.backends import torch as reference_backend

    _install_fake_backend(monkeypatch, "fake", _fake_module(reference_backend.compact))
    logits = torch.randn(3, 40)
    with torch.device("meta"):
        result = compact_sampling_mask(logits, backend="fake")
    assert result.counts.device.type == "cpu" and result.counts.tolist() == [40, 40, 40]
    assert registry.probe_failure(registry.BACKENDS["fake"], "cpu") is None
    assert "fake" in masks.available_backends("cpu")


def test_auto_during_a_capture_passes_over_unprobed_backends(fresh_registry, monkeypatch) -> None:
    """While a CUDA graph is being captured nothing can be probed (a probe copies to and from
    the device): `auto` takes the first backend known to run and warns, a named backend raises,
    and neither is cached, so the first call after the capture probes. (The CUDA test of the
    same: tests/test_gpu_reliability.py.)"""
    from masks.backends import torch as reference_backend

    def fast(logits, num_sampled, out, variant):
        reference_backend.compact(logits, num_sampled, out)

    _install_fake_backend(monkeypatch, "fast", _fake_module(fast))
    monkeypatch.setitem(registry.AUTO_ORDER, "cuda", ["fast", "torch"])
    monkeypatch.setattr(registry, "_device_failure", lambda spec, device: None)
    probed = []
    monkeypatch.setattr(registry, "_probe", lambda spec, module, device: probed.append(spec.name))
    capturing = True
    monkeypatch.setattr(torch.cuda, "is_current_stream_capturing", lambda: capturing)
    cuda = torch.device("cuda", 0)
    with pytest.warns(UserWarning, match=r"chose 'torch' .* before 'fast' could be probed"):
        assert registry.resolve("auto", cuda).func is reference_backend.compact
    with pytest.raises(BackendUnavailableError, match="graph is being captured"):
        registry.resolve("fast", cuda)
    assert probed == [] and not registry._resolved
    assert not probe_cached("fast", cuda)
    capturing = False
    assert registry.resolve("auto", cuda).func is fast
    assert probed == ["fast"] and ("auto", cuda, None) in registry._resolved


def test_auto_passes_over_a_backend_that_raises_on_a_dtype(fresh_registry, monkeypatch) -> None:
    """The probe runs float32: a backend whose kernel does not compile for another dtype raises
    on that dtype's first call. `auto` never fails while the reference can run: it warns,
    answers with the next backend, and passes over the failing one for that dtype only; a
    named backend raises."""
    from masks.backends import torch as reference_backend

    calls = []

    def picky(logits, num_sampled, out, variant):
        calls.append(logits.dtype)
        if logits.dtype == torch.float64:
            raise RuntimeError("no float64 kernel")
        reference_backend.compact(logits, num_sampled, out)

    _install_fake_backend(monkeypatch, "picky", _fake_module(picky))
    monkeypatch.setitem(registry.AUTO_ORDER, "cpu", ["picky", "torch"])
    logits = make_logits(3, 70, [0, 9, 70], junk=True)
    with pytest.warns(UserWarning, match=r"passes over 'picky' for torch.float64 .*no float64"):
        result = compact_sampling_mask(logits.double(), backend="auto")
    assert_masks_equal(result, reference(logits.double()))
    calls.clear()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert_masks_equal(compact_sampling_mask(logits.double()), reference(logits.double()))
        assert_masks_equal(compact_sampling_mask(logits), reference(logits))
    assert calls == [torch.float32]  # float64 went straight to the reference
    with pytest.raises(RuntimeError, match="no float64 kernel") as caught:
        compact_sampling_mask(logits.double(), backend="picky")
    assert_named(caught.value, "picky:only")


@pytest.mark.parametrize(
    ("backend_error", "reference_fails"),
    [(RuntimeError("device lost"), True), (torch.OutOfMemoryError("CUDA out of memory"), False)],
    ids=["the-reference-fails-too", "out-of-memory"],
)
def test_auto_raises_the_backends_error_and_keeps_it(
    fresh_registry, monkeypatch, backend_error: Exception, reference_fails: bool
) -> None:
    """Nothing to pass over to (the reference raises too: a lost device), or nothing to pass
    over for (out of memory): `auto` raises the backend's own error, named, and keeps it."""
    from masks.backends import torch as reference_backend

    def failing(logits, num_sampled, out, variant):
        if logits.dtype == torch.float64:
            raise backend_error
        reference_backend.compact(logits, num_sampled, out)

    _install_fake_backend(monkeypatch, "failing", _fake_module(failing))
    monkeypatch.setitem(registry.AUTO_ORDER, "cpu", ["failing", "torch"])

    def reference_broke(*args):
        raise RuntimeError("reference broke")

    compact_sampling_mask(torch.randn(2, 9))  # probed (against the reference) and answering
    if reference_fails:
        monkeypatch.setattr(reference_backend, "_compact_rows", reference_broke)
    with pytest.raises(type(backend_error), match=str(backend_error)) as caught:
        compact_sampling_mask(torch.randn(2, 9, dtype=torch.float64))
    assert_named(caught.value, "failing:only")
    if reference_fails and sys.version_info >= (3, 11):
        assert "then the reference raised RuntimeError: reference broke" in caught.value.__notes__
    assert not registry._dtype_failures
    assert registry.backend_of(registry.resolve("auto", torch.device("cpu"), torch.float64)) == (
        "failing:only"
    )


def test_auto_raises_what_the_reference_raises(fresh_registry, monkeypatch) -> None:
    """Nothing is left to pass over to: the reference's error is the caller's, named."""
    from masks.backends import torch as reference_backend

    def broken(*args, **kwargs):
        raise RuntimeError("reference broke")

    monkeypatch.setattr(reference_backend, "_compact_rows", broken)
    with pytest.raises(RuntimeError, match="reference broke") as caught:
        compact_sampling_mask(torch.randn(2, 9), backend="auto")
    assert_named(caught.value, "torch:reference")


def test_probe_runs_once_under_concurrency(fresh_registry, monkeypatch) -> None:
    from masks.backends import torch as reference_backend

    calls = []

    def compact(logits, num_sampled, out, variant):
        calls.append(threading.get_ident())
        reference_backend.compact(logits, num_sampled, out)

    _install_fake_backend(monkeypatch, "counted", _fake_module(compact))
    logits = torch.randn(4, 100)
    results: list = [None] * 8

    def call(i: int) -> None:
        results[i] = compact_sampling_mask(logits, backend="counted").counts.tolist()

    threads = [threading.Thread(target=call, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == [[100] * 4] * 8
    assert len(calls) == 1 + 8  # one probe, then one call per thread


def test_variants_and_auto_order_names_are_registered() -> None:
    assert registry.variants("torch") == ("reference",)
    for order in registry.AUTO_ORDER.values():
        assert set(order) <= set(registry.BACKENDS)
        assert order[-1] == "torch"


def test_a_required_backend_that_fails_its_probe_runs_its_tests(
    monkeypatch, fresh_registry
) -> None:
    """The conformance suite skips a backend whose probe fails, unless CI's CPU run requires it
    (MASKS_REQUIRE_BACKENDS, set per tox env): then its tests run and fail, so a kernel that
    breaks the probe cannot turn its own backend's CI env green by being skipped. A CUDA device
    under test keeps the skip (the Numba simulator's env on a GPU host)."""
    import suite

    probe = registry.probe_failure

    def broken_torch(spec, device):
        if spec.name == "torch":
            return BackendUnavailableError("backend 'torch' failed its probe: wrong ids")
        return probe(spec, device)

    monkeypatch.setattr(registry, "probe_failure", broken_torch)

    def torch_params(device: torch.device) -> list:
        monkeypatch.setattr(suite, "DEVICE", device)
        params = suite.backend_params(device)
        return [p for p in params if p.values[0].split(":")[0] == "torch"]

    cpu, cuda = torch.device("cpu"), torch.device("cuda")
    monkeypatch.setattr(suite, "REQUIRED", set())
    [skipped] = torch_params(cpu)
    assert [mark.name for mark in skipped.marks] == ["skip"]
    monkeypatch.setattr(suite, "REQUIRED", {"torch"})
    [required] = torch_params(cpu)
    assert required.values == ("torch",) and not required.marks
    with pytest.raises(BackendUnavailableError, match="wrong ids"):  # what its tests then hit
        compact_sampling_mask(torch.zeros(1, 8), backend="torch")
    [on_cuda] = torch_params(cuda)
    assert [mark.name for mark in on_cuda.marks] == ["skip"]
