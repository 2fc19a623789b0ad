"""Time backend variants under knob settings at many-row shapes, interleaved by round (ad hoc:
session s9 runs 1-2; s10 runs 1-2, where a failed check is reported and its cell skipped; the
tree it runs in is named in each run's command.sh).

Usage: ``python explore.py OUT.json ROUNDS R,R V,V DTYPES CONFIG [CONFIG ...]``, a CONFIG being
``label=backend:variant[;module.KNOB=value...]`` (the value a Python literal). A label starting
with ``!`` skips the conformance check (probes that leave outputs out on purpose). Every cell is
timed with `masks.timing.device_time` (L2 flush, CUDA events, median of 100) and reported in %
of a copy ceiling measured first.
"""

import collections
import functools
import importlib
import json
import statistics
import sys

import torch

from masks import SamplingMask, compact_sampling_mask, timing
from masks.compare import SUPPORTS
from masks.testing import assert_masks_equal, make_logits

CACHES = {
    "masks.backends.cupy": ("_kernels", "_plans"),
    "masks.backends.numba": ("_plans",),
    "masks.backends.tiling": (),
}
DTYPES = {"bf16": torch.bfloat16, "fp32": torch.float32}
WIDTH = 2048


def parse_config(text: str) -> tuple[str, str, list]:
    label, rest = text.split("=", 1)
    name, *knobs = rest.split(";")
    settings = []
    for knob in knobs:
        path, value = knob.split("=", 1)
        settings.append((path.rsplit(".", 1), eval(value)))
    return label, name, settings


def main() -> None:
    out_path, rounds, rows_arg, vocab_arg, dtype_arg = sys.argv[1:6]
    configs = [parse_config(text) for text in sys.argv[6:]]
    device = torch.device("cuda")
    ceiling = timing.copy_ceiling(device)
    print(f"ceiling {ceiling.gbps:.0f} GB/s", flush=True)
    cells = [
        (r, v, d, s)
        for r in map(int, rows_arg.split(","))
        for v in map(int, vocab_arg.split(","))
        for d in dtype_arg.split(",")
        for s in SUPPORTS
    ]
    inputs = {}
    for r, v, d, s in cells:
        kept = SUPPORTS[s]
        logits = make_logits(r, v, "full" if kept is None else kept, DTYPES[d], r, device)
        inputs[(r, v, d, s)] = (logits, compact_sampling_mask(logits, None, WIDTH, "torch"))
    rows = []
    for round_index in range(int(rounds)):
        for label, name, settings in configs:
            saved = []
            for (module_name, knob), value in settings:
                module = importlib.import_module(module_name)
                saved.append((module, knob, getattr(module, knob)))
                setattr(module, knob, value)
            for module_name, caches in CACHES.items():
                module = importlib.import_module(module_name)
                for cache in caches:
                    getattr(module, cache).clear()
            for (r, v, d, s), (logits, expected) in inputs.items():
                out = SamplingMask.empty(r, v, WIDTH, device=device)
                call = functools.partial(compact_sampling_mask, logits, None, WIDTH, name, out=out)
                call()
                if not label.startswith("!"):
                    try:
                        assert_masks_equal(out, expected)
                    except AssertionError as error:
                        print(
                            f"MISMATCH {label} R={r} V={v} {d} {s}: {str(error)[:300]}", flush=True
                        )
                        continue
                measured = timing.device_time(call, device, 100)
                nbytes = timing.minimal_bytes(r, v, WIDTH, logits.element_size())
                pct = 100 * timing.gbps(nbytes, measured.median_us) / ceiling.gbps
                rows.append(
                    {"round": round_index, "label": label, "R": r, "V": v, "dtype": d,
                     "support": s, "us": measured.median_us, "pct": pct}
                )  # fmt: skip
                print(
                    f"{round_index} {label:14s} R={r:4d} V={v} {d} {s:6s} "
                    f"{measured.median_us:7.2f} us {pct:5.1f}%",
                    flush=True,
                )
            for module, knob, value in saved:
                setattr(module, knob, value)
    with open(out_path, "w") as f:
        json.dump({"ceiling": ceiling.gbps, "rows": rows}, f, indent=1)
    by_cell = collections.defaultdict(list)
    for row in rows:
        by_cell[(row["label"], row["R"], row["V"], row["dtype"], row["support"])].append(row["pct"])
    labels = [label for label, _, _ in configs]
    print("cell".ljust(34) + "".join(label[:12].rjust(13) for label in labels))
    for r, v, d, s in cells:
        medians = (statistics.median(by_cell[(label, r, v, d, s)]) for label in labels)
        print(f"R={r} V={v} {d} {s}".ljust(34) + "".join(f"{m:13.1f}" for m in medians))


if __name__ == "__main__":
    main()
