"""The host step, side by side: what it costs to turn a GPU mask into per-request id lists.

Three paths on the same inputs, each checked against the torch reference's CSR, then timed from
the kernel launch to the CSR on the host (wall clock, median; the GPU is synchronised before
each start):

- ``csr``: this library: kernel, then `SamplingMask.to_csr()` (counts, then exactly the kept ids
  cross; rows wider than W decoded on the device).
- ``seed``: the seed-style path: kernel, copy token_ids, counts and the whole bitmask to the host,
  then a Python loop over rows (rows wider than W unpacked on the host).
- ``old``: vLLM's first path: copy only the bitmask, then `np.unpackbits` + `np.nonzero` over the
  whole batch.

On CUDA it also records ``csr_peak_mb``: the device memory `to_csr` takes on top of the mask
(its scratch and the ids' staging; rows wider than W are decoded in bounded chunks).

Run: ``python benchmarks/host_step.py --out host_step.json`` (CUDA if present, else CPU).
"""

from __future__ import annotations

import argparse
import functools
import json
import statistics
import time
from collections.abc import Callable

import numpy as np
import torch
from baselines import per_row_loop_csr

from masks import SamplingMask, compact_sampling_mask
from masks.testing import assert_csr_equal, make_logits, reference

SHAPES = [(r, v) for r in (64, 512, 1024) for v in (151_936, 262_144)]
SUPPORTS = {"sparse50": 50, "full": "full"}
WIDTH = 512


def seed_path(logits: torch.Tensor, backend: str) -> tuple[np.ndarray, np.ndarray]:
    mask = compact_sampling_mask(logits, max_num_kept=WIDTH, backend=backend)
    on_host = SamplingMask(
        mask.token_ids.cpu(), mask.counts.cpu(), mask.packed_mask.cpu(), mask.vocab_size
    )
    return per_row_loop_csr(on_host)


def old_path(logits: torch.Tensor, backend: str) -> tuple[np.ndarray, np.ndarray]:
    mask = compact_sampling_mask(logits, max_num_kept=WIDTH, backend=backend)
    bits = np.unpackbits(
        mask.packed_mask.cpu().numpy(), axis=1, count=mask.vocab_size, bitorder="little"
    )
    rows, columns = np.nonzero(bits)
    offsets = np.searchsorted(rows, np.arange(mask.num_reqs + 1))
    return columns.astype(np.int32), offsets.astype(np.int64)


def csr_path(logits: torch.Tensor, backend: str) -> tuple[np.ndarray, np.ndarray]:
    return compact_sampling_mask(logits, max_num_kept=WIDTH, backend=backend).to_csr()


PATHS: dict[str, Callable] = {"csr": csr_path, "seed": seed_path, "old": old_path}


def csr_peak_mb(logits: torch.Tensor, backend: str) -> float:
    """Device memory that `to_csr` allocates beyond the mask it starts from, at its peak."""
    mask = compact_sampling_mask(logits, max_num_kept=WIDTH, backend=backend)
    torch.cuda.synchronize()
    before = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    mask.to_csr()
    return (torch.cuda.max_memory_allocated() - before) / 2**20


def median_ms(fn: Callable[[], object], device: torch.device, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        if device.type == "cuda":
            torch.cuda.synchronize()
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="auto")
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--out", default=None)
    parser.add_argument("--shapes", default=None, help="e.g. 64x151936,512x151936")
    args = parser.parse_args()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    shapes = (
        SHAPES
        if args.shapes is None
        else [tuple(int(x) for x in s.split("x")) for s in args.shapes.split(",")]
    )
    rows = []
    for (num_reqs, vocab), (support_name, support) in (
        (shape, item) for shape in shapes for item in SUPPORTS.items()
    ):
        logits = make_logits(num_reqs, vocab, support, seed=1, device=device)
        expected = reference(logits, max_num_kept=WIDTH).to_csr()  # every path must give it
        row = {"num_reqs": num_reqs, "vocab": vocab, "support": support_name, "width": WIDTH}
        for name, path in PATHS.items():
            assert_csr_equal(path(logits, args.backend), expected)
            # The host-unpacking paths take seconds on full supports: fewer repeats there.
            repeats = args.repeats if name == "csr" or support != "full" else 3
            call = functools.partial(path, logits, args.backend)
            row[f"{name}_ms"] = median_ms(call, device, repeats)
        peak = ""
        if device.type == "cuda":
            row["csr_peak_mb"] = csr_peak_mb(logits, args.backend)
            peak = f"  csr peak {row['csr_peak_mb']:8.1f} MB"
        rows.append(row)
        print(
            f"R={num_reqs:5d} V={vocab:6d} {support_name:8s}  csr {row['csr_ms']:8.3f} ms  "
            f"seed {row['seed_ms']:8.3f} ms  old {row['old_ms']:8.3f} ms{peak}",
            flush=True,
        )
    report = {
        "device": torch.cuda.get_device_name() if device.type == "cuda" else "cpu",
        "backend": args.backend,
        "torch": torch.__version__,
        "rows": rows,
    }
    if args.out:
        with open(args.out, "w") as f:
            json.dump(report, f, indent=2)


if __name__ == "__main__":
    main()
