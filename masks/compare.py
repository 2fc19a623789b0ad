"""`python -m masks compare`: every backend on one grid of shapes, gated bit for bit, then timed.

Per shape, one set of seeded random logits (`masks.testing.make_logits`: random nonzero values;
at random positions ``-inf``, ``+inf`` and NaNs, none kept) is shared by every backend. Each
backend first fills an output prefilled with junk and must equal the reference bit for bit
(`masks.testing.assert_masks_equal`): a backend that fails is reported with the first
differing row/column and is not timed, because a wrong kernel's speed means nothing. Passing
backends are then timed with `masks.timing`:

- device time per call (CUDA events after an L2 flush and a spin that outlasts the call's host
  time; median of up to ``--reps`` repetitions, fewer when ``--budget-ms`` runs out on a large
  shape; measured once more when its repetitions spread past `masks.timing.UNSTEADY_SPREAD`),
- host dispatch per call (back-to-back calls, no synchronisation; the shape's backends in
  interleaved rounds, beside a probe of the host's own speed: a one-element torch fill),
- GB/s over the minimal traffic (`masks.timing.minimal_bytes`) and its percentage of the
  device-to-device copy ceiling measured at the start of the same run,
- speedups against the reference (``torch``) and the per-row design (``triton:rowwise``).

Calls pass a preallocated ``out=`` SamplingMask, so allocation is not timed: a serving loop or a
CUDA graph preallocates its outputs, and allocator cost would blur the kernel comparison. Every
repetition reuses the same input tensor: the L2 flush already makes each one read its logits
from memory, so rotating input copies is not needed.

Emulated backends (Triton interpreter, Numba CUDA simulator, the CuPy backend's CUDA C built for
the CPU) are gate-checked on shapes of up to `EMULATION_MAX_LOGITS` logits and timed once (no
dispatch figure); their figures are labelled "emulated: not performance" in the table, JSON and
CSV, and left out of the plots.

``--write-auto-order`` turns results into ``masks/auto_order.json``, the preference order of
``backend="auto"`` (see `auto_order_from_results`).
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import functools
import gzip
import hashlib
import importlib.metadata
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import torch

import masks
from masks import registry, timing
from masks.errors import BackendUnavailableError
from masks.result import SamplingMask
from masks.testing import assert_masks_equal, make_logits, reference

REFERENCE = registry.REFERENCE
ROWWISE = "triton:rowwise"
EMULATED_NOTE = "emulated: not performance"
EMULATION_MAX_LOGITS = 1 << 13
"""Emulations skip larger shapes: an interpreted call on 5 x 1027 logits already takes seconds."""

SUPPORTS: dict[str, int | None] = {"sparse": 50, "dense": 2048, "full": None}
"""Kept ids per row, spread at random over the row (capped at the vocabulary; None: all)."""
DTYPES = {
    "float32": torch.float32,
    "bfloat16": torch.bfloat16,
    "float16": torch.float16,
    "float64": torch.float64,
}
DTYPE_ALIASES = {"fp32": "float32", "bf16": "bfloat16", "fp16": "float16", "fp64": "float64"}

MIN_REPS = 10
DEFAULT_REPS = 200
DEFAULT_BUDGET_MS = 40.0
"""Wall-clock budget of one backend's device timing on one shape; its timed dispatch calls get
half of it (each dispatch batch also opens with `timing.WARM_CALLS` untimed calls)."""
DISPATCH_BATCHES = 5
"""Rounds of host-dispatch batches per shape: one batch of every timed backend and the probe."""
MAX_CALLS_PER_BATCH = 50
"""Keeps a batch's launches far below the CUDA launch-queue depth (about 1024)."""


@dataclass(frozen=True)
class Shape:
    """One input configuration; ``id`` names it in tables, plots and benchmark ids."""

    num_reqs: int
    vocab_size: int
    dtype: str
    support: str
    width: int

    @property
    def id(self) -> str:
        return f"R{self.num_reqs}-V{self.vocab_size}-{self.dtype}-{self.support}"

    @property
    def kept_per_row(self) -> int:
        kept = SUPPORTS[self.support]
        return self.vocab_size if kept is None else min(kept, self.vocab_size)

    @property
    def minimal_bytes(self) -> int:
        itemsize = DTYPES[self.dtype].itemsize
        return timing.minimal_bytes(self.num_reqs, self.vocab_size, self.width, itemsize)

    def make_logits(self, device: torch.device, seed: int) -> torch.Tensor:
        """The shape's seeded logits; the columns not kept hold -inf, +inf and NaNs (`junk`),
        so the gate rejects a kernel that keeps anything but -inf."""
        return make_logits(
            self.num_reqs,
            self.vocab_size,
            self.kept_per_row,
            dtype=DTYPES[self.dtype],
            seed=seed,
            device=device,
            junk=True,
        )


@dataclass(frozen=True)
class Grid:
    """The cross product of shapes to measure."""

    num_reqs: tuple[int, ...]
    vocab_sizes: tuple[int, ...]
    dtypes: tuple[str, ...]
    supports: tuple[str, ...]
    width: int = masks.MAX_COMPACT_SUPPORT

    def shapes(self) -> list[Shape]:
        """Dtype-major order, so kernels specialised per dtype compile once and stay warm."""
        return [
            Shape(num_reqs, vocab_size, dtype, support, self.width)
            for dtype in self.dtypes
            for vocab_size in self.vocab_sizes
            for support in self.supports
            for num_reqs in self.num_reqs
        ]


CUDA_GRID = Grid(
    num_reqs=(1, 4, 16, 64, 256, 512, 1024),
    vocab_sizes=(128256, 151936, 262144),
    dtypes=("float32", "bfloat16"),
    supports=("sparse", "dense", "full"),
)
CPU_GRID = Grid((1, 4, 64), (1027, 32000), ("float32",), ("sparse", "full"))
"""Small; its 1027-column shapes let the emulated GPU kernels take part (labelled as such)."""
QUICK_GRID = Grid((1, 5), (1027,), ("float32",), ("sparse", "full"), width=256)
"""Tiny: V not a multiple of 8 (mask padding bits), full rows wider than W (truncated ids)."""


