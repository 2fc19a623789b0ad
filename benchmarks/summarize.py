"""Markdown summary of a `masks compare` results JSON against the project's H200 targets.

Strict readings: the lowest % of the ceiling over R >= 256 (and how many cells there fall below
the bandwidth target), the slowest support at each small R, and the slowest R=1 shape's dispatch
(each shape's dispatch is already a median over batches; the host probe's median over the same
shapes shows how fast the host itself was), all read from the cells timed at the targets' W =
2048. A verdict needs every cell the targets name, in a run that finished: otherwise it reads
"incomplete".

Run: ``python benchmarks/summarize.py benchmarks/results/<gpu>-<date>/compare.json`` (or a
``compare.json.gz``)
"""

from __future__ import annotations

import argparse
import math
import statistics
from collections import defaultdict
from pathlib import Path

from masks.compare import read_json
from masks.timing import UNSTEADY_SPREAD, spread

LARGE_BATCH = 256
LARGE_VOCABS = (128_256, 151_936, 262_144)
SMALL_BATCHES = (1, 4, 16)
SMALL_VOCAB = 151_936
DTYPES = ("float32", "bfloat16")
SUPPORTS = ("sparse", "dense", "full")
WIDTH = 2048
TARGETS = {  # backend family: (min % of copy ceiling at R >= 256, max device us, max dispatch us)
    "triton": (80.0, 12.0, 25.0),
    "cupy": (80.0, 12.0, 20.0),
    "numba": (80.0, 15.0, 25.0),
}
TARGET_GPU = "H200"
"""The GPU the issues set `TARGETS` for: on another, the verdicts read the same thresholds, which
that GPU's bandwidth and SM count move (an H100 reads each small-R time slower and each
R = 256 cell nearer its ceiling)."""
BANDWIDTH_TARGET = 80.0
"""% of the ceiling the cells-below column counts against for a backend outside `TARGETS` (the
torch reference; a variant, ``family:variant``, counts against its family's), and the one
`ab_table.py` counts against."""


def _fmt(value: float | None, spec: str = ".1f") -> str:
    return "-" if value is None else format(value, spec)


def _fmt_up(value: float | None) -> str:
    """A maximum rounded up to a tenth: a time just over its target (12.04 us) never reads as
    the target."""
    return "-" if value is None else format(math.ceil(round(value * 10, 6)) / 10, ".1f")


def _median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def _spread(values: list[float]) -> str:
    """``min/median/max`` of sorted values (the maximum rounded up, as `_fmt_up`)."""
    if not values:
        return "-"
    return "/".join((_fmt(values[0]), _fmt(_median(values)), _fmt_up(values[-1])))


def _complete(report: dict, results: list[dict]) -> bool:
    """Whether a backend's timed ``results`` (at `WIDTH`) hold every cell its targets name, in a
    run that was not stopped: (a) some R >= 256 for each V of `LARGE_VOCABS`, dtype and support;
    (b) each R of `SMALL_BATCHES` at `SMALL_VOCAB`, fp32, every support, whose R = 1 cells also
    give (c) its dispatch figures."""
    cells = {(r["num_reqs"], r["vocab_size"], r["dtype"], r["support"]) for r in results}
    large = {(v, d, s) for n, v, d, s in cells if n >= LARGE_BATCH}
    return (
        not report.get("stopped")
        and all((v, d, s) in large for v in LARGE_VOCABS for d in DTYPES for s in SUPPORTS)
        and all((n, SMALL_VOCAB, "float32", s) in cells for n in SMALL_BATCHES for s in SUPPORTS)
    )


