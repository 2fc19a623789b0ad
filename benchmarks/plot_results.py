"""Redraw the plots (and, with ``--csv``, the CSV) of a committed `masks compare` results JSON.

The JSON is the record; its PNGs (one per dtype x support) and its CSV are derived from it, so
results folders keep only the plots and CSV of the newest grid.

Run: ``python benchmarks/plot_results.py benchmarks/results/<gpu>-<date>/.../compare.json
[--out-dir DIR] [--csv]`` (default: beside the JSON; needs matplotlib, ``pip install
'masks[bench]'``).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from masks.compare import Report, read_json, write_csv, write_plots


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", type=Path, help="a compare.json or compare.json.gz")
    parser.add_argument("--out-dir", type=Path, help="where the PNGs go (default: beside it)")
    parser.add_argument("--csv", action="store_true", help="also write compare.csv there")
    args = parser.parse_args()
    report = Report.from_dict(read_json(args.results))
    out_dir = args.out_dir or args.results.parent
    out_dir.mkdir(parents=True, exist_ok=True)
    for path in write_plots(report, out_dir):
        print(path)
    if args.csv:
        write_csv(report, out_dir / "compare.csv")
        print(out_dir / "compare.csv")


if __name__ == "__main__":
    main()