@dataclass
class Result:
    """One backend on one shape: the gate's verdict and the measurements (times in us)."""

    backend: str
    num_reqs: int
    vocab_size: int
    dtype: str
    support: str
    width: int
    emulated: bool
    status: str = "ok"
    """ok, mismatch (gate failed), error (raised), or skipped (emulated, shape too large)."""
    detail: str = ""
    note: str = ""
    device_time_us: float | None = None
    device_time_p10_us: float | None = None
    device_time_p90_us: float | None = None
    reps: int = 0
    first_spread: float | None = None
    """p90 / p10 of a first device-time measurement that passed `timing.UNSTEADY_SPREAD`, so the
    cell was measured again (the steadier measurement is the one recorded)."""
    dispatch_us: float | None = None
    host_probe_us: float | None = None
    """Host time per call of a one-element torch fill on the same device, timed in the same
    rounds as ``dispatch_us`` (`host_probe`): the host's own speed while it was measured."""
    minimal_bytes: int = 0
    gbps: float | None = None
    pct_of_ceiling: float | None = None
    speedup_vs_torch: float | None = None
    speedup_vs_rowwise: float | None = None

    @classmethod
    def for_shape(cls, backend: str, shape: Shape, emulated: bool) -> Result:
        return cls(
            backend=backend,
            num_reqs=shape.num_reqs,
            vocab_size=shape.vocab_size,
            dtype=shape.dtype,
            support=shape.support,
            width=shape.width,
            emulated=emulated,
            note=EMULATED_NOTE if emulated else "",
            minimal_bytes=shape.minimal_bytes,
        )

    @property
    def timed(self) -> bool:
        """Has performance figures (passed the gate and is not an emulation)."""
        return self.status == "ok" and not self.emulated


Fill = Callable[[torch.Tensor, SamplingMask], None]
"""``fill(logits, out)``: compute every row of ``out`` (all rows active)."""


@dataclass(frozen=True)
class Candidate:
    """A backend under test, as the harness calls it."""

    name: str
    run: Fill
    emulated: bool = False


def registry_candidate(name: str) -> Candidate:
    """A registered backend called through the public API, argument checks included."""

    def run(logits: torch.Tensor, out: SamplingMask) -> None:
        masks.compact_sampling_mask(logits, None, out.width, backend=name, out=out)

    return Candidate(name, run, masks.is_emulated(name))


def injected_candidate(name: str, kernel: registry.Kernel) -> Candidate:
    """A kernel with the backend-module signature ``kernel(logits, num_sampled_tokens, out)``."""
    return Candidate(name, lambda logits, out: kernel(logits, None, out))


def default_backends(device: torch.device) -> list[str]:
    """Every backend that runs on ``device`` here: its default, then ``name:variant`` for others."""
    names = []
    for base in masks.available_backends(device):
        _, *others = registry.variants(base)
        names += [base, *(f"{base}:{variant}" for variant in others)]
    return names


def check_backends(names: Sequence[str], device: torch.device) -> None:
    """Raise with the reason when a requested name is unknown or cannot run on ``device``."""
    unavailable = masks.unavailable_reasons(device)
    for name in names:
        spec, variant = registry.parse_backend(name)
        if spec is None:
            raise ValueError("'auto' is not a backend to compare; name the backends")
        if spec.name in unavailable:
            raise BackendUnavailableError(unavailable[spec.name])
        if variant is not None and variant not in registry.variants(spec.name):
            known = ", ".join(registry.variants(spec.name))
            raise ValueError(f"backend {spec.name!r} has variants {known}, got {variant!r}")


@dataclass(frozen=True)
class Case:
    """One shape's inputs and the reference answer (on the CPU: checks copy only the output)."""

    shape: Shape
    logits: torch.Tensor
    expected: SamplingMask


def prepare_case(shape: Shape, device: torch.device, seed: int) -> Case:
    logits = shape.make_logits(device, seed)
    expected = reference(logits, max_num_kept=shape.width)
    on_cpu = SamplingMask(
        expected.token_ids.cpu(),
        expected.counts.cpu(),
        expected.packed_mask.cpu(),
        shape.vocab_size,
    )
    return Case(shape, logits, on_cpu)


def junk_filled_output(shape: Shape, device: torch.device) -> SamplingMask:
    """An ``out=`` holding garbage, so a kernel that skips an entry fails the gate."""
    out = SamplingMask.empty(shape.num_reqs, shape.vocab_size, shape.width, device=device)
    out.token_ids.fill_(0x5A5A5A5A)
    out.counts.fill_(-7)
    out.packed_mask.fill_(0xA5)
    return out


def gate(candidate: Candidate, case: Case, out: SamplingMask) -> tuple[str, str]:
    """Run once into ``out`` and compare bit for bit: ``(status, detail)``."""
    try:
        candidate.run(case.logits, out)
        assert_masks_equal(out, case.expected)
    except AssertionError as error:
        return "mismatch", str(error)
    except Exception as error:  # a crashing backend is reported, the others still run
        return "error", f"{type(error).__name__}: {error}"
    return "ok", ""


def host_probe(device: torch.device) -> timing.Call:
    """A one-element torch fill on ``device``: about the cheapest launch from Python, timed beside
    the backends' dispatch so that a slow spell of the host shows as such."""
    return torch.zeros(1, device=device).zero_


def measure(
    candidate: Candidate,
    case: Case,
    ceiling: timing.CopyCeiling,
    max_reps: int = DEFAULT_REPS,
    budget_s: float = DEFAULT_BUDGET_MS / 1e3,
    l2_flush: str = timing.L2_FLUSHES[0],
) -> Result:
    """Gate one backend on one case, then (only if it passed) time it."""
    return measure_candidates([candidate], case, ceiling, max_reps, budget_s, l2_flush)[0]


