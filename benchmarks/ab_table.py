"""Side-by-side table of two `masks compare` results JSONs (an A/B of two code versions).

Run: ``python benchmarks/ab_table.py before/compare.json after/compare.json``. Both runs should
come from the same machine and session (each records its own copy ceiling); cells are matched
by (backend, R, V, dtype, support) and only cells timed in both runs are listed.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

from summarize import BANDWIDTH_TARGET as TARGET_PCT
from summarize import LARGE_BATCH

from masks.compare import read_json

Key = tuple[str, int, int, str, str]


def _timed(path: Path) -> tuple[dict[Key, dict], float]:
    report = read_json(path)
    cells = {
        (r["backend"], r["num_reqs"], r["vocab_size"], r["dtype"], r["support"]): r
        for r in report["results"]
        if r["status"] == "ok" and not r["emulated"]
    }
    return cells, report["copy_ceiling"]["gbps"]


def ab_table(before: Path, after: Path) -> str:
    """Markdown: device us and % of the copy ceiling in each run, and the after/before ratio."""
    cells_a, ceiling_a = _timed(before)
    cells_b, ceiling_b = _timed(after)
    lines = [
        f"A = {before} (ceiling {ceiling_a:.0f} GB/s), B = {after} (ceiling {ceiling_b:.0f} GB/s)",
        "",
        "| backend | R | V | dtype | support | A us | B us | B / A | A % ceil | B % ceil |",
        "| --- | ---: | ---: | --- | --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    ratios: dict[tuple[str, str], list[float]] = {}
    below: dict[tuple[str, str], list[int]] = {}
    for key in sorted(cells_a.keys() & cells_b.keys()):
        a, b = cells_a[key], cells_b[key]
        ratio = b["device_time_us"] / a["device_time_us"]
        group = (key[0], key[3])  # backend, dtype
        ratios.setdefault(group, []).append(ratio)
        counts = below.setdefault(group, [0, 0])
        if key[1] >= LARGE_BATCH:  # the batches the bandwidth target is for
            counts[0] += a["pct_of_ceiling"] < TARGET_PCT
            counts[1] += b["pct_of_ceiling"] < TARGET_PCT
        lines.append(
            "| {} | {} | {} | {} | {} | {:.1f} | {:.1f} | {:.2f} | {:.1f} | {:.1f} |".format(
                *key,
                a["device_time_us"],
                b["device_time_us"],
                ratio,
                a["pct_of_ceiling"],
                b["pct_of_ceiling"],
            )
        )
    lines += [
        "",
        "| backend | dtype | cells | geometric mean B / A | range "
        f"| cells < {TARGET_PCT:g}% at R >= {LARGE_BATCH}, A -> B |",
        "| --- | --- | ---: | ---: | --- | --- |",
    ]
    for (backend, dtype), group in sorted(ratios.items()):
        mean = math.exp(sum(map(math.log, group)) / len(group))
        a_below, b_below = below[(backend, dtype)]
        lines.append(
            f"| {backend} | {dtype} | {len(group)} | {mean:.3f} | {min(group):.2f}-{max(group):.2f}"
            f" | {a_below} -> {b_below} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    args = parser.parse_args()
    print(ab_table(args.before, args.after))


if __name__ == "__main__":
    main()
