"""Measurement primitives shared by `masks.compare` and the pytest-benchmark suite.

Why they measure what they measure:

- Device time: CUDA events around one call, each call preceded by an L2 flush (at least twice
  the L2 size) and a spin kernel. The flush makes every call read its logits from memory, as a
  serving step does; flush and spin keep the GPU busy while the host enqueues the call, so host
  dispatch never leaks into the event interval: the spin lasts at least twice the call's own
  host time, measured first (`busy_cycles`; the torch reference's dozen launches take longer to
  enqueue than a fixed spin lasted, and its device time at small R read as its dispatch).
  Two flushes (`L2_FLUSHES`): ``"write"`` zeroes the buffer, as ``triton.testing.do_bench``
  does, which leaves the L2 full of *dirty* lines that the timed call then writes back to
  memory as it evicts them (up to the L2's size of extra traffic, charged to the call);
  ``"read"`` (the default) reads the buffer, leaving clean lines, so the call pays for its own
  bytes only. Measured on the H200: a device copy of 72 MB
  reached 69% of the 2 GiB copy ceiling after a write flush and 80% after a read flush, while
  the ceiling itself was the same either way (benchmarks/traffic_floor.py, then named
  same_bytes_copy.py).
- Host dispatch: back-to-back calls with no synchronisation in between, host wall clock per call.
  A backend that synchronises or does heavy Python work per call shows up here, not above. A
  host's speed drifts over seconds (on the H200's host, two full grids with the same CuPy code
  minutes apart measured its median dispatch at 14.1 and 21.3 us,
  benchmarks/results/h200-2026-12-01), so the backends of one shape are measured in interleaved
  rounds, beside a probe of the host's own speed (`interleaved_dispatch_times`;
  `masks.compare.host_probe`).
- Medians (with p10/p90) over many repetitions; callers size the repetition counts from a
  wall-clock budget (`reps_within`) so large shapes and slow backends stay affordable. A GPU
  measurement whose repetitions spread wide is taken once more (`steady_device_time`).
- Copy ceiling: a large device-to-device copy measured in the same run with the same method,
  so "percent of ceiling" compares like with like on the machine at hand. It is a reference,
  not a bound: a kernel that reads far more than it writes can pass it (a copy reads and writes
  in equal parts; on the H200 a kernel that reads the logits and writes the outputs of R = 512,
  V = 262144 fp32 did so at 109% of it: benchmarks/traffic_floor.py,
  benchmarks/results/h200-2026-12-03).
- On the CPU, device time is the wall clock of each call, with the same statistics.
"""

from __future__ import annotations

import functools
import math
import random
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch

Call = Callable[[], object]

L2_FLUSH_MIN_BYTES = 256 << 20
CUDA_COPY_BYTES = 1 << 30
"""Half of the copy-ceiling traffic on CUDA (read + write 2 GiB): far beyond any cache."""
CPU_COPY_BYTES = 64 << 20
COPY_REPS = 20
UNSTEADY_SPREAD = 1.5
"""p90 / p10 of a GPU measurement's repetitions past which `steady_device_time` takes it once
more and keeps the steadier of the two: a call's own times spread by a few percent, a wider
spread is time the GPU spent on something else (one H100 grid had 10 such cells of 1386, p90 up
to 34x p10, where the same grid minutes before had none: benchmarks/results/h100-2026-12-07)."""
WARM_CALLS = 2
"""Untimed calls that open each host-dispatch batch (`interleaved_dispatch_times`)."""


@dataclass(frozen=True)
class Timing:
    """Per-call times of one measurement, in microseconds."""

    median_us: float
    p10_us: float
    p90_us: float
    samples: int


@dataclass(frozen=True)
class CopyCeiling:
    """Bandwidth of a large same-device copy (read + write): the reference that "% of the copy
    ceiling" divides by (a read-heavy kernel can pass it)."""

    gbps: float
    bytes_moved: int
    """Bytes read plus bytes written per copy."""
    median_us: float
    first_spread: float | None = None
    """p90 / p10 of a first measurement that passed `UNSTEADY_SPREAD` (`steady_device_time`)."""