def measure_candidates(
    candidates: Sequence[Candidate],
    case: Case,
    ceiling: timing.CopyCeiling,
    max_reps: int = DEFAULT_REPS,
    budget_s: float = DEFAULT_BUDGET_MS / 1e3,
    l2_flush: str = timing.L2_FLUSHES[0],
    progress: _PlainProgress | None = None,
) -> list[Result]:
    """Gate each backend on one case and time those that passed: device time one backend after
    the other, then host dispatch of them all and the host probe in interleaved rounds."""
    device = case.logits.device
    batch_budget = budget_s / 2 / DISPATCH_BATCHES
    results, dispatched = [], []
    for candidate in candidates:
        if progress is not None:
            progress.set_postfix_str(f"{candidate.name} {case.shape.id}")
        result, call, seconds_each = _gate_and_time_device(
            candidate, case, ceiling, max_reps, budget_s, l2_flush
        )
        results.append(result)
        if call is not None:
            calls = timing.reps_within(batch_budget, seconds_each, 1, MAX_CALLS_PER_BATCH)
            dispatched.append((result, call, calls))
        if progress is not None:
            progress.update()
    if dispatched:
        if progress is not None:
            progress.set_postfix_str(f"dispatch {case.shape.id}")
        probe = (host_probe(device), MAX_CALLS_PER_BATCH)
        probe_time, *dispatch = timing.interleaved_dispatch_times(
            [probe, *((call, calls) for _, call, calls in dispatched)], device, DISPATCH_BATCHES
        )
        for (result, _, _), measured in zip(dispatched, dispatch, strict=True):
            result.dispatch_us = measured.median_us
            result.host_probe_us = probe_time.median_us
    return results


def _gate_and_time_device(
    candidate: Candidate,
    case: Case,
    ceiling: timing.CopyCeiling,
    max_reps: int,
    budget_s: float,
    l2_flush: str,
) -> tuple[Result, timing.Call | None, float]:
    """Gate, then device-time a backend that passed: ``(result, call, seconds per call)``, the
    call None when it is not to be dispatch-timed (failed, skipped or emulated)."""
    shape, device = case.shape, case.logits.device
    result = Result.for_shape(candidate.name, shape, candidate.emulated)
    if candidate.emulated and shape.num_reqs * shape.vocab_size > EMULATION_MAX_LOGITS:
        result.status = "skipped"
        result.detail = f"emulations run only on shapes of up to {EMULATION_MAX_LOGITS} logits"
        return result, None, 0.0
    out = junk_filled_output(shape, device)
    result.status, result.detail = gate(candidate, case, out)
    if result.status != "ok":
        return result, None, 0.0
    call = functools.partial(candidate.run, case.logits, out)
    if candidate.emulated:  # one timed call: enough to show the figures mean nothing
        _record_device_time(result, timing.device_time(call, device, reps=1))
        return result, None, 0.0
    seconds_each = timing.seconds_per_call(call, device, l2_flush=l2_flush)
    reps = timing.reps_within(budget_s, seconds_each, MIN_REPS, max_reps)
    measured, result.first_spread = timing.steady_device_time(call, device, reps, l2_flush)
    _record_device_time(result, measured)
    result.gbps = timing.gbps(result.minimal_bytes, result.device_time_us)
    result.pct_of_ceiling = 100 * result.gbps / ceiling.gbps
    return result, call, seconds_each


def _record_device_time(result: Result, device_time: timing.Timing) -> None:
    result.device_time_us = device_time.median_us
    result.device_time_p10_us = device_time.p10_us
    result.device_time_p90_us = device_time.p90_us
    result.reps = device_time.samples


def add_speedups(shape_results: Sequence[Result]) -> None:
    """Speedups of one shape's timed results over torch and over the per-row design."""
    times = {r.backend: r.device_time_us for r in shape_results if r.timed}
    for result in shape_results:
        if result.timed:
            own = times[result.backend]
            result.speedup_vs_torch = times[REFERENCE] / own if REFERENCE in times else None
            result.speedup_vs_rowwise = times[ROWWISE] / own if ROWWISE in times else None


@dataclass(frozen=True)
class Config:
    """What `run` measures and how."""

    grid: Grid
    backends: tuple[str, ...]
    device: torch.device
    seed: int = 0
    max_reps: int = DEFAULT_REPS
    budget_s: float = DEFAULT_BUDGET_MS / 1e3
    command: str = ""
    progress: bool = True
    time_limit_s: float | None = None
    """Start no new shape after this many seconds (outputs still get written)."""
    l2_flush: str = timing.L2_FLUSHES[0]
    """How the L2 is emptied before each timed call (`masks.timing`), ceiling included."""

    def settings(self) -> dict[str, Any]:
        return {
            "backends": list(self.backends),
            "num_reqs": list(self.grid.num_reqs),
            "vocab_sizes": list(self.grid.vocab_sizes),
            "dtypes": list(self.grid.dtypes),
            "supports": {name: SUPPORTS[name] for name in self.grid.supports},
            "width": self.grid.width,
            "device": str(self.device),
            "seed": self.seed,
            "max_reps": self.max_reps,
            "budget_ms": self.budget_s * 1e3,
            "time_limit_s": self.time_limit_s,
            "timed_with_out": True,
            "l2_flush_bytes_min": timing.L2_FLUSH_MIN_BYTES,
            "l2_flush": self.l2_flush,
        }


@dataclass
class Report:
    """Everything one run produced; `to_dict` is the JSON file's content."""

    environment: dict[str, Any]
    settings: dict[str, Any]
    copy_ceiling: timing.CopyCeiling
    results: list[Result]
    stopped: str | None = None
    """Why the run ended early (its results so far are kept), or None when it completed."""

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Report:
        """The report a results JSON holds (`to_dict`'s inverse): plots and tables can be
        redrawn from committed results."""
        return cls(
            data["environment"],
            data["settings"],
            timing.CopyCeiling(**data["copy_ceiling"]),
            [Result(**result) for result in data["results"]],
            data["stopped"],
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": 1,
            "environment": self.environment,
            "settings": self.settings,
            "stopped": self.stopped,
            "copy_ceiling": dataclasses.asdict(self.copy_ceiling),
            "results": [dataclasses.asdict(result) for result in self.results],
        }


