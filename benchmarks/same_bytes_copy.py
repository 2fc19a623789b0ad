"""What a plain copy of the same bytes reaches at the shapes where the kernels miss 80%.

The harness reports each call against a copy ceiling measured on 2 GiB (launch latency is
nothing there). A call at R=256 moves 72-279 MB, so the fixed cost of a launch (the time from
the start event to the kernel's first load, and the wave's ramp and tail) weighs more. This
script times, with the harness's own method (`masks.timing.device_time`: L2 flush, spin, CUDA
events, medians), a device-to-device copy moving the same number of bytes as the kernel's
minimal traffic, a one-element kernel (the launch floor), and the default variant of each GPU
backend on sparse logits of the same shape; so "% of the ceiling" can be read against what the
same bytes allow. Every figure is taken with both L2 flushes of `masks.timing` (``write``: the
timed call also writes back the flush's dirty lines; ``read``: clean lines), ceiling included.

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
    num_reqs: int, vocab: int, dtype: torch.dtype, backends: list[str], ceilings: dict
) -> dict:
    """Same-bytes copy and each backend's default variant at one shape, with each L2 flush."""
    device = torch.device("cuda")
    nbytes = timing.minimal_bytes(num_reqs, vocab, WIDTH, dtype.itemsize)
    source = torch.randint(0, 256, (nbytes // 2,), dtype=torch.uint8, device=device)
    target = torch.empty_like(source)
    logits = make_logits(num_reqs, vocab, 50, dtype, seed=3, device=device)
    out = SamplingMask.empty(num_reqs, vocab, WIDTH, device=device)
    calls = {"copy": functools.partial(target.copy_, source)}
    for backend in backends:
        calls[backend] = functools.partial(
            compact_sampling_mask, logits, None, WIDTH, backend, out=out
        )
        calls[backend]()
    row = {"num_reqs": num_reqs, "vocab": vocab, "minimal_bytes": nbytes}
    for flush, ceiling in ceilings.items():
        for name, call in calls.items():
            measured = timing.device_time(call, device, REPS, flush)
            row[f"{name}_us_{flush}"] = measured.median_us
            row[f"{name}_pct_{flush}"] = 100 * timing.gbps(nbytes, measured.median_us) / ceiling
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    device = torch.device("cuda")
    backends = [b for b in ("cupy", "triton", "numba") if b in available_backends(device)]
    ceilings, floors = {}, {}
    one = torch.ones(1, device=device)
    for flush in timing.L2_FLUSHES:
        ceilings[flush] = timing.copy_ceiling(device, l2_flush=flush).gbps
        floors[flush] = timing.device_time(functools.partial(one.add_, 1), device, REPS, flush)
        print(
            f"L2 flush {flush}: copy ceiling {ceilings[flush]:.0f} GB/s; one-element kernel "
            f"{floors[flush].median_us:.1f} us"
        )
    rows = []
    for (num_reqs, vocab), (name, dtype) in ((s, d) for s in SHAPES for d in DTYPES.items()):
        row = {"dtype": name, **measure_shape(num_reqs, vocab, dtype, backends, ceilings)}
        rows.append(row)
        for flush in timing.L2_FLUSHES:
            cells = " ".join(f"{b} {row[f'{b}_pct_{flush}']:5.1f}%" for b in backends)
            print(
                f"R={num_reqs:5d} V={vocab:6d} {name} {row['minimal_bytes'] / 1e6:6.1f} MB "
                f"flush {flush:5s} same-bytes copy {row[f'copy_us_{flush}']:6.1f} us "
                f"{row[f'copy_pct_{flush}']:5.1f}%  {cells}",
                flush=True,
            )
    report = {
        "device": torch.cuda.get_device_name(),
        "copy_ceiling_gbps": ceilings,
        "one_element_kernel_us": {flush: floor.median_us for flush, floor in floors.items()},
        "width": WIDTH,
        "support": "50 kept ids per row",
        "rows": rows,
    }
    if args.out:
        with open(args.out, "w") as f:
            json.dump(report, f, indent=2)


if __name__ == "__main__":
    main()
