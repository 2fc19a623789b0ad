"""Warp-stall samples of run 3's profiles, summed over the regions of Triton's `fused` kernel.

Each ``sass-*.csv.gz`` is Nsight Compute's source page (``--page source --csv --print-source
sass``) of one call: one line per SASS instruction, in address order. The regions are cut at
instruction indices read off the branches, barriers and exits of this compile (the same 1248
instructions in all three profiles): pass 1's loop ends with its backward branch (index 385);
then the row count and the barrier (to 426), the -1 padding loop (to 468), the barrier and the
branch on the count (to 488), `_count_ranges`'s loop (two iterations, to 616), the ranges'
prefix through shared memory (three barriers, to 691), `_rank_ranges`'s steps (four iterations,
its bit loop at 790-853, to 867) and the truncated rows' path (full rows; after 867).

Run: ``python regions.py`` in this folder.
"""

import csv
import gzip
import io

REGIONS = {
    "pass 1": (0, 386),
    "row count, barrier": (386, 427),
    "padding": (427, 469),
    "barrier, branch": (469, 489),
    "count ranges": (489, 617),
    "range prefix": (617, 692),
    "rank steps": (692, 868),
    "truncated rows": (868, None),
}

for support in ("50", "2048", "full"):
    with gzip.open(f"sass-{support}.csv.gz", "rt") as f:
        lines = list(csv.reader(io.StringIO(f.read())))
    header, rows = lines[1], lines[2:]
    column = header.index("Warp Stall Sampling (All Samples)")
    samples = [float(row[column] or 0) for row in rows]
    total = sum(samples)
    parts = ", ".join(
        f"{name} {sum(samples[a:b]):.0f} ({100 * sum(samples[a:b]) / total:.1f}%)"
        for name, (a, b) in REGIONS.items()
    )
    print(f"support {support}: {len(rows)} instructions, {total:.0f} samples: {parts}")