def read_json(path: Path) -> Any:
    """The JSON at ``path``, a ``.json`` file or a gzip-compressed ``.json.gz`` one."""
    if path.name.endswith(".gz"):
        with gzip.open(path, "rt", encoding="utf-8") as file:
            return json.load(file)
    return json.loads(path.read_text(encoding="utf-8"))


def run(config: Config, extra_backends: Mapping[str, registry.Kernel] | None = None) -> Report:
    """Gate and time every backend of ``config`` on every shape of its grid.

    ``extra_backends`` maps names to kernels with the backend-module signature
    ``kernel(logits, num_sampled_tokens, out)``, measured after the registered ones: the hook
    through which tests inject a deliberately wrong kernel.
    """
    candidates = [registry_candidate(name) for name in config.backends]
    candidates += [injected_candidate(n, k) for n, k in (extra_backends or {}).items()]
    ceiling = timing.copy_ceiling(config.device, l2_flush=config.l2_flush)
    shapes = config.grid.shapes()
    results: list[Result] = []
    stopped = None
    limit = math.inf if config.time_limit_s is None else config.time_limit_s
    deadline = time.monotonic() + limit
    with _progress(len(shapes) * len(candidates), config.progress) as progress:
        for shape in shapes:
            if time.monotonic() >= deadline:
                stopped = f"time limit of {config.time_limit_s:g} s reached before {shape.id}"
                break
            try:
                results += _measure_shape(shape, candidates, config, ceiling, progress)
            except Exception as error:  # e.g. a kernel fault that broke the CUDA context
                stopped = f"stopped at {shape.id}: {type(error).__name__}: {error}"
                break
    if stopped:
        print(f"masks compare: {stopped}", file=sys.stderr)
    env = environment(config.device, config.command)
    return Report(env, config.settings(), ceiling, results, stopped)


def _measure_shape(
    shape: Shape,
    candidates: Sequence[Candidate],
    config: Config,
    ceiling: timing.CopyCeiling,
    progress: _PlainProgress,
) -> list[Result]:
    case = prepare_case(shape, config.device, config.seed)
    shape_results = measure_candidates(
        candidates, case, ceiling, config.max_reps, config.budget_s, config.l2_flush, progress
    )
    add_speedups(shape_results)
    return shape_results


class _PlainProgress:
    """Progress lines on stderr when tqdm is not installed (the tqdm methods used here)."""

    def __init__(self, total: int) -> None:
        self.total, self.done = total, 0

    def set_postfix_str(self, label: str) -> None:
        print(f"[{self.done + 1}/{self.total}] {label}", file=sys.stderr, flush=True)

    def update(self) -> None:
        self.done += 1

    def close(self) -> None:
        pass


class _NoProgress(_PlainProgress):
    def set_postfix_str(self, label: str) -> None:
        pass


@contextmanager
def _progress(total: int, enabled: bool) -> Iterator[_PlainProgress]:
    """A tqdm bar on stderr, plain lines when tqdm is missing, or nothing when disabled."""
    if not enabled:
        bar: Any = _NoProgress(total)
    else:
        try:
            from tqdm import tqdm
        except ImportError:
            bar = _PlainProgress(total)
        else:
            bar = tqdm(total=total, file=sys.stderr, unit="measurement", dynamic_ncols=True)
    try:
        yield bar
    finally:
        bar.close()


def environment(device: torch.device, command: str) -> dict[str, Any]:
    """Machine, software and code version of a run (what a reader needs to reproduce it). The
    GPU's UUID tells whether two runs shared a GPU (hosts of one model differ by a few percent;
    host names may not tell them apart)."""
    env: dict[str, Any] = {
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "command": command,
        "device_type": device.type,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "host": platform.node(),
        "libraries": _library_versions(),
        "unavailable_backends": masks.unavailable_reasons(device),
        "git_commit": _git("rev-parse", "HEAD"),
        "code_sha256": code_fingerprint(),
        "git_dirty": package_changed(),
        "emulation": {
            spec.emulation_env: os.environ.get(spec.emulation_env)
            for spec in registry.BACKENDS.values()
            if spec.emulation_env is not None
        },
    }
    if device.type == "cuda":
        props = torch.cuda.get_device_properties(device)
        env.update(
            device_name=props.name,
            device_uuid=str(getattr(props, "uuid", "")) or None,
            sm_count=props.multi_processor_count,
            l2_bytes=getattr(props, "L2_cache_size", None),
            memory_bytes=props.total_memory,
            compute_capability=f"{props.major}.{props.minor}",
            cuda_runtime=torch.version.cuda,
            driver=_nvidia_driver(device),
        )
    else:
        env.update(device_name=_cpu_name(), cpu_threads=torch.get_num_threads())
    return env


_DISTRIBUTIONS = (
    "torch",
    "triton",
    "cupy-cuda13x",
    "cupy-cuda12x",
    "numba",
    "numba-cuda",
    "numpy",
    "matplotlib",
)


def _library_versions() -> dict[str, str]:
    """Installed versions, read from package metadata (nothing gets imported)."""
    versions = {}
    for name in _DISTRIBUTIONS:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    return versions


def _command_output(*command: str, cwd: Path | None = None) -> str | None:
    try:
        done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def code_fingerprint() -> str:
    """SHA-256 over the package's source files (path and bytes, in path order): names the code
    that ran even where the checkout has no ``.git`` or a stale one (a copied tree)."""
    package = Path(masks.__file__).resolve().parent
    digest = hashlib.sha256()
    sources = (".py", ".cu", ".h", ".json")
    for path in sorted(p for p in package.rglob("*") if p.suffix in sources):
        digest.update(path.relative_to(package).as_posix().encode() + b"\0")
        digest.update(path.read_bytes())
    return digest.hexdigest()


