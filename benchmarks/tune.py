"""Sweep the tuning knobs of the GPU backends' variants around their committed defaults.

Each knob is a shape/device choice, never a different kernel: ``split``'s tile size (the tiles
it aims to give every SM) at few rows (R = 1, 4, 16), and Triton ``fused``'s mask unit of
pass 1 (bytes or words, by element size), mask words per pass-2 step and the band of rows per
SM in which it loads 16 KB per iteration instead of 32 (R = 256, 512, 768, 1024). Timed with the
harness's method (`masks.timing.steady_device_time`: L2 flush, spin, CUDA events, medians, taken
once more when unsteady) on V=151936 logits with sparse, dense and full supports, so the
committed defaults can be checked against their neighbours on the machine at hand. Gated: every
call is compared with the reference first. Each knob is swept from its committed default, read
from the backend module (so the sweep follows the code), then through the other values `KNOBS`
lists.

Run (CUDA): ``python benchmarks/tune.py --out tune.json [--sweeps split,fused]``
"""

from __future__ import annotations

import argparse
import functools
import importlib
import itertools
import json
import math

import torch

from masks import available_backends, compact_sampling_mask, compare, timing
from masks.testing import assert_masks_equal, make_logits, reference

# (backend, variant): (module, {knob: values to try; the committed default, read from the
# module, goes first and once (`knob_choices`)}, the caches emptied when a knob changes: dicts,
# or functools caches of functions that read a knob)
_TRITON_CACHES = ("_plans", "_split_config")
KNOBS = {
    ("cupy", "split"): (
        "masks.backends.cupy",
        {"SPLIT_TILES_PER_SM": (2, 4, 8)},
        ("_kernels", "_plans"),
    ),
    ("triton", "split"): (
        "masks.backends.triton",
        {"_SPLIT_TILES_PER_SM": (1, 2, 4)},
        _TRITON_CACHES,
    ),
    ("numba", "split"): ("masks.backends.numba", {"SPLIT_TILES_PER_SM": (2, 4, 8)}, ("_plans",)),
    ("triton", "fused"): (
        "masks.backends.triton",
        {
            "_FUSED_UNIT_COLUMNS": ({2: 8, 4: 8, 8: 32},),  # fp32 in byte units
            "_FUSED_RANK_WORDS": (512, 2048),
            # 16 KB per iteration: never; for every dtype beyond 3 x SMs rows
            "_FUSED_SMALL_BLOCK_ROWS_PER_SM": (
                {2: (math.inf, math.inf), 4: (math.inf, math.inf), 8: (math.inf, math.inf)},
                {2: (3.0, math.inf), 4: (3.0, math.inf), 8: (3.0, math.inf)},
            ),
        },
        _TRITON_CACHES,
    ),
}
SHAPES = {  # variant: (row counts, dtypes)
    "split": ((1, 4, 16), (torch.float32,)),
    "fused": ((256, 512, 768, 1024), (torch.float32, torch.bfloat16)),
}
SUPPORTS = {name: "full" if kept is None else kept for name, kept in compare.SUPPORTS.items()}
VOCAB = 151_936
WIDTH = 2048
REPS = 200


def _clear(module, caches: tuple[str, ...]) -> None:
    for name in caches:
        cache = getattr(module, name)
        getattr(cache, "cache_clear", getattr(cache, "clear", None))()


def knob_choices(defaults: dict, knobs: dict) -> dict:
    """Each knob's values to sweep: its committed default first, then the others of ``knobs``."""
    return {
        knob: (defaults[knob], *(value for value in values if value != defaults[knob]))
        for knob, values in knobs.items()
    }


def sweep(backend: str, variant: str) -> list[dict]:
    """``backend:variant`` at every combination of its knobs' values, every shape."""
    device = torch.device("cuda", torch.cuda.current_device())
    module_name, knobs, caches = KNOBS[(backend, variant)]
    module = importlib.import_module(module_name)
    defaults = {knob: getattr(module, knob) for knob in knobs}
    choices = knob_choices(defaults, knobs)
    row_counts, dtypes = SHAPES[variant]
    cases = {
        (num_reqs, dtype, support): make_logits(
            num_reqs, VOCAB, kept, dtype, seed=num_reqs, device=device, junk=True
        )
        for num_reqs in row_counts
        for dtype in dtypes
        for support, kept in SUPPORTS.items()
    }
    rows = []
    try:
        for values in itertools.product(*choices.values()):
            setting = dict(zip(choices, values, strict=True))
            for knob, value in setting.items():
                setattr(module, knob, value)
            _clear(module, caches)
            is_default = setting == defaults
            label = " ".join(f"{k}={v}" for k, v in setting.items()) + ("*" if is_default else "")
            for (num_reqs, dtype, support), logits in cases.items():
                shape = compare.Shape(num_reqs, VOCAB, str(dtype)[6:], support, WIDTH)
                out = compare.junk_filled_output(shape, device)  # a skipped write fails
                call = functools.partial(
                    compact_sampling_mask, logits, None, WIDTH, f"{backend}:{variant}", out=out
                )
                call()
                assert_masks_equal(out, reference(logits.cpu(), None, WIDTH))
                measured, first_spread = timing.steady_device_time(call, device, REPS)
                rows.append(
                    {"backend": backend, "variant": variant, **setting, "default": is_default,
                     "num_reqs": num_reqs, "dtype": str(dtype)[6:], "support": support,
                     "us": measured.median_us, "first_spread": first_spread}
                )  # fmt: skip
                remeasured = "" if first_spread is None else f" (re-measured: {first_spread:.1f}x)"
                print(
                    f"{backend}:{variant} {label} R={num_reqs} {str(dtype)[6:]} {support:6s} "
                    f"{measured.median_us:6.1f} us{remeasured}",
                    flush=True,
                )
    finally:
        for knob, value in defaults.items():
            setattr(module, knob, value)
        _clear(module, caches)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=None)
    parser.add_argument("--sweeps", default="split,fused", help="variants to sweep")
    args = parser.parse_args()
    wanted = args.sweeps.split(",")
    runnable = available_backends("cuda")
    sweeps = [(b, v) for b, v in KNOBS if v in wanted and b in runnable]
    rows = [row for backend, variant in sweeps for row in sweep(backend, variant)]
    if args.out:
        with open(args.out, "w") as f:
            json.dump(
                {"device": torch.cuda.get_device_name(), "vocab": VOCAB, "width": WIDTH,
                 "l2_flush": timing.L2_FLUSHES[0], "rows": rows},
                f, indent=2,
            )  # fmt: skip


if __name__ == "__main__":
    main()
