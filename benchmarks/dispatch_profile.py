"""Where the host dispatch of one call goes, per GPU backend (R=1, V=151936 fp32, ``out=``).

Times back-to-back calls (no synchronisation; the harness's `masks.timing.host_dispatch_time`)
through the public API and through the backend module's ``compact`` directly (the difference
is the contract's checks and dispatch), then profiles the API calls with cProfile and prints
the functions with the most own time: the launch path of each kernel language, not the
kernel.

Run (CUDA): ``python benchmarks/dispatch_profile.py --out dispatch_profile.txt``
"""

from __future__ import annotations

import argparse
import cProfile
import functools
import importlib
import io
import pstats

import torch

from masks import SamplingMask, available_backends, compact_sampling_mask, timing
from masks.testing import make_logits

NUM_REQS, VOCAB, WIDTH = 1, 151_936, 2048
BATCHES, CALLS = 20, 200
PROFILED_CALLS = 5000


def profile_backend(name: str, report: io.StringIO) -> None:
    device = torch.device("cuda", torch.cuda.current_device())
    logits = make_logits(NUM_REQS, VOCAB, 50, seed=1, device=device)
    out = SamplingMask.empty(NUM_REQS, VOCAB, WIDTH, device=device)
    module = importlib.import_module(f"masks.backends.{name}")
    through_api = functools.partial(compact_sampling_mask, logits, None, WIDTH, name, out=out)
    direct = functools.partial(module.compact, logits, None, out, "auto")
    through_api()
    direct()
    for label, call in (("api", through_api), ("backend.compact", direct)):
        measured = timing.host_dispatch_time(call, device, BATCHES, CALLS)
        report.write(f"{name:7s} {label:16s} {measured.median_us:6.1f} us per call\n")
    torch.cuda.synchronize()
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(PROFILED_CALLS):
        through_api()
    profiler.disable()
    torch.cuda.synchronize()
    stats = pstats.Stats(profiler, stream=report)
    report.write(f"--- {name}: cProfile of {PROFILED_CALLS} API calls (own time) ---\n")
    stats.sort_stats("tottime").print_stats(18)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    report = io.StringIO()
    for name in ("cupy", "triton", "numba"):
        if name in available_backends("cuda"):
            profile_backend(name, report)
    print(report.getvalue())
    if args.out:
        with open(args.out, "w") as f:
            f.write(report.getvalue())


if __name__ == "__main__":
    main()
