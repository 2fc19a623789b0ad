"""Where the host dispatch of one call goes, per GPU backend (R=1, V=151936, ``out=``).

Times back-to-back calls (no synchronisation) through the public API and through the backend
module's ``compact`` directly (the difference is the contract's checks and dispatch), for fp32
and bf16 logits, in interleaved rounds beside the harness's host probe (a one-element torch
fill: `masks.compare.host_probe`), so runs on a busy and a quiet host can be told apart, and
beside the host's launch floor (``driver launch``: an empty kernel queued by CuPy's binding of
``cuLaunchKernel``, where every backend's launch ends, with no Python of ours). Then
it profiles the API calls with cProfile and prints the functions with the most own time: the
launch path of each kernel language, not the kernel.

Run (CUDA): ``python benchmarks/dispatch_profile.py --out dispatch_profile.txt --json d.json``
"""

from __future__ import annotations

import argparse
import cProfile
import functools
import importlib
import io
import json
import pstats

import torch

from masks import SamplingMask, available_backends, compact_sampling_mask, compare, timing
from masks.testing import make_logits

NUM_REQS, VOCAB, WIDTH = 1, 151_936, 2048
ROUNDS, CALLS = 30, 200
PROFILED_CALLS = 5000
BACKENDS = ("cupy", "triton", "numba")
DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16}


def dispatch_calls(name: str, dtype: torch.dtype, device: torch.device) -> dict:
    """The calls timed for one backend and dtype: through the API and to ``compact`` directly
    (each called once here, so nothing compiles while timed)."""
    logits = make_logits(NUM_REQS, VOCAB, 50, dtype=dtype, seed=1, device=device)
    out = SamplingMask.empty(NUM_REQS, VOCAB, WIDTH, device=device)
    module = importlib.import_module(f"masks.backends.{name}")
    calls = {
        "api": functools.partial(compact_sampling_mask, logits, None, WIDTH, name, out=out),
        "compact": functools.partial(module.compact, logits, None, out, "auto"),
    }
    for call in calls.values():
        call()
    return calls


def driver_launch(device: torch.device) -> functools.partial:
    """An empty kernel, no parameters, queued on torch's current stream through CuPy's binding of
    ``cuLaunchKernel``: the host cost of a launch itself, below which no backend's call goes."""
    import cupy

    with cupy.cuda.Device(device.index):
        kernel = cupy.RawModule(code='extern "C" __global__ void empty() {}').get_function("empty")
        function = kernel.kernel.ptr
    stream = torch.cuda.current_stream(device).cuda_stream
    launch = functools.partial(
        cupy.cuda.driver.launchKernel, function, 1, 1, 1, 32, 1, 1, 0, stream, 0, 0
    )
    launch()
    return launch


def profile(call, label: str, report: io.StringIO) -> None:
    torch.cuda.synchronize()
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(PROFILED_CALLS):
        call()
    profiler.disable()
    torch.cuda.synchronize()
    report.write(f"--- {label}: cProfile of {PROFILED_CALLS} API calls (own time) ---\n")
    pstats.Stats(profiler, stream=report).sort_stats("tottime").print_stats(18)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=None, help="text report")
    parser.add_argument("--json", default=None, help="medians per call, in us")
    parser.add_argument("--backends", default=",".join(BACKENDS))
    parser.add_argument("--no-profile", action="store_true")
    args = parser.parse_args()
    device = torch.device("cuda", torch.cuda.current_device())
    available = available_backends(device)
    names = [name for name in args.backends.split(",") if name in available]
    calls = {"probe": compare.host_probe(device)}
    if "cupy" in available:
        calls["driver launch"] = driver_launch(device)
    for name in names:
        for dtype_name, dtype in DTYPES.items():
            for how, call in dispatch_calls(name, dtype, device).items():
                calls[f"{name} {dtype_name} {how}"] = call
    measured = timing.interleaved_dispatch_times(
        [(call, CALLS) for call in calls.values()], device, ROUNDS
    )
    medians = {label: t.median_us for label, t in zip(calls, measured, strict=True)}
    report = io.StringIO()
    for label, median in medians.items():
        report.write(f"{label:22s} {median:6.1f} us per call (median of {ROUNDS} batches)\n")
    if not args.no_profile:
        for name in names:
            profile(calls[f"{name} fp32 api"], f"{name} fp32", report)
    print(report.getvalue())
    if args.out:
        with open(args.out, "w") as f:
            f.write(report.getvalue())
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"rounds": ROUNDS, "calls_per_batch": CALLS, "median_us": medians}, f)


if __name__ == "__main__":
    main()
