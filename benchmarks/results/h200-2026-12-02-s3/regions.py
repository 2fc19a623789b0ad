"""Warp-stall samples and executed instructions of run 2's Nsight Compute SASS pages, summed
over regions of the Triton `fused` kernel (bf16 pairs, 32 KB per iteration, sm_90).

Run from this folder: ``python regions.py`` (prints ``run-2/regions.txt``). The region ends are
SASS offsets read from each tree's disassembly (the same SASS compiles without a GPU: `ta` is
c61de8b, `tr` is ``variants/run1-tr.diff``), each region ending at its last instruction.
"""

from __future__ import annotations

import csv
import gzip

REGIONS = {  # tree: [(region, last offset)]
    "ta": [
        ("prologue", 0x760),
        ("pass 1 loop", 0x1810),
        ("row count, padding, barrier", 0x1D90),
        ("range count loop", 0x2740),
        ("range reductions, bases", 0x2D80),
        ("rank step before the bit loop", 0x3330),
        ("bit loop (rounds)", 0x3620),
        ("rest of the rank step", 0x3700),
        ("after", 1 << 30),
    ],
    "tr": [
        ("prologue", 0x760),
        ("pass 1 loop", 0x1910),
        ("row count, padding, barrier", 0x1ED0),
        ("range count loop", 0x27D0),
        ("range reductions, bases", 0x2CA0),
        ("rank step before the bit loop", 0x3230),
        ("bit loop (PTX, a word at a time)", 0x37A0),
        ("rest of the rank step", 0x3870),
        ("after", 1 << 30),
    ],
}


def summarize(name: str) -> list[str]:
    tree = name.split("-")[0]
    with gzip.open(f"run-2/sass-{name}.csv.gz", "rt") as handle:
        rows = list(csv.reader(handle))
    header, data = rows[1], rows[2:]
    column = {key: header.index(key) for key in header}
    stalls = [h for h in header if h.startswith("stall_") and "Not Issued" not in h]
    first = int(data[0][column["Address"]], 16)
    totals: dict[str, dict[str, float]] = {}
    for row in data:
        offset = int(row[column["Address"]], 16) - first
        region = next(r for r, end in REGIONS[tree] if offset <= end)
        sums = totals.setdefault(region, dict.fromkeys(["samples", "instructions", *stalls], 0.0))
        sums["samples"] += float(row[column["Warp Stall Sampling (All Samples)"]] or 0)
        sums["instructions"] += float(row[column["Instructions Executed"]] or 0)
        for stall in stalls:
            sums[stall] += float(row[column[stall]] or 0)
    all_samples = sum(s["samples"] for s in totals.values())
    instructions = sum(s["instructions"] for s in totals.values())
    lines = [f"{name}: {all_samples:.0f} samples, {instructions:.0f} warp instructions"]
    for region, _ in REGIONS[tree]:
        sums = totals.get(region)
        if not sums:
            continue
        top = sorted(((sums[s], s) for s in stalls), reverse=True)[:3]
        reasons = ", ".join(f"{s[6:]} {v / max(sums['samples'], 1) * 100:.0f}%" for v, s in top)
        lines.append(
            f"  {region:34s} {sums['samples'] / all_samples * 100:5.1f}% of samples, "
            f"{sums['instructions']:9.0f} warp instructions; {reasons}"
        )
    return lines


if __name__ == "__main__":
    print(
        "\n".join(
            line for name in ("ta-dense", "tr-dense", "tr-sparse") for line in summarize(name)
        )
    )