def summarize(report: dict) -> str:
    ok = [r for r in report["results"] if r["status"] == "ok" and not r["emulated"]]
    timed = [r for r in ok if r["width"] == WIDTH]  # the targets' W: other widths move fewer ids
    env = report["environment"]
    ceiling = report["copy_ceiling"]
    commit = env.get("git_commit")
    if env.get("git_dirty"):  # the commit does not name the code: the sha256 does
        commit = f"{commit} plus uncommitted changes"
    lines = [
        f"Device: {env.get('device_name')}; copy ceiling {ceiling['gbps']:.0f} GB/s "
        f"(read + write, measured in the same run); commit {commit}; "
        f"code sha256 {(env.get('code_sha256') or 'not recorded')[:12]}; {env.get('date')}.",
        "",
        "| backend | min % ceiling, R>=256 fp32 (sparse/dense/full) | same, bf16 "
        "| cells < target %, R>=256 | device us R=1/4/16 (V=151936 fp32, slowest support) "
        "| dispatch us R=1 (min/median/max) | host probe us | targets met |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    by_backend: dict[str, list[dict]] = defaultdict(list)
    for result in timed:
        by_backend[result["backend"]].append(result)
    failed = {r["backend"] for r in report["results"] if r["status"] in ("mismatch", "error")}
    for backend, results in by_backend.items():
        large = defaultdict(list)
        for r in results:
            if r["num_reqs"] >= LARGE_BATCH:
                large[(r["dtype"], r["support"])].append(r["pct_of_ceiling"])
        mins = {key: min(values) for key, values in large.items()}
        family_targets = TARGETS.get(backend.split(":")[0])
        min_pct = family_targets[0] if family_targets else BANDWIDTH_TARGET
        cells = [pct for values in large.values() for pct in values]
        below = sum(pct < min_pct for pct in cells)

        def row(dtype: str, mins: dict = mins) -> str:
            """Each support's minimum, rounded down: a cell just below the target (79.9%)
            never reads as the target."""
            floors = (mins.get((dtype, s)) for s in ("sparse", "dense", "full"))
            return "/".join(_fmt(None if m is None else math.floor(m), "d") for m in floors)

        small: dict[int, float] = {}
        for r in results:
            if (
                r["vocab_size"] == SMALL_VOCAB
                and r["dtype"] == "float32"
                and r["num_reqs"] in SMALL_BATCHES
            ):
                small[r["num_reqs"]] = max(small.get(r["num_reqs"], 0.0), r["device_time_us"])
        at_one_row = [r for r in results if r["num_reqs"] == 1]
        dispatch = sorted(r["dispatch_us"] for r in at_one_row)
        probe = sorted(r["host_probe_us"] for r in at_one_row if r.get("host_probe_us"))
        target = family_targets if ":" not in backend else None
        met = "-"
        if target is not None and backend in failed:
            met = "no"
        elif target is not None and not _complete(report, results):
            met = "incomplete"
        elif target is not None:
            met = (
                "yes"
                if (
                    min(mins.values()) >= target[0]
                    and max(small.values()) <= target[1]
                    and max(dispatch) <= target[2]
                )
                else "no"
            )
        lines.append(
            f"| {backend} | {row('float32')} | {row('bfloat16')} | "
            + (f"{below} of {len(cells)} < {min_pct:.0f}" if cells else "-")
            + " | "
            + "/".join(_fmt_up(small.get(n)) for n in SMALL_BATCHES)
            + f" | {_spread(dispatch)} | {_fmt(_median(probe))} | {met} |"
        )
    if TARGET_GPU not in (env.get("device_name") or ""):
        lines += [
            "",
            f"The targets are set for an {TARGET_GPU}; on {env.get('device_name')} the verdicts "
            "read the same thresholds, not the issues' verdicts.",
        ]
    unsteady = [
        r
        for r in timed
        if r.get("device_time_p10_us") is not None
        and spread(r["device_time_p10_us"], r["device_time_p90_us"]) > UNSTEADY_SPREAD
    ]
    if unsteady:
        backends = ", ".join(sorted({r["backend"] for r in unsteady}))
        lines += [
            "",
            f"Unsteady: {len(unsteady)} cell(s) whose p90 passed {UNSTEADY_SPREAD}x their p10 "
            f"({backends}): a spread wider than a call's own, so read their medians with care.",
        ]
    if len(ok) > len(timed):
        lines += ["", f"Left out: {len(ok) - len(timed)} timed cell(s) at W other than {WIDTH}."]
    if failed:
        lines += ["", f"Failed the conformance gate: {', '.join(sorted(failed))}."]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", type=Path)
    print(summarize(read_json(parser.parse_args().results)))


if __name__ == "__main__":
    main()
