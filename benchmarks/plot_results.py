"""Redraw the plots of a committed `masks compare` results JSON.

The JSON is the record; its PNGs (one per dtype x support) are derived from it, so results
folders keep only the plots a document shows.

Run: ``python benchmarks/plot_results.py benchmarks/results/<gpu>-<date>/.../compare.json
[--out-dir DIR]`` (default: beside the JSON; needs matplotlib, ``pip install 'masks[bench]'``).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from masks.compare import Report, write_plots


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", type=Path, help="a compare.json")
    parser.add_argument("--out-dir", type=Path, help="where the PNGs go (default: beside it)")
    args = parser.parse_args()
    report = Report.from_dict(json.loads(args.results.read_text()))
    for path in write_plots(report, args.out_dir or args.results.parent):
        print(path)


if __name__ == "__main__":
    main()
