"""Warp-stall samples and executed instructions of run 3's profiles before and after the block
barrier of each `fused` kernel (CuPy and Numba, R = 256, V = 128256, bf16, 2048 kept ids per
row), and pass 1's busiest basic blocks.

Each ``sass-*.csv.gz`` is Nsight Compute's source page (``--page source --csv --print-source
sass``) of one call, one line per SASS instruction in address order; each kernel has one
``BAR.SYNC``. The instruction with the most samples among the first 8 after it holds the samples
of warps waiting at the barrier (the first that needs the barrier's result: CuPy's shared load
of the warp counts, Numba's load of a kernel parameter), reported apart. A basic block is a run
of consecutive instructions executed equally often.

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
    wait = max(samples[barrier + 1 : barrier + 9])
    print(
        f"{backend}: {sum(samples):.0f} samples, {sum(executed) / 1e6:.2f} M warp instructions; "
        f"before the barrier {sum(samples[:barrier]):.0f} samples, "
        f"{sum(executed[:barrier]) / 1e6:.2f} M; waiting at it {wait:.0f}; after it "
        f"{sum(samples[barrier + 1 :]) - wait:.0f} samples, "
        f"{sum(executed[barrier + 1 :]) / 1e6:.2f} M"
    )
    blocks, start = [], 0
    for i in range(1, barrier + 1):
        if i == barrier or executed[i] != executed[start]:
            size = i - start
            blocks.append((executed[start] * size, executed[start], size, sum(samples[start:i])))
            start = i
    for total, times, size, block_samples in sorted(blocks, reverse=True)[:4]:
        print(
            f"  pass 1 block: {size} instructions x {times:.0f} = {total / 1e6:.2f} M, "
            f"{block_samples:.0f} samples"
        )
