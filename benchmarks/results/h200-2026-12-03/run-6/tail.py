"""Warp-stall samples and executed instructions of run 6's profiles before and after the block
barrier of each `fused` kernel (CuPy and Numba, R = 256, V = 128256, bf16, 50 kept ids per row).

Each ``sass-*.csv.gz`` is Nsight Compute's source page (``--page source --csv --print-source
sass``) of one call, one line per SASS instruction in address order; each kernel has one
``BAR.SYNC``. The first shared load after it (of the warp counts) holds the samples of warps
waiting at the barrier, reported apart.

Run: ``python tail.py`` in this folder.
"""

import csv
import gzip
import io

for backend in ("cupy", "numba"):
    with gzip.open(f"sass-{backend}.csv.gz", "rt") as f:
        lines = list(csv.reader(io.StringIO(f.read())))
    header, rows = lines[1], lines[2:]
    source = header.index("Source")
    samples = [float(row[header.index("Warp Stall Sampling (All Samples)")] or 0) for row in rows]
    executed = [float(row[header.index("Instructions Executed")] or 0) for row in rows]
    barrier = next(i for i, row in enumerate(rows) if "BAR.SYNC" in row[source])
    load = next(i for i in range(barrier, len(rows)) if "LDS" in rows[i][source])
    wait = samples[load]
    print(
        f"{backend}: {sum(samples):.0f} samples, {sum(executed) / 1e6:.2f} M warp instructions; "
        f"before the barrier {sum(samples[:barrier]):.0f} samples, "
        f"{sum(executed[:barrier]) / 1e6:.2f} M; waiting at it {wait:.0f}; after it "
        f"{sum(samples[barrier + 1 :]) - wait:.0f} samples, "
        f"{sum(executed[barrier + 1 :]) / 1e6:.2f} M"
    )
