"""One warmed-up call per backend on one shape, for a profiler to look at.

Run under Nsight Compute, e.g. (the R=256 rows are where every backend misses 80% of the copy
ceiling):

    ncu --clock-control none --profile-from-start off --kernel-name regex:fused \\
        --section SpeedOfLight --section Occupancy --section WarpStateStats \\
        python benchmarks/profile_kernels.py --num-reqs 256 --dtype bf16

Each backend is called twice before profiling starts (compilation, caches), then once inside a
``cudaProfilerStart/Stop`` range, so ``--profile-from-start off`` limits ncu to those calls.
``--clock-control none`` leaves the clocks as the timings saw them.
"""

from __future__ import annotations

import argparse

import torch

from masks import SamplingMask, compact_sampling_mask
from masks.testing import make_logits

DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backends", default="cupy:fused,triton:fused,numba:fused")
    parser.add_argument("--num-reqs", type=int, default=256)
    parser.add_argument("--vocab", type=int, default=151_936)
    parser.add_argument("--dtype", choices=DTYPES, default="bf16")
    parser.add_argument("--support", default="50", help="kept ids per row, or 'full'")
    args = parser.parse_args()
    support = args.support if args.support == "full" else int(args.support)
    logits = make_logits(
        args.num_reqs, args.vocab, support, DTYPES[args.dtype], seed=2, device="cuda"
    )
    out = SamplingMask.empty(args.num_reqs, args.vocab, device="cuda")
    backends = args.backends.split(",")
    for backend in backends:
        for _ in range(2):
            compact_sampling_mask(logits, backend=backend, out=out)
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStart()
    for backend in backends:
        compact_sampling_mask(logits, backend=backend, out=out)
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStop()


if __name__ == "__main__":
    main()
