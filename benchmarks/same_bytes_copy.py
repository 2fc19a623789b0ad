"""What a plain copy of the same bytes reaches at the shapes where the kernels miss 80%.

The harness reports each call against a copy ceiling measured on 2 GiB (launch latency is
nothing there). A call at R=256 moves 72-279 MB, so the fixed cost of a launch (the time from
the start event to the kernel's first load, and the wave's ramp and tail) weighs more. This
script times, with the harness's own method (`masks.timing.device_time`: L2 flush, spin, CUDA
events, medians), a device-to-device copy moving the same number of bytes as the kernel's
minimal traffic, a one-element kernel (the launch floor), and the default variant of each GPU
backend on sparse logits of the same shape; so "% of the ceiling" can be read against what the
same bytes allow.

Run (CUDA): ``python benchmarks/same_bytes_copy.py --out same_bytes_copy.json``
"""

from __future__ import annotations

import argparse
import functools
import json

import torch

from masks import SamplingMask, available_backends, compact_sampling_mask, timing
from masks.testing import make_logits

SHAPES = [(r, v) for r in (256, 1024) for v in (128_256, 151_936, 262_144)]
DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16}
WIDTH = 2048
REPS = 30


def measure_shape(
    num_reqs: int, vocab: int, dtype: torch.dtype, backends: list[str], ceiling_gbps: float
) -> dict:
    """Same-bytes copy and each backend's default variant at one shape (harness method)."""
    device = torch.device("cuda")
    nbytes = timing.minimal_bytes(num_reqs, vocab, WIDTH, dtype.itemsize)
    source = torch.randint(0, 256, (nbytes // 2,), dtype=torch.uint8, device=device)
    target = torch.empty_like(source)
    copy = timing.device_time(functools.partial(target.copy_, source), device, REPS)
    row = {"num_reqs": num_reqs, "vocab": vocab, "minimal_bytes": nbytes, "copy_us": copy.median_us}
    row["copy_pct"] = 100 * timing.gbps(nbytes, copy.median_us) / ceiling_gbps
    logits = make_logits(num_reqs, vocab, 50, dtype, seed=3, device=device)
    out = SamplingMask.empty(num_reqs, vocab, WIDTH, device=device)
    for backend in backends:
        call = functools.partial(compact_sampling_mask, logits, None, WIDTH, backend, out=out)
        call()
        kernel = timing.device_time(call, device, REPS)
        row[f"{backend}_us"] = kernel.median_us
        row[f"{backend}_pct"] = 100 * timing.gbps(nbytes, kernel.median_us) / ceiling_gbps
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    device = torch.device("cuda")
    backends = [b for b in ("cupy", "triton", "numba") if b in available_backends(device)]
    ceiling = timing.copy_ceiling(device)
    one = torch.ones(1, device=device)
    floor = timing.device_time(functools.partial(one.add_, 1), device, REPS)
    print(f"copy ceiling {ceiling.gbps:.0f} GB/s; one-element kernel {floor.median_us:.1f} us")
    rows = []
    for (num_reqs, vocab), (name, dtype) in ((s, d) for s in SHAPES for d in DTYPES.items()):
        row = {"dtype": name, **measure_shape(num_reqs, vocab, dtype, backends, ceiling.gbps)}
        rows.append(row)
        cells = " ".join(f"{b} {row[f'{b}_pct']:5.1f}%" for b in backends)
        print(
            f"R={num_reqs:5d} V={vocab:6d} {name}  {row['minimal_bytes'] / 1e6:7.1f} MB  "
            f"same-bytes copy {row['copy_us']:6.1f} us {row['copy_pct']:5.1f}%  {cells}",
            flush=True,
        )
    report = {
        "device": torch.cuda.get_device_name(),
        "copy_ceiling_gbps": ceiling.gbps,
        "one_element_kernel_us": floor.median_us,
        "width": WIDTH,
        "support": "50 kept ids per row",
        "rows": rows,
    }
    if args.out:
        with open(args.out, "w") as f:
            json.dump(report, f, indent=2)


if __name__ == "__main__":
    main()
