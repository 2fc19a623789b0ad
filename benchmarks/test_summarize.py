"""`benchmarks/summarize.py` reads the targets strictly: the slowest cell decides."""

from __future__ import annotations

import copy

import pytest
from summarize import summarize

SHAPES = [
    (num_reqs, vocab_size, dtype, support)
    for num_reqs, vocab_sizes in ((1, [151_936]), (4, [151_936]), (16, [151_936]),
                                  (256, [128_256, 151_936, 262_144]))
    for vocab_size in vocab_sizes
    for dtype in ("float32", "bfloat16")
    for support in ("sparse", "dense", "full")
]  # fmt: skip


def _report() -> dict:
    """cupy meeting every target on every cell the targets name (W = 2048): 85% at R=256,
    10 us at R<=16, dispatch 12-14 us at R=1 with the host probe at 6-8 us."""
    results = []
    for index, (num_reqs, vocab_size, dtype, support) in enumerate(SHAPES):
        results.append(
            {
                "backend": "cupy",
                "num_reqs": num_reqs,
                "vocab_size": vocab_size,
                "width": 2048,
                "dtype": dtype,
                "support": support,
                "status": "ok",
                "emulated": False,
                "device_time_us": 10.0,
                "pct_of_ceiling": 85.0,
                "dispatch_us": 12.0 + index % 3,
                "host_probe_us": 6.0 + index % 3,
            }
        )
    environment = {
        "device_name": "NVIDIA H200",
        "git_commit": "c",
        "code_sha256": "0" * 64,
        "date": "d",
    }
    return {
        "environment": environment,
        "copy_ceiling": {"gbps": 4000.0},
        "results": results,
        "stopped": None,
    }


def _row(report: dict, backend: str = "cupy") -> list[str]:
    (row,) = [line for line in summarize(report).splitlines() if line.startswith(f"| {backend} ")]
    return [cell.strip() for cell in row.strip("|").split("|")]


def _set(report: dict, value_key: str, value: float, **where: object) -> dict:
    report = copy.deepcopy(report)
    for result in report["results"]:
        if all(result[key] == wanted for key, wanted in where.items()):
            result[value_key] = value
    return report


def test_every_cell_within_target_is_met() -> None:
    row = _row(_report())
    assert row[1:5] == ["85/85/85", "85/85/85", "0 of 18 < 80", "10.0/10.0/10.0"]
    assert row[5:] == ["12.0/13.0/14.0", "7.0", "yes"]


def test_one_slow_cell_misses_a_target() -> None:
    report = _report()
    slow_dispatch = _set(report, "dispatch_us", 20.5, num_reqs=1, dtype="bfloat16", support="full")
    assert _row(slow_dispatch)[5:] == ["12.0/13.0/20.5", "7.0", "no"]
    slow_support = _set(report, "device_time_us", 12.5, num_reqs=4, support="dense")
    assert _row(slow_support)[4] == "10.0/12.5/10.0"
    assert _row(slow_support)[-1] == "no"
    low_cell = _set(report, "pct_of_ceiling", 79.9, num_reqs=256, dtype="bfloat16", support="dense")
    assert _row(low_cell)[1:4] == ["85/85/85", "85/79/85", "3 of 18 < 80"]  # rounded down
    assert _row(low_cell)[-1] == "no"
    just_over = _set(report, "device_time_us", 12.04, num_reqs=16, support="full")
    assert _row(just_over)[4] == "10.0/10.0/12.1"  # rounded up
    assert _row(just_over)[-1] == "no"
    just_over = _set(report, "dispatch_us", 20.01, num_reqs=1, dtype="float32", support="dense")
    assert _row(just_over)[5].endswith("/20.1")
    assert _row(just_over)[-1] == "no"


@pytest.mark.parametrize("status", ["mismatch", "error"])
def test_a_backend_that_failed_the_gate_misses_its_targets(status: str) -> None:
    report = _report()
    report["results"].append({**report["results"][0], "status": status})
    assert _row(report)[-1] == "no"


def test_a_verdict_needs_every_cell_of_the_targets_in_a_finished_run() -> None:
    """A stopped run, a missing cell or another W reads "incomplete", never "yes"."""
    report = _report()
    assert _row(report)[-1] == "yes"
    stopped = {**report, "stopped": "time limit of 60 s reached before R256-V262144"}
    assert _row(stopped)[-1] == "incomplete"
    for missing in (
        {"num_reqs": 256, "vocab_size": 262_144, "dtype": "bfloat16", "support": "dense"},
        {"num_reqs": 4, "dtype": "float32", "support": "sparse"},
        {"num_reqs": 1},
    ):
        partial = copy.deepcopy(report)
        partial["results"] = [
            r for r in partial["results"] if any(r[k] != v for k, v in missing.items())
        ]
        assert _row(partial)[-1] == "incomplete", missing
    other_width = _set(report, "width", 64, num_reqs=256, vocab_size=128_256)
    assert _row(other_width)[-1] == "incomplete"


def test_only_cells_at_the_targets_width_are_read() -> None:
    """A slow cell at another W (a merged or multi-width run) neither lowers the figures nor
    changes the verdict; the summary says how many cells it left out."""
    report = _report()
    report["results"].append({**report["results"][-1], "width": 256, "pct_of_ceiling": 40.0})
    assert _row(report) == _row(_report())
    assert "Left out: 1 timed cell(s) at W other than 2048." in summarize(report)


def test_variants_and_the_reference_count_cells_below_80() -> None:
    """A variant counts its cells against its family's bandwidth target, and a backend without
    targets (the torch reference) against 80%; neither gets a targets verdict."""
    report = _report()
    variant = [{**r, "backend": "cupy:split", "pct_of_ceiling": 79.0} for r in report["results"]]
    reference = [{**r, "backend": "torch", "pct_of_ceiling": 2.0} for r in report["results"]]
    report["results"] += variant + reference
    for backend in ("cupy:split", "torch"):
        assert _row(report, backend)[3] == "18 of 18 < 80" and _row(report, backend)[-1] == "-"
    assert _row(report)[3] == "0 of 18 < 80"


def test_a_dirty_tree_says_its_commit_is_not_the_code() -> None:
    """A run from a tree with uncommitted changes (or a copied tree whose ``.git`` is stale)
    names its commit as such; the code sha256 is what names the code."""
    report = _report()
    assert "commit c; " in summarize(report)
    report["environment"]["git_dirty"] = True
    assert "commit c plus uncommitted changes; " in summarize(report)


def test_a_run_on_another_gpu_says_the_targets_are_the_h200s() -> None:
    report = _report()
    assert "targets are set for" not in summarize(report)
    report["environment"]["device_name"] = "NVIDIA H100 80GB HBM3"
    assert _row(report)[-1] == "yes"
    assert "The targets are set for an H200; on NVIDIA H100 80GB HBM3 the verdicts" in summarize(
        report
    )


def test_unsteady_cells_are_counted() -> None:
    report = _report()
    for result in report["results"]:
        result["device_time_p10_us"], result["device_time_p90_us"] = 9.8, 10.4
    assert "Unsteady" not in summarize(report)
    report["results"][0]["device_time_p90_us"] = 9.8 * 3
    assert "Unsteady: 1 cell(s) whose p90 passed 1.5x their p10 (cupy)" in summarize(report)