_PACKAGE_DIR = Path(__file__).resolve().parent


def package_changed(package: Path = _PACKAGE_DIR) -> bool | None:
    """Whether the package's files differ from the commit (changed, or new under it), None
    without git: files elsewhere in the checkout, such as a wheel carried to a device, leave the
    commit naming the code that ran."""
    status = _command_output("git", "status", "--porcelain", "--", ".", cwd=package)
    return None if status is None else bool(status)


def _git(*args: str) -> str | None:
    return _command_output("git", *args, cwd=_PACKAGE_DIR)


def _nvidia_driver(device: torch.device) -> str | None:
    index = device.index if device.index is not None else torch.cuda.current_device()
    query = ("--query-gpu=driver_version", "--format=csv,noheader", f"--id={index}")
    return _command_output("nvidia-smi", *query)


def _cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


# --- rendering -------------------------------------------------------------------------------


def _cell(value: float | None, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def status_text(result: Result) -> str:
    if result.status != "ok":
        return f"{result.status}: {result.detail}"
    notes = [result.note] if result.note else []
    if result.first_spread is not None:
        kept = timing.spread(result.device_time_p10_us, result.device_time_p90_us)
        notes.append(f"re-measured: p90 {result.first_spread:.1f}x p10 at first, {kept:.1f}x kept")
    return f"ok ({'; '.join(notes)})" if notes else "ok"


Column = tuple[str, Callable[[Any], str]]
"""A table column: header and how to render one row's cell."""
_LEFT_ALIGNED = {"backend", "dtype", "support", "status"}

TABLE_COLUMNS: tuple[Column, ...] = (
    ("backend", lambda r: r.backend),
    ("R", lambda r: str(r.num_reqs)),
    ("V", lambda r: str(r.vocab_size)),
    ("dtype", lambda r: r.dtype),
    ("support", lambda r: r.support),
    ("time us", lambda r: _cell(r.device_time_us, ".1f")),
    ("dispatch us", lambda r: _cell(r.dispatch_us, ".1f")),
    ("probe us", lambda r: _cell(r.host_probe_us, ".1f")),
    ("GB/s", lambda r: _cell(r.gbps, ".0f" if r.gbps is None or r.gbps >= 10 else ".2f")),
    ("% ceil", lambda r: _cell(r.pct_of_ceiling, ".1f")),
    ("x torch", lambda r: _cell(r.speedup_vs_torch, ".2f")),
    ("x rowwise", lambda r: _cell(r.speedup_vs_rowwise, ".2f")),
    ("status", status_text),
)
"""The terminal table: one line per shape x backend."""


def _geometric_mean(values: Sequence[float | None]) -> float | None:
    present = [value for value in values if value is not None]
    return math.exp(sum(map(math.log, present)) / len(present)) if present else None


def _median(values: Sequence[float | None]) -> float | None:
    present = [value for value in values if value is not None]
    return statistics.median(present) if present else None


LARGE_BATCH = 256
"""Rows from which a kernel should be bandwidth-bound (the summary's "% ceil" column)."""


def _lowest_large_batch_percent(results: Sequence[Result]) -> float | None:
    large = [r.pct_of_ceiling for r in results if r.timed and r.num_reqs >= LARGE_BATCH]
    return min(large, default=None)


SUMMARY_COLUMNS: tuple[Column, ...] = (
    ("backend", lambda rs: rs[0].backend),
    ("passed", lambda rs: f"{sum(r.status == 'ok' for r in rs)}/{len(rs)}"),
    ("skipped", lambda rs: str(sum(r.status == "skipped" for r in rs))),
    ("failed", lambda rs: str(sum(r.status in ("mismatch", "error") for r in rs))),
    ("geomean us", lambda rs: _cell(_geometric_mean([r.device_time_us for r in rs]), ".1f")),
    ("median dispatch us", lambda rs: _cell(_median([r.dispatch_us for r in rs]), ".1f")),
    ("median probe us", lambda rs: _cell(_median([r.host_probe_us for r in rs]), ".1f")),
    ("geomean x torch", lambda rs: _cell(_geometric_mean([r.speedup_vs_torch for r in rs]), ".2f")),
    (
        "geomean x rowwise",
        lambda rs: _cell(_geometric_mean([r.speedup_vs_rowwise for r in rs]), ".2f"),
    ),
    (f"min % ceil R>={LARGE_BATCH}", lambda rs: _cell(_lowest_large_batch_percent(rs), ".1f")),
    ("note", lambda rs: rs[0].note),
)
"""One line per backend over all its shapes (the geometric means cover the shapes it passed)."""


def _aligned(columns: Sequence[Column], items: Sequence[Any]) -> list[str]:
    rows = [[header for header, _ in columns]]
    rows += [[cell(item) for _, cell in columns] for item in items]
    widths = [max(len(row[i]) for row in rows) for i in range(len(columns))]
    return [
        "  ".join(
            text.ljust(width) if header in _LEFT_ALIGNED | {"note"} else text.rjust(width)
            for (header, _), text, width in zip(columns, row, widths, strict=True)
        ).rstrip()
        for row in rows
    ]


def render_table(report: Report) -> str:
    """The per-measurement table, then the per-backend summary."""
    ceiling = report.copy_ceiling
    header = (
        f"{report.environment.get('device_name')}: copy ceiling {ceiling.gbps:.0f} GB/s "
        f"(read + write of {ceiling.bytes_moved / 2**30:.2f} GiB in {ceiling.median_us:.0f} us)"
    )
    if ceiling.first_spread is not None:
        header += f"; re-measured: p90 {ceiling.first_spread:.1f}x p10 at first"
    lines = [header]
    if report.environment.get("device_type") == "cpu":
        lines.append(
            "CPU: wall-clock times of the torch reference on this host, which check the harness "
            "end to end and say nothing of GPU kernels (emulations are gated and timed once, "
            "labelled as no measure of performance)"
        )
    if report.stopped:
        lines.append(f"INCOMPLETE: {report.stopped}")
    skipped = [r for r in report.results if r.status == "skipped"]
    lines += _aligned(TABLE_COLUMNS, [r for r in report.results if r.status != "skipped"])
    lines += _skipped_lines(skipped)
    lines += _remeasured_lines(report.results)
    by_backend: dict[str, list[Result]] = defaultdict(list)
    for result in report.results:
        by_backend[result.backend].append(result)
    lines += ["", "summary per backend:", *_aligned(SUMMARY_COLUMNS, list(by_backend.values()))]
    return "\n".join(lines)


def _remeasured_lines(results: Sequence[Result]) -> list[str]:
    """How many measurements `timing.steady_device_time` took twice, and how many of those
    stayed unsteady (each one's line says so in its status)."""
    remeasured = [r for r in results if r.first_spread is not None]
    if not remeasured:
        return []
    limit = timing.UNSTEADY_SPREAD
    unsteady = sum(
        timing.spread(r.device_time_p10_us, r.device_time_p90_us) > limit for r in remeasured
    )
    return [
        f"re-measured {len(remeasured)} measurement(s) whose p90 passed {limit}x their p10 "
        f"(status column); {unsteady} still did"
    ]


def _skipped_lines(skipped: list[Result]) -> list[str]:
    """One line per reason instead of one per skipped measurement: without a GPU, most of the
    grid is too large for the emulations, and their rows would bury the measured ones."""
    by_reason: dict[str, list[Result]] = defaultdict(list)
    for result in skipped:
        by_reason[result.detail].append(result)
    lines = []
    for reason, results in by_reason.items():
        backends = ", ".join(dict.fromkeys(r.backend for r in results))
        shapes = {(r.num_reqs, r.vocab_size, r.dtype, r.support) for r in results}
        lines.append(
            f"skipped {len(results)} measurement(s), {len(shapes)} shape(s) of {backends}: {reason}"
        )
    return lines


def write_json(report: Report, path: Path) -> None:
    path.write_text(json.dumps(report.to_dict(), indent=2, allow_nan=False) + "\n")


CSV_FIELDS = tuple(field.name for field in dataclasses.fields(Result))


def write_csv(report: Report, path: Path) -> None:
    with path.open("w", newline="") as file:
        writer = csv.DictWriter(file, fieldnames=CSV_FIELDS)
        writer.writeheader()
        writer.writerows(dataclasses.asdict(result) for result in report.results)


def write_plots(report: Report, out_dir: Path) -> list[Path]:
    """One PNG per dtype x support: time and % of ceiling against num_reqs, a panel per vocab."""
    try:
        from matplotlib.figure import Figure
    except ImportError:
        print("matplotlib is not installed (pip install 'masks[bench]'): no plots", file=sys.stderr)
        return []
    groups: dict[tuple[str, str], list[Result]] = defaultdict(list)
    for result in report.results:
        groups[(result.dtype, result.support)].append(result)
    paths = []
    for (dtype, support), results in groups.items():
        figure = _plot_group(Figure, report, dtype, support, results)
        path = out_dir / f"compare-{dtype}-{support}.png"
        figure.savefig(path, dpi=110)
        paths.append(path)
    return paths


_LINE_STYLES = ("-", "--", ":", "-.")


def _plot_group(
    figure_type: type, report: Report, dtype: str, support: str, results: list[Result]
) -> Any:
    vocab_sizes = sorted({r.vocab_size for r in results})
    backends = list(dict.fromkeys(r.backend for r in results))
    bases = list(dict.fromkeys(name.partition(":")[0] for name in backends))
    emulated = sorted({r.backend for r in results if r.emulated})
    ceiling = report.copy_ceiling.gbps
    figure = figure_type(figsize=(4.2 * len(vocab_sizes) + 2.2, 7.0), layout="constrained")
    axes = figure.subplots(2, len(vocab_sizes), squeeze=False, sharex=True)
    for column, vocab_size in enumerate(vocab_sizes):
        time_axis, percent_axis = axes[0][column], axes[1][column]
        in_panel = [r for r in results if r.vocab_size == vocab_size]
        floors = sorted({(r.num_reqs, r.minimal_bytes / ceiling / 1e3) for r in in_panel})
        floor_style = {"color": "0.4", "linewidth": 3, "alpha": 0.4}
        time_axis.plot(*zip(*floors, strict=True), **floor_style, label="copy ceiling")
        percent_axis.axhline(100, **floor_style)
        for name in backends:
            timed = sorted((r.num_reqs, r) for r in in_panel if r.backend == name and r.timed)
            if not timed:
                continue
            base, _, variant = name.partition(":")
            style = {
                "color": f"C{bases.index(base) % 10}",
                "linestyle": _LINE_STYLES[_variant_index(base, variant) % len(_LINE_STYLES)],
                "marker": "o",
                "markersize": 3,
                "label": name,
            }
            x = [num_reqs for num_reqs, _ in timed]
            time_axis.plot(x, [r.device_time_us for _, r in timed], **style)
            percent_axis.plot(x, [r.pct_of_ceiling for _, r in timed], **style)
        time_axis.set_title(f"V = {vocab_size}")
        time_axis.set_yscale("log")
        percent_axis.set_xscale("log", base=2)
        num_reqs = sorted({r.num_reqs for r in in_panel})
        percent_axis.set_xticks(num_reqs, [str(n) for n in num_reqs])
        percent_axis.minorticks_off()
        percent_axis.set_xlabel("num_reqs")
        percent_axis.set_ylim(bottom=0)
        for axis in (time_axis, percent_axis):
            axis.grid(True, which="both", alpha=0.3)
    axes[0][0].set_ylabel("device time per call (us)")
    axes[1][0].set_ylabel("% of copy ceiling")
    handles, labels = axes[0][0].get_legend_handles_labels()
    figure.legend(handles, labels, loc="outside right center")
    title = [
        f"{dtype}, {support} support, W = {results[0].width}",
        f"{report.environment.get('device_name')}, copy ceiling {ceiling:.0f} GB/s",
    ]
    if emulated:
        bases = sorted({name.partition(":")[0] for name in emulated})
        title.append(f"not plotted ({EMULATED_NOTE}): {', '.join(bases)}")
    figure.suptitle("\n".join(title))
    return figure


def _variant_index(base: str, variant: str) -> int:
    """Line style per variant: solid for the default, dashed/dotted for the others."""
    if not variant:
        return 0
    try:
        return registry.variants(base).index(variant)
    except (ValueError, BackendUnavailableError):
        return 1


# --- auto order ------------------------------------------------------------------------------


def auto_order_from_results(results: Mapping[str, Any], source: str | None = None) -> dict:
    """The ``masks/auto_order.json`` content implied by a results JSON (`Report.to_dict`).

    Candidates: the default variant (plain name) of every non-emulated backend measured on the
    results' device type that never failed its gate (auto must never pick a wrong kernel).
    Score: geometric mean, over the shapes where every candidate was timed, of what a call costs
    a caller that waits for its result: host dispatch plus device time (the kernel starts once
    its launch is queued). At R <= 64 dispatch is most of a call, and device time alone put
    Numba first by 2% over CuPy, whose dispatch is 12% shorter (h200-2026-12-04-s4 run 3,
    geometric means over 126 shapes: device 23.9 against 24.4 us, dispatch 20.3 against 17.8).
    Fastest first; backends slower than torch are left out (``auto`` would reach torch,
    the fallback that always runs, first), and torch comes last.
    """
    environment = results["environment"]
    rows = [r for r in results["results"] if ":" not in r["backend"] and not r["emulated"]]
    failed = {r["backend"] for r in rows if r["status"] in ("mismatch", "error")}
    candidates = sorted({r["backend"] for r in rows} - failed)
    times: dict[tuple, dict[str, float]] = defaultdict(dict)
    for r in rows:
        if r["backend"] in candidates and r["status"] == "ok" and r["dispatch_us"] is not None:
            shape = (r["num_reqs"], r["vocab_size"], r["dtype"], r["support"], r["width"])
            times[shape][r["backend"]] = r["dispatch_us"] + r["device_time_us"]
    complete = [by_name for by_name in times.values() if len(by_name) == len(candidates)]
    if not complete:
        raise ValueError(f"no shape in the results where all of {candidates} were timed")
    score = {
        name: math.exp(sum(math.log(by_name[name]) for by_name in complete) / len(complete))
        for name in candidates
    }
    torch_score = score.get(REFERENCE, math.inf)
    faster = sorted(
        (n for n in candidates if n != REFERENCE and score[n] < torch_score), key=score.get
    )
    order = {"cpu": [REFERENCE], "cuda": [REFERENCE]}
    order[environment["device_type"]] = [*faster, REFERENCE]
    scores = ", ".join(f"{name} {score[name]:.1f} us" for name in sorted(score, key=score.get))
    left_out = f" Left out for failing the gate: {', '.join(sorted(failed))}." if failed else ""
    note = (
        f"Fastest first on {environment['device_type']} ({environment.get('device_name')}) by "
        f"geometric mean of host dispatch plus device time per call over the {len(complete)} "
        f"shapes where every candidate was timed: {scores}.{left_out} Backends slower than torch "
        "are left out; torch is the fallback. Written by `python -m masks compare "
        "--write-auto-order`."
    )
    return {"source": source, "note": note, "order": order}


def write_auto_order(auto_order: Mapping[str, Any], path: Path) -> None:
    path.write_text(json.dumps(auto_order, indent=2) + "\n")


# --- command line ----------------------------------------------------------------------------


def _list_of(convert: Callable[[str], Any]) -> Callable[[str], tuple]:
    """A comma-separated option's parser: each item converted, none given twice (a repeated
    backend or shape would be measured, and counted, twice)."""

    def parse(text: str) -> tuple:
        try:
            items = tuple(convert(item.strip()) for item in text.split(",") if item.strip())
        except (ValueError, KeyError, argparse.ArgumentTypeError) as error:
            raise argparse.ArgumentTypeError(f"bad list {text!r}: {error}") from error
        if repeated := [item for index, item in enumerate(items) if item in items[:index]]:
            raise argparse.ArgumentTypeError(f"bad list {text!r}: {repeated[0]!r} given twice")
        return items

    return parse


def _size(text: str) -> int:
    """A count of rows, columns or kept ids: an int >= 0."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"sizes are ints >= 0, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"sizes are ints >= 0, got {value}")
    return value


def _dtype_name(text: str) -> str:
    name = DTYPE_ALIASES.get(text, text)
    if name not in DTYPES:
        raise ValueError(f"dtype must be one of {', '.join([*DTYPES, *DTYPE_ALIASES])}")
    return name


def _support_name(text: str) -> str:
    if text not in SUPPORTS:
        raise ValueError(f"support must be one of {', '.join(SUPPORTS)}")
    return text


def add_arguments(parser: argparse.ArgumentParser) -> None:
    grid = parser.add_argument_group("grid (defaults: the full grid on CUDA, a small one on CPU)")
    grid.add_argument(
        "--backends",
        type=_list_of(str),
        help="e.g. torch,triton,triton:rowwise "
        "(default: every backend and variant that runs on the device)",
    )
    grid.add_argument("--num-reqs", type=_list_of(_size), help="e.g. 1,4,16")
    grid.add_argument("--vocab", type=_list_of(_size), help="e.g. 128256,151936")
    grid.add_argument("--dtypes", type=_list_of(_dtype_name), help="e.g. fp32,bf16")
    grid.add_argument(
        "--supports",
        type=_list_of(_support_name),
        help="sparse (50 kept ids), dense (2048 spread over the row), full (whole row)",
    )
    grid.add_argument("--width", type=_size, help="max_num_kept W (default 2048; --quick: 256)")
    grid.add_argument("--quick", action="store_true", help="tiny grid (R 1,5 x V 1027, W 256)")
    timing_group = parser.add_argument_group("timing")
    timing_group.add_argument(
        "--reps",
        type=int,
        default=DEFAULT_REPS,
        help=f"most timed repetitions per measurement (default %(default)s, at least {MIN_REPS})",
    )
    timing_group.add_argument(
        "--budget-ms",
        type=float,
        default=DEFAULT_BUDGET_MS,
        help="wall-clock budget of one measurement's repetitions (default %(default)s; at least "
        f"{MIN_REPS} repetitions run)",
    )
    timing_group.add_argument(
        "--device", choices=("cpu", "cuda"), help="default: cuda when available"
    )
    timing_group.add_argument(
        "--emulate",
        action=argparse.BooleanOptionalAction,
        help="run the GPU kernels through their CPU emulations (Triton's interpreter, Numba's "
        "CUDA simulator, CuPy's CUDA C built for the CPU); default: on when there is no CUDA "
        "device. Never timed as performance",
    )
    timing_group.add_argument("--seed", type=int, default=0)
    timing_group.add_argument(
        "--l2-flush",
        choices=timing.L2_FLUSHES,
        default=timing.L2_FLUSHES[0],
        help="empty the L2 before each timed call by writing a large buffer (as "
        "triton.testing.do_bench; the call then writes back the dirty lines it evicts) or by "
        "reading it (clean lines; the call pays for its own bytes only). Default %(default)s",
    )
    timing_group.add_argument(
        "--time-limit-s",
        type=float,
        help="start no new shape after this many seconds; what was measured is still written",
    )
    output = parser.add_argument_group("output")
    output.add_argument("--out-dir", type=Path, help="write compare.json, compare.csv, PNGs")
    output.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    output.add_argument(
        "--write-auto-order",
        type=Path,
        metavar="PATH",
        help="write the auto order derived from the results (needs --out-dir or "
        "--auto-order-from), e.g. masks/auto_order.json",
    )
    output.add_argument(
        "--auto-order-from",
        type=Path,
        metavar="JSON",
        help="derive the auto order from this results JSON (or .json.gz) instead of measuring",
    )


def config_from_args(args: argparse.Namespace, command: str) -> Config:
    """The `Config` that the parsed options describe (validating the backend names)."""
    if args.reps < MIN_REPS:  # else raised to MIN_REPS without a word
        raise ValueError(f"--reps must be at least {MIN_REPS}, got {args.reps}")
    device_type = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    device = torch.device(device_type)
    if device.type == "cuda":
        if not torch.cuda.is_available():
            raise ValueError("--device cuda: torch sees no CUDA device here")
        device = torch.device("cuda", torch.cuda.current_device())
    base = QUICK_GRID if args.quick else CUDA_GRID if device.type == "cuda" else CPU_GRID
    grid = Grid(
        num_reqs=args.num_reqs or base.num_reqs,
        vocab_sizes=args.vocab or base.vocab_sizes,
        dtypes=args.dtypes or base.dtypes,
        supports=args.supports or base.supports,
        width=base.width if args.width is None else args.width,
    )
    backends = args.backends or tuple(default_backends(device))
    check_backends(backends, device)
    return Config(
        grid=grid,
        backends=backends,
        device=device,
        seed=args.seed,
        max_reps=args.reps,
        budget_s=args.budget_ms / 1e3,
        command=command,
        progress=not args.no_progress,
        time_limit_s=args.time_limit_s,
        l2_flush=args.l2_flush,
    )


def main(args: argparse.Namespace, command: str) -> int:
    """Run ``masks compare``; exit status 1 when a backend failed its gate or the run stopped
    early, 2 on bad options."""
    if args.auto_order_from is not None:
        if args.write_auto_order is None:
            return _usage_error("--auto-order-from needs --write-auto-order PATH")
        results = read_json(args.auto_order_from)
        auto_order = auto_order_from_results(results, source=args.auto_order_from.as_posix())
        write_auto_order(auto_order, args.write_auto_order)
        print(f"wrote {args.write_auto_order}: {auto_order['order']}")
        return 0
    if args.write_auto_order is not None and args.out_dir is None:
        return _usage_error("--write-auto-order needs --out-dir (the order names its results)")
    if args.emulate if args.emulate is not None else not torch.cuda.is_available():
        enable_emulations()
    try:
        config = config_from_args(args, command)
    except (ValueError, BackendUnavailableError) as error:
        return _usage_error(str(error))
    for name, reason in masks.unavailable_reasons(config.device).items():
        print(f"masks compare: not measuring {name}: {reason}", file=sys.stderr)
    report = run(config)
    print(render_table(report))
    if args.out_dir is not None:
        _write_outputs(report, args.out_dir, args.write_auto_order)
    failed = [r for r in report.results if r.status in ("mismatch", "error")]
    if failed:
        print(f"{len(failed)} measurement(s) failed the conformance gate", file=sys.stderr)
    return 1 if failed or report.stopped else 0


def enable_emulations() -> None:
    """Turn on every backend's CPU emulation; must run before those backends are imported."""
    for spec in registry.BACKENDS.values():
        if spec.emulation_env is not None:
            os.environ[spec.emulation_env] = "1"


def _write_outputs(report: Report, out_dir: Path, auto_order_path: Path | None) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    json_path, csv_path = out_dir / "compare.json", out_dir / "compare.csv"
    write_json(report, json_path)
    write_csv(report, csv_path)
    written = [json_path, csv_path, *write_plots(report, out_dir)]
    print("wrote " + ", ".join(str(path) for path in written))
    if auto_order_path is not None:
        source = Path(os.path.relpath(json_path)).as_posix()
        auto_order = auto_order_from_results(report.to_dict(), source=source)
        write_auto_order(auto_order, auto_order_path)
        print(f"wrote {auto_order_path}: {auto_order['order']}")


def _usage_error(message: str) -> int:
    print(f"masks compare: {message}", file=sys.stderr)
    return 2
