"""Sweep the tiling knob of each GPU backend's ``split`` variant at few rows (R = 1, 4, 16).

Each ``split`` picks its tile size from one knob, the tiles it aims to give every SM. This
script times ``split`` at a few values of that knob with the harness's method
(`masks.timing.device_time`: L2 flush, spin, CUDA events, medians) on V=151936 fp32 logits with
sparse, dense and full supports, so the committed defaults can be checked against their
neighbours on the machine at hand. Gated: every call is compared with the reference first.

Run (CUDA): ``python benchmarks/tune_split.py --out tune_split.json``
"""

from __future__ import annotations

import argparse
import functools
import importlib
import json

import torch

from masks import SamplingMask, available_backends, compact_sampling_mask, timing
from masks.testing import assert_masks_equal, make_logits, reference

# backend: (module, knob, values, the cache that must be emptied when the knob changes)
KNOBS = {
    "cupy": ("masks.backends.cupy", "SPLIT_TILES_PER_SM", (2, 4, 8), "_kernels"),
    "triton": ("masks.backends.triton", "_SPLIT_TILES_PER_SM", (1, 2, 4), "_compiled"),
    "numba": ("masks.backends.numba", "SPLIT_TILES_PER_SM", (2, 4, 8), "_plans"),
}
SUPPORTS = {"sparse": 50, "dense": 2048, "full": "full"}
NUM_REQS = (1, 4, 16)
VOCAB = 151_936
WIDTH = 2048
REPS = 200


def sweep(backend: str) -> list[dict]:
    """``split`` of ``backend`` at each value of its knob, every (R, support)."""
    device = torch.device("cuda", torch.cuda.current_device())
    module_name, knob, values, cache = KNOBS[backend]
    module = importlib.import_module(module_name)
    default = getattr(module, knob)
    cases = {
        (num_reqs, support): make_logits(num_reqs, VOCAB, kept, seed=num_reqs, device=device)
        for num_reqs in NUM_REQS
        for support, kept in SUPPORTS.items()
    }
    rows = []
    try:
        for value in values:
            setattr(module, knob, value)
            getattr(module, cache).clear()
            for (num_reqs, support), logits in cases.items():
                out = SamplingMask.empty(num_reqs, VOCAB, WIDTH, device=device)
                call = functools.partial(
                    compact_sampling_mask, logits, None, WIDTH, f"{backend}:split", out=out
                )
                call()
                assert_masks_equal(out, reference(logits.cpu(), None, WIDTH))
                measured = timing.device_time(call, device, REPS)
                rows.append(
                    {"backend": backend, knob: value, "default": value == default,
                     "num_reqs": num_reqs, "support": support, "us": measured.median_us}
                )  # fmt: skip
                print(
                    f"{backend:6s} {knob}={value}{'*' if value == default else ' '} "
                    f"R={num_reqs:2d} {support:6s} {measured.median_us:6.1f} us",
                    flush=True,
                )
    finally:
        setattr(module, knob, default)
        getattr(module, cache).clear()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    backends = [b for b in KNOBS if b in available_backends("cuda")]
    rows = [row for backend in backends for row in sweep(backend)]
    if args.out:
        with open(args.out, "w") as f:
            json.dump(
                {"device": torch.cuda.get_device_name(), "vocab": VOCAB, "width": WIDTH,
                 "dtype": "float32", "l2_flush": timing.L2_FLUSHES[0], "rows": rows},
                f, indent=2,
            )  # fmt: skip


if __name__ == "__main__":
    main()