def summarize(seconds: Sequence[float]) -> Timing:
    """Median, p10 and p90 (the sample at the index nearest q * (n - 1)) of per-call times given
    in seconds."""
    ordered = sorted(seconds)
    last = len(ordered) - 1

    def quantile(q: float) -> float:
        return ordered[round(q * last)] * 1e6

    return Timing(statistics.median(ordered) * 1e6, quantile(0.1), quantile(0.9), len(ordered))


def synchronize(device: torch.device) -> None:
    """Wait for the device's queued work (nothing to wait for on the CPU)."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)


L2_FLUSHES = ("read", "write")
"""How the L2 is emptied before each timed call (see the module docstring); the first is the
default."""


@functools.cache
def _l2_flush_buffers(device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    """The flush buffer (>= twice the L2) and a one-element destination for its read."""
    l2_bytes = getattr(torch.cuda.get_device_properties(device), "L2_cache_size", 0)
    size = max(L2_FLUSH_MIN_BYTES, 2 * l2_bytes) // 4
    return torch.zeros(size, dtype=torch.int32, device=device), torch.empty(
        (), dtype=torch.int32, device=device
    )


BUSY_CYCLES = 400_000
"""The least GPU clock cycles of the spin kernel queued after each L2 flush (~0.2 ms on an H200;
a write flush alone, ~75 us, hid a 50 us dispatch but not the ~85 us that a two-launch Triton
split of an earlier version measured on the H200's host)."""
CYCLES_PER_US = 2_000
"""Spin cycles per microsecond: the H200's top clock (1980 MHz) rounded up, so a spin lasts at
least its intended time on a GPU clocked at or below 2 GHz."""


def busy_cycles(host_seconds: float) -> int:
    """Spin cycles after each flush for a call whose host time is ``host_seconds``: twice that
    time, and at least `BUSY_CYCLES`, so the call is fully enqueued before the GPU reaches it."""
    return max(BUSY_CYCLES, math.ceil(2 * host_seconds * 1e6 * CYCLES_PER_US))


def _flush_l2_and_stay_busy(device: torch.device, l2_flush: str, cycles: int = BUSY_CYCLES) -> None:
    if device.type == "cuda":
        buffer, destination = _l2_flush_buffers(device)
        if l2_flush == "write":
            buffer.zero_()
        else:
            torch.amax(buffer, dim=0, out=destination)
        with torch.cuda.device(device):  # `_sleep` runs on the current device
            torch.cuda._sleep(cycles)


def seconds_per_call(
    call: Call, device: torch.device, calls: int = 3, l2_flush: str = L2_FLUSHES[0]
) -> float:
    """Wall time of one L2-flushed, synchronised call: what one timed repetition costs."""
    synchronize(device)
    start = time.perf_counter()
    for _ in range(calls):
        _flush_l2_and_stay_busy(device, l2_flush)
        call()
        synchronize(device)
    return (time.perf_counter() - start) / calls


def _host_seconds(call: Call, device: torch.device) -> float:
    """Host wall time of enqueueing one call on an idle device."""
    synchronize(device)
    start = time.perf_counter()
    call()
    seconds = time.perf_counter() - start
    synchronize(device)
    return seconds


def reps_within(budget_s: float, seconds_each: float, low: int, high: int) -> int:
    """How many repetitions of ``seconds_each`` fit in ``budget_s``, clamped to [low, high]."""
    return max(low, min(high, int(budget_s / max(seconds_each, 1e-9))))


def device_time(
    call: Call, device: torch.device, reps: int, l2_flush: str = L2_FLUSHES[0]
) -> Timing:
    """Device time per call: CUDA events after an L2 flush (``L2_FLUSHES``) and a spin that
    outlasts the call's host time (the slowest of three calls enqueued on an idle GPU), or wall
    clock on the CPU.

    The caller warms ``call`` up first (compilation, caches).
    """
    if l2_flush not in L2_FLUSHES:
        raise ValueError(f"l2_flush must be one of {L2_FLUSHES}, got {l2_flush!r}")
    if device.type != "cuda":
        samples = []
        for _ in range(reps):
            start = time.perf_counter()
            call()
            samples.append(time.perf_counter() - start)
        return summarize(samples)
    cycles = busy_cycles(max(_host_seconds(call, device) for _ in range(3)))
    with torch.cuda.device(device):
        events = [
            (torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
            for _ in range(reps)
        ]
        for start, end in events:
            _flush_l2_and_stay_busy(device, l2_flush, cycles)
            start.record()
            call()
            end.record()
        torch.cuda.synchronize(device)
    return summarize([start.elapsed_time(end) * 1e-3 for start, end in events])


def spread(p10_us: float, p90_us: float) -> float:
    """p90 / p10 of a measurement's repetitions, the p10 floored at 1 ns so that the ratio stays
    finite (a results JSON holds no infinity) even for a call too short for the event timer."""
    return p90_us / max(p10_us, 1e-3)


def steady_device_time(
    call: Call, device: torch.device, reps: int, l2_flush: str = L2_FLUSHES[0]
) -> tuple[Timing, float | None]:
    """`device_time`, taken once more on a GPU when its `spread` passes `UNSTEADY_SPREAD`:
    ``(the steadier measurement, the first one's spread, or None when it was steady)``. The two
    are compared by spread, not by median."""
    first = device_time(call, device, reps, l2_flush)
    first_spread = spread(first.p10_us, first.p90_us)
    if device.type != "cuda" or first_spread <= UNSTEADY_SPREAD:
        return first, None
    second = device_time(call, device, reps, l2_flush)
    steadier = min(first, second, key=lambda measured: spread(measured.p10_us, measured.p90_us))
    return steadier, first_spread


def interleaved_dispatch_times(
    calls: Sequence[tuple[Call, int]], device: torch.device, rounds: int
) -> list[Timing]:
    """Host wall clock per call of each ``(call, calls_per_batch)``, median over its batches.

    Each round runs one batch of every call, in an order shuffled per round (seeded by the
    round), so a slow spell of the host lands on all of them alike instead of on whichever was
    measured during it, and no call always follows the same one: a batch pays for the switch
    from the previous one. On the H200's host, in a fixed order, the default Triton backend,
    always measured after the torch reference's batch, took 2.0-2.7 us more per call at R=1
    than the same kernel named ``triton:split`` and measured after it; with cold batches each
    library's default backend took 2-10 us more. The queue is drained before each batch, so a
    batch measures enqueueing, not waiting for earlier work; callers keep ``calls_per_batch``
    well below the launch-queue depth. Each batch starts with `WARM_CALLS` untimed calls.
    """
    samples: list[list[float]] = [[] for _ in calls]
    for round_index in range(rounds):
        for index in random.Random(round_index).sample(range(len(calls)), len(calls)):
            call, calls_per_batch = calls[index]
            synchronize(device)
            for _ in range(WARM_CALLS):
                call()
            start = time.perf_counter()
            for _ in range(calls_per_batch):
                call()
            samples[index].append((time.perf_counter() - start) / calls_per_batch)
    synchronize(device)
    return [summarize(batch_times) for batch_times in samples]


def copy_ceiling(
    device: torch.device, nbytes: int | None = None, l2_flush: str = L2_FLUSHES[0]
) -> CopyCeiling:
    """Measure ``dst.copy_(src)`` of a large buffer on ``device`` (bytes read + written / time)."""
    if nbytes is None:
        nbytes = CUDA_COPY_BYTES if device.type == "cuda" else CPU_COPY_BYTES
    source = torch.ones(nbytes, dtype=torch.uint8, device=device)
    destination = torch.empty_like(source)

    def copy() -> None:
        destination.copy_(source)

    copy()
    timing, first_spread = steady_device_time(copy, device, COPY_REPS, l2_flush)
    moved = 2 * nbytes
    return CopyCeiling(gbps(moved, timing.median_us), moved, timing.median_us, first_spread)


def minimal_bytes(num_reqs: int, vocab_size: int, width: int, itemsize: int) -> int:
    """Traffic no implementation can avoid: logits read once, the three outputs written once."""
    kept_width = min(width, vocab_size)
    return num_reqs * (vocab_size * itemsize + kept_width * 4 + 4 + (vocab_size + 7) // 8)


def gbps(nbytes: int, time_us: float) -> float:
    """Bytes per microsecond, in GB/s."""
    return nbytes / time_us / 1e3
