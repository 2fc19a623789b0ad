"""The comparison harness itself: CLI end to end, the conformance gate, timing sanity, auto order.

Runs on the CPU. Nothing here asserts performance; timings are only checked for plausibility.
"""

from __future__ import annotations

import csv
import dataclasses
import gzip
import itertools
import json
import platform
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
import torch

from masks import SamplingMask, compare, timing
from masks.__main__ import main
from masks.backends import torch as torch_backend
from masks.testing import reference

REPO = Path(__file__).resolve().parents[1]
CPU = torch.device("cpu")
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
TINY = compare.Grid((2,), (200,), ("float32",), ("full",), width=64)
SPARSE = compare.Grid((2,), (200,), ("float32",), ("sparse",), width=64)


def test_cli_quick_writes_table_json_csv_and_png(tmp_path: Path) -> None:
    options = ["--quick", "--device", "cpu", "--backends", "torch", "--out-dir", str(tmp_path)]
    options += ["--write-auto-order", str(tmp_path / "auto_order.json"), "--l2-flush", "write"]
    done = subprocess.run(
        [sys.executable, "-m", "masks", "compare", *options],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=REPO,
    )
    assert done.returncode == 0, done.stderr
    assert "time us" in done.stdout and "dispatch us" in done.stdout

    report = json.loads((tmp_path / "compare.json").read_text())
    shapes = compare.QUICK_GRID.shapes()
    assert len(report["results"]) == len(shapes)
    assert {r["status"] for r in report["results"]} == {"ok"}
    assert all(r["device_time_us"] > 0 and r["dispatch_us"] > 0 for r in report["results"])
    assert all(r["host_probe_us"] > 0 for r in report["results"])
    assert report["copy_ceiling"]["gbps"] > 0
    assert report["settings"]["l2_flush"] == "write"
    environment = report["environment"]
    assert environment["device_type"] == "cpu"
    assert environment["host"] == platform.node()
    assert environment["code_sha256"] == compare.code_fingerprint()
    assert environment["command"].startswith("masks compare --quick")
    assert "torch" in environment["libraries"]

    with (tmp_path / "compare.csv").open(newline="") as file:
        rows = list(csv.DictReader(file))
    assert tuple(rows[0]) == compare.CSV_FIELDS
    assert [(int(r["num_reqs"]), r["support"]) for r in rows] == [
        (s.num_reqs, s.support) for s in shapes
    ]

    auto_order = json.loads((tmp_path / "auto_order.json").read_text())
    assert auto_order["order"] == {"cpu": ["torch"], "cuda": ["torch"]}
    assert (REPO / auto_order["source"]).resolve() == (tmp_path / "compare.json").resolve()

    pngs = sorted(tmp_path.glob("compare-*.png"))
    assert [p.name for p in pngs] == ["compare-float32-full.png", "compare-float32-sparse.png"]
    assert all(p.read_bytes().startswith(PNG_MAGIC) for p in pngs)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="a GPU's UUID needs a CUDA device")
def test_environment_names_the_gpu_by_uuid() -> None:
    environment = compare.environment(torch.device("cuda"), "masks compare")
    assert uuid.UUID(environment["device_uuid"])  # nvidia-smi's, without its "GPU-" prefix


def _flip_one_mask_bit(calls: list[int]):
    def wrong(logits, num_sampled_tokens, out) -> None:
        calls.append(1)
        torch_backend.compact(logits, num_sampled_tokens, out)
        out.packed_mask[1, 3] ^= 1 << 2

    return wrong


def test_gate_rejects_a_wrong_kernel_and_does_not_time_it() -> None:
    calls: list[int] = []
    config = compare.Config(TINY, ("torch",), CPU, budget_s=0.005, progress=False)
    report = compare.run(config, extra_backends={"wrong": _flip_one_mask_bit(calls)})

    by_name = {r.backend: r for r in report.results}
    wrong = by_name["wrong"]
    assert wrong.status == "mismatch"
    assert "packed_mask differs at row 1, column 3" in wrong.detail
    assert calls == [1], "the gate call only: a failing backend is not timed"
    assert wrong.device_time_us is None and wrong.dispatch_us is None and wrong.reps == 0
    assert wrong.host_probe_us is None
    assert "mismatch: packed_mask differs at row 1, column 3" in compare.render_table(report)
    assert by_name["torch"].status == "ok" and by_name["torch"].device_time_us > 0


@pytest.mark.parametrize("kept_by_mistake", ["+inf", "nan"])
def test_gate_rejects_a_kernel_that_keeps_plus_inf_or_nans(kept_by_mistake: str) -> None:
    """The gate's logits hold +inf and NaNs where they are not kept, not only -inf: a kernel
    that keeps either kind fails."""

    def keeps_one_kind(logits, num_sampled_tokens, out) -> None:
        wrong = logits == float("inf") if kept_by_mistake == "+inf" else logits.isnan()
        expected = reference(logits.masked_fill(wrong, 0.0), max_num_kept=out.width)
        for field in ("token_ids", "counts", "packed_mask"):
            getattr(out, field).copy_(getattr(expected, field))

    config = compare.Config(SPARSE, (), CPU, progress=False)
    (result,) = compare.run(config, extra_backends={"wrong": keeps_one_kind}).results
    assert result.status == "mismatch" and "counts differs at row 0" in result.detail


def test_gate_reports_a_crashing_kernel() -> None:
    def crash(logits, num_sampled_tokens, out) -> None:
        raise RuntimeError("boom")

    config = compare.Config(TINY, (), CPU, progress=False)
    (result,) = compare.run(config, extra_backends={"crash": crash}).results
    assert (result.status, result.detail) == ("error", "RuntimeError: boom")


@pytest.mark.parametrize("left", ["counts", "token_ids", "packed_mask"])
def test_gate_catches_entries_left_unwritten(left: str) -> None:
    """The gate's output starts as junk, so a kernel that leaves entries as it found them fails:
    the counts, the -1 padding (the kept ids written), or the mask's bits that are 0 (the set
    ones OR-ed in)."""

    def lazy(logits, num_sampled_tokens, out) -> None:
        expected = reference(logits, max_num_kept=out.width)
        for field in ("token_ids", "counts", "packed_mask"):
            if field != left:
                getattr(out, field).copy_(getattr(expected, field))
        if left == "token_ids":
            kept = expected.token_ids >= 0
            out.token_ids[kept] = expected.token_ids[kept]
        elif left == "packed_mask":
            out.packed_mask.bitwise_or_(expected.packed_mask)

    config = compare.Config(SPARSE, (), CPU, progress=False)
    (result,) = compare.run(config, extra_backends={"lazy": lazy}).results
    assert result.status == "mismatch" and f"{left} differs at row 0" in result.detail


def test_a_failure_outside_the_gate_stops_the_run_but_keeps_results(monkeypatch) -> None:
    prepare_case = compare.prepare_case

    def fail_on_the_second_shape(shape, device, seed):
        if shape.num_reqs == 3:
            raise RuntimeError("context lost")
        return prepare_case(shape, device, seed)

    monkeypatch.setattr(compare, "prepare_case", fail_on_the_second_shape)
    grid = compare.Grid((2, 3), (200,), ("float32",), ("full",), width=64)
    report = compare.run(compare.Config(grid, ("torch",), CPU, budget_s=0.005, progress=False))
    assert [r.num_reqs for r in report.results] == [2]
    assert report.stopped == "stopped at R3-V200-float32-full: RuntimeError: context lost"
    assert report.to_dict()["stopped"] == report.stopped
    assert "INCOMPLETE" in compare.render_table(report)


def test_time_limit_stops_before_the_next_shape() -> None:
    grid = compare.Grid((2, 3), (200,), ("float32",), ("full",), width=64)
    config = compare.Config(grid, ("torch",), CPU, budget_s=0.005, progress=False, time_limit_s=0)
    report = compare.run(config)
    assert report.results == []
    assert report.stopped == "time limit of 0 s reached before R2-V200-float32-full"


def test_skipped_measurements_are_one_line_per_reason() -> None:
    """Without a GPU most of the grid is too large for the emulations: the table says so once,
    naming the backends and counting the shapes, and keeps a line for each measured one."""
    shapes = compare.CPU_GRID.shapes()[:3]
    native = compare.Result.for_shape("torch", shapes[0], emulated=False)
    native.device_time_us = 100.0
    skipped = []
    for backend in ("triton", "cupy:split"):
        for shape in shapes:
            result = compare.Result.for_shape(backend, shape, emulated=True)
            result.status, result.detail = "skipped", "too large"
            skipped.append(result)
    ceiling = timing.CopyCeiling(10.0, 2, 0.2)
    report = compare.Report({"device_name": "test"}, {}, ceiling, [native, *skipped])
    table = compare.render_table(report).splitlines()
    assert "skipped 6 measurement(s), 3 shape(s) of triton, cupy:split: too large" in table
    assert sum("too large" in line for line in table) == 1
    assert sum(line.startswith("torch ") for line in table) == 2  # its line and its summary


@pytest.mark.parametrize(
    ("device_type", "measurements", "kept", "first_spread"),
    [
        ("cuda", [(10.5, 10.1, 11.0)], 0, None),  # steady: taken once
        ("cuda", [(30.0, 10.0, 340.0), (10.5, 10.1, 11.0)], 1, 34.0),  # the second is steadier
        ("cuda", [(30.0, 20.0, 40.0), (15.0, 10.0, 300.0)], 0, 2.0),  # steadier, not faster
        ("cpu", [(30.0, 10.0, 340.0)], 0, None),  # a host's wall clock: never taken again
        ("cuda", [(0.0, 0.0, 2.0), (1.0, 1.0, 1.1)], 1, 2000.0),  # a p10 of 0: still finite
    ],
)
def test_an_unsteady_gpu_measurement_is_taken_once_more(
    monkeypatch, device_type: str, measurements: list, kept: int, first_spread: float | None
) -> None:
    """A GPU measurement whose p90 passes `UNSTEADY_SPREAD` x its p10 is taken again, and the
    steadier of the two (by spread, not by speed) is the one recorded."""
    timings = [timing.Timing(*times, samples=20) for times in measurements]
    taken = iter(timings)
    monkeypatch.setattr(timing, "device_time", lambda call, device, reps, l2_flush: next(taken))
    measured, spread = timing.steady_device_time(
        lambda: None, torch.device(device_type), 20, "read"
    )
    assert measured is timings[kept] and spread == first_spread
    assert next(taken, None) is None, "not every measurement was taken"


def _timed(backend: str, p10: float, p90: float, first_spread: float | None) -> compare.Result:
    result = compare.Result.for_shape(backend, compare.QUICK_GRID.shapes()[0], emulated=False)
    result.device_time_us, result.device_time_p10_us, result.device_time_p90_us = p10, p10, p90
    result.first_spread = first_spread
    return result


def test_a_re_measured_cell_says_so() -> None:
    steady = _timed("cupy", 10.0, 11.0, None)
    remeasured = _timed("numba", 10.0, 12.0, 34.4)
    unsteady = _timed("triton", 10.0, 20.0, 3.0)
    ceiling = timing.CopyCeiling(10.0, 2, 0.2, first_spread=2.5)
    report = compare.Report({"device_name": "test"}, {}, ceiling, [steady, remeasured, unsteady])
    assert compare.render_table(report).startswith(
        "test: copy ceiling 10 GB/s (read + write of 0.00 GiB in 0 us); re-measured: p90 2.5x p10"
    )
    assert compare.status_text(steady) == "ok"
    assert compare.status_text(remeasured) == "ok (re-measured: p90 34.4x p10 at first, 1.2x kept)"
    assert compare.status_text(unsteady) == "ok (re-measured: p90 3.0x p10 at first, 2.0x kept)"
    zero = _timed("torch", 0.0, 0.5, 2000.0)  # a p10 of 0 renders (the spread's 1 ns floor)
    assert compare.status_text(zero) == "ok (re-measured: p90 2000.0x p10 at first, 500.0x kept)"
    footer = (
        "re-measured 2 measurement(s) whose p90 passed 1.5x their p10 (status column); 1 still did"
    )
    assert footer in compare.render_table(report).splitlines()


def test_emulated_results_are_labelled_and_not_plotted(tmp_path: Path) -> None:
    shape = compare.QUICK_GRID.shapes()[0]
    emulated = compare.Result.for_shape("triton", shape, emulated=True)
    emulated.device_time_us = 1e5
    native = compare.Result.for_shape("torch", shape, emulated=False)
    native.device_time_us, native.pct_of_ceiling = 100.0, 1.0
    ceiling = timing.CopyCeiling(10.0, 2, 0.2)
    report = compare.Report({"device_name": "test"}, {}, ceiling, [native, emulated])

    assert native.timed and not emulated.timed
    assert compare.EMULATED_NOTE in compare.render_table(report)
    compare.write_csv(report, tmp_path / "out.csv")
    assert compare.EMULATED_NOTE in (tmp_path / "out.csv").read_text()
    pytest.importorskip("matplotlib")
    from matplotlib.figure import Figure

    figure = compare._plot_group(Figure, report, shape.dtype, shape.support, [native, emulated])
    plotted = {line.get_label() for axis in figure.axes for line in axis.get_lines()}
    assert "torch" in plotted and "triton" not in plotted
    (png,) = compare.write_plots(report, tmp_path)
    assert png.read_bytes().startswith(PNG_MAGIC)


def test_figures_derive_from_the_device_time(monkeypatch) -> None:
    """GB/s, % of the ceiling and the speedups follow exactly from a known device time."""
    shape = compare.Shape(2, 200, "float32", "full", 64)
    case = compare.prepare_case(shape, CPU, seed=0)
    ceiling = timing.CopyCeiling(gbps=8.0, bytes_moved=2, median_us=0.25)
    known = {"torch": 100.0, compare.ROWWISE: 50.0, "fast": 10.0}
    results = []
    for name, time_us in known.items():
        fixed = timing.Timing(time_us, time_us, time_us, 10)
        monkeypatch.setattr(timing, "device_time", lambda *args, fixed=fixed, **kwargs: fixed)
        candidate = (
            compare.registry_candidate(name) if name == "torch"
            else compare.injected_candidate(name, torch_backend.compact)
        )  # fmt: skip
        results.append(compare.measure(candidate, case, ceiling))
    compare.add_speedups(results)
    torch_result, rowwise, fast = results
    # per row: 200 fp32 logits read; 64 ids, a count and 25 mask bytes written
    minimal_bytes = 2 * (200 * 4 + 64 * 4 + 4 + 25)
    assert fast.gbps == pytest.approx(minimal_bytes / 10e-6 / 1e9, rel=1e-12)
    assert fast.pct_of_ceiling == pytest.approx(100 * fast.gbps / 8.0, rel=1e-12)
    assert torch_result.gbps == pytest.approx(fast.gbps / 10, rel=1e-12)
    assert fast.speedup_vs_torch == pytest.approx(10.0)
    assert torch_result.speedup_vs_torch == pytest.approx(1.0)
    assert fast.speedup_vs_rowwise == pytest.approx(5.0)
    assert rowwise.speedup_vs_torch == pytest.approx(2.0)


def test_the_spin_outlasts_twice_the_host_time() -> None:
    assert timing.busy_cycles(0.0) == timing.BUSY_CYCLES
    assert timing.busy_cycles(1e-3) == 2 * 1000 * timing.CYCLES_PER_US  # 1 ms of host time


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_host_time_before_a_launch_stays_out_of_its_device_time() -> None:
    """A call that spends 2 ms on the host before its one launch (longer than the least spin,
    ~0.2 ms) still measures only its kernel: the spin outlasts the call's host time."""
    cuda = torch.device("cuda", torch.cuda.current_device())
    counter = torch.zeros(1, device=cuda)

    def slow_to_enqueue() -> None:
        time.sleep(0.002)
        counter.add_(1)

    slow_to_enqueue()
    assert timing.device_time(slow_to_enqueue, cuda, reps=5).median_us < 500


def test_report_survives_its_json(tmp_path: Path) -> None:
    """`Report.from_dict` reads back what `write_json` wrote (plots are redrawn from it)."""
    shape = compare.QUICK_GRID.shapes()[0]
    timed = compare.Result.for_shape("torch", shape, emulated=False)
    timed.device_time_us, timed.pct_of_ceiling, timed.host_probe_us = 100.0, 1.0, 5.5
    report = compare.Report(
        {"device_name": "test"},
        {"budget_ms": 20},
        timing.CopyCeiling(10.0, 2, 0.2),
        [timed, compare.Result.for_shape("triton", shape, emulated=True)],
        "stopped early",
    )
    compare.write_json(report, tmp_path / "compare.json")
    loaded = compare.Report.from_dict(json.loads((tmp_path / "compare.json").read_text()))
    assert loaded == report


def test_read_json_reads_plain_and_gzipped_records(tmp_path: Path) -> None:
    """Older results folders keep their large records as ``compare.json.gz``: the readers
    (`read_json`, used by ``--auto-order-from`` and the benchmarks' scripts) take either."""
    record = _results("cuda", {"torch": [100.0, 400.0], "cupy": [10.0, 20.0]})
    text = json.dumps(record, indent=2)
    plain, packed = tmp_path / "compare.json", tmp_path / "compare.json.gz"
    plain.write_text(text)
    packed.write_bytes(gzip.compress(text.encode(), mtime=0))
    assert packed.read_bytes()[:2] == b"\x1f\x8b"  # really gzip, not a renamed plain file
    assert compare.read_json(packed) == compare.read_json(plain) == record


def test_default_backends_start_with_the_reference() -> None:
    assert compare.default_backends(CPU)[0] == "torch"


def test_fewer_reps_than_the_least_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["compare", "--device", "cpu", "--no-emulate", "--quick", "--reps", "3"]
    assert main(argv) == 2
    assert f"--reps must be at least {compare.MIN_REPS}, got 3" in capsys.readouterr().err


def test_unknown_backend_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    # --no-emulate: without a GPU the command turns the emulations on for its whole process
    assert main(["compare", "--device", "cpu", "--no-emulate", "--backends", "nope"]) == 2
    assert "backend must be one of" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("option", "message"),
    [
        (["--backends", "torch,torch"], "'torch' given twice"),  # else measured and counted twice
        (["--dtypes", "fp32,float32"], "'float32' given twice"),
        (["--num-reqs", "4,-1"], "sizes are ints >= 0, got -1"),
        (["--width", "-1"], "sizes are ints >= 0, got -1"),  # else a table stopped at its start
        (["--vocab", "x"], "sizes are ints >= 0, got 'x'"),
    ],
)
def test_a_bad_grid_option_is_a_usage_error(
    option: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["compare", "--device", "cpu", "--no-emulate", "--quick", *option])
    assert exited.value.code == 2
    assert message in capsys.readouterr().err


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks a machine without CUDA")
def test_cuda_without_a_gpu_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compare", "--device", "cuda", "--no-emulate", "--quick"]) == 2
    assert "--device cuda: torch sees no CUDA device" in capsys.readouterr().err


def test_device_time_of_a_known_sleep() -> None:
    measured = timing.device_time(lambda: time.sleep(0.002), CPU, reps=5)
    assert measured.samples == 5
    assert 2000 <= measured.median_us < 100_000
    assert measured.p10_us <= measured.median_us <= measured.p90_us


@pytest.mark.parametrize(
    "source", ["api.py", "backends/compact.cu", "backends/cuda_emulation.h", "auto_order.json"]
)
def test_code_fingerprint_names_the_package_source(
    source: str, tmp_path: Path, monkeypatch
) -> None:
    """The fingerprint covers every kind of source file (Python, CUDA C, the emulation's header,
    auto's order): a copy of the package gives the same one, and an edit in the copy changes it."""
    import shutil

    import masks

    copy = tmp_path / "masks"
    shutil.copytree(Path(masks.__file__).parent, copy, ignore=shutil.ignore_patterns("__pycache__"))
    original = compare.code_fingerprint()
    assert len(original) == 64
    monkeypatch.setattr(masks, "__file__", str(copy / "__init__.py"))
    assert compare.code_fingerprint() == original
    edited = copy / source
    edited.write_bytes(edited.read_bytes() + b"\n")
    assert compare.code_fingerprint() != original


def test_package_changed_reads_the_package_not_the_checkout(tmp_path: Path) -> None:
    """A file beside the package (a carried wheel) leaves the commit naming the code; an edit or
    a new file in the package does not."""
    checkout, outside = tmp_path / "checkout", tmp_path / "outside"
    package = checkout / "masks"
    package.mkdir(parents=True)
    outside.mkdir()
    (package / "kernel.py").write_text("A = 1\n")
    git = ("git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(checkout))
    subprocess.run((*git, "init", "-q"), check=True)
    subprocess.run((*git, "add", "."), check=True)
    subprocess.run((*git, "commit", "-q", "-m", "c"), check=True)
    (checkout / "numpy.whl").write_bytes(b"wheel")
    assert compare.package_changed(package) is False
    (package / "new.py").write_text("")
    assert compare.package_changed(package) is True
    (package / "new.py").unlink()
    (package / "kernel.py").write_text("A = 2\n")
    assert compare.package_changed(package) is True
    assert compare.package_changed(outside) is None  # no checkout


def test_device_time_accepts_only_the_known_l2_flushes() -> None:
    assert timing.L2_FLUSHES == ("read", "write")
    with pytest.raises(ValueError, match="l2_flush must be one of"):
        timing.device_time(lambda: None, CPU, reps=1, l2_flush="none")


def test_host_dispatch_of_a_known_sleep() -> None:
    (measured,) = timing.interleaved_dispatch_times([(lambda: time.sleep(0.001), 2)], CPU, 3)
    assert measured.samples == 3 and 1000 <= measured.median_us < 100_000


def test_interleaved_dispatch_rounds_run_every_call_once_in_changing_orders() -> None:
    order: list[str] = []
    names = [str(i) for i in range(6)]
    calls = [(lambda name=name: order.append(name), 1) for name in names]
    measured = timing.interleaved_dispatch_times(calls, CPU, rounds=4)
    per_batch = timing.WARM_CALLS + 1
    batches = order[::per_batch]
    assert order == [name for name in batches for _ in range(per_batch)]
    rounds = [batches[r * 6 : (r + 1) * 6] for r in range(4)]
    assert all(sorted(round_order) == names for round_order in rounds)
    predecessors = {pair for round_order in rounds for pair in itertools.pairwise(round_order)}
    assert len(predecessors) > 6, "a fixed or rotated order gives each call one predecessor"
    assert [m.samples for m in measured] == [4] * 6
    order.clear()
    timing.interleaved_dispatch_times(calls, CPU, rounds=4)
    assert order[::per_batch] == batches, "seeded: the same orders every time"


def test_a_slow_spell_of_the_host_lands_on_every_interleaved_call_alike() -> None:
    """The host is slow for three batches' worth of calls. Measured one call after the other,
    the first call takes all three slow batches and its median is slow; interleaved, neither."""
    calls_made = [0]
    per_batch = timing.WARM_CALLS + 2
    spell = range(2 * per_batch, 5 * per_batch)  # batches 3-5 of ten

    def call() -> None:
        time.sleep(0.004 if calls_made[0] in spell else 0.0005)
        calls_made[0] += 1

    one_after_other = [timing.interleaved_dispatch_times([(call, 2)], CPU, 5)[0] for _ in range(2)]
    assert one_after_other[0].median_us > 3000 > one_after_other[1].median_us
    calls_made[0] = 0
    interleaved = timing.interleaved_dispatch_times([(call, 2), (call, 2)], CPU, rounds=5)
    assert all(m.median_us < 3000 for m in interleaved)


def _sleeping(seconds: float) -> compare.Candidate:
    """A correct backend that also sleeps ``seconds`` per call (its host dispatch)."""

    def run(logits: torch.Tensor, out: SamplingMask) -> None:
        torch_backend.compact(logits, None, out)
        time.sleep(seconds)

    return compare.Candidate(f"sleep{seconds}", run)


def test_each_backend_gets_its_own_dispatch_time_and_the_shapes_probe() -> None:
    case = compare.prepare_case(TINY.shapes()[0], CPU, seed=0)
    emulated = dataclasses.replace(_sleeping(0.0), name="emulated", emulated=True)
    slow, fast, emulated_result = compare.measure_candidates(
        [_sleeping(0.004), _sleeping(0.0002), emulated],
        case,
        timing.CopyCeiling(10.0, 2, 0.2),
        budget_s=0.02,
    )
    assert slow.dispatch_us > 3500 > 2000 > fast.dispatch_us > 150
    assert slow.host_probe_us == fast.host_probe_us < 150
    assert emulated_result.status == "ok" and emulated_result.device_time_us is not None
    assert emulated_result.dispatch_us is None and emulated_result.host_probe_us is None


def test_the_warm_calls_that_open_a_batch_are_not_timed(monkeypatch) -> None:
    """The first calls after each drain of the queue are slow; only they."""
    cold = [0]
    monkeypatch.setattr(timing, "synchronize", lambda device: cold.__setitem__(0, 2))

    def call() -> None:
        time.sleep(0.008 if cold[0] > 0 else 0.0005)
        cold[0] -= 1

    (measured,) = timing.interleaved_dispatch_times([(call, 2)], CPU, rounds=3)
    assert timing.WARM_CALLS == 2 and measured.median_us < 3000


def test_summary_statistics_and_budgeted_reps() -> None:
    summary = timing.summarize([5e-6, 1e-6, 3e-6, 2e-6, 4e-6])
    assert summary.median_us == pytest.approx(3.0)
    assert (summary.p10_us, summary.p90_us) == pytest.approx((1.0, 5.0))
    assert timing.reps_within(1.0, 0.01, 10, 50) == 50
    assert timing.reps_within(1.0, 0.5, 10, 50) == 10
    assert timing.reps_within(1.0, 0.04, 10, 50) == 25


def test_minimal_bytes_counts_logits_once_and_outputs_once() -> None:
    # 2 rows: 1027 fp32 logits, 256 ids, one count, 129 mask bytes each.
    assert timing.minimal_bytes(2, 1027, 256, 4) == 2 * (1027 * 4 + 256 * 4 + 4 + 129)
    assert timing.minimal_bytes(1, 100, 2048, 2) == 100 * 2 + 100 * 4 + 4 + 13


def test_copy_ceiling_is_positive() -> None:
    ceiling = timing.copy_ceiling(CPU, nbytes=1 << 20)
    assert ceiling.bytes_moved == 2 << 20 and ceiling.gbps > 0


def _results(
    device_type: str,
    times: dict[str, list[float | None]],
    dispatch: dict[str, list[float | None]] | None = None,
) -> dict:
    """A results JSON with one shape per position in the time lists (None: failed), each call's
    host dispatch 1 us unless ``dispatch`` gives a backend's (None: not measured)."""
    rows = []
    for backend, per_shape in times.items():
        dispatch_us = (dispatch or {}).get(backend, [1.0] * len(per_shape))
        for index, time_us in enumerate(per_shape):
            rows.append(
                {
                    "backend": backend,
                    "num_reqs": 1 << index,
                    "vocab_size": 151936,
                    "dtype": "float32",
                    "support": "sparse",
                    "width": 2048,
                    "emulated": backend == "numba",
                    "status": "mismatch" if time_us is None else "ok",
                    "device_time_us": time_us,
                    "dispatch_us": dispatch_us[index],
                }
            )
    return {"environment": {"device_type": device_type, "device_name": "GPU"}, "results": rows}


@pytest.mark.parametrize("device_type, other", [("cuda", "cpu"), ("cpu", "cuda")])
def test_auto_order_is_fastest_first_with_torch_last(device_type: str, other: str) -> None:
    results = _results(
        device_type,
        {
            "torch": [100.0, 400.0],
            "triton": [10.0, 20.0],
            "cupy": [20.0, 40.0],
            "slow": [200.0, 800.0],  # slower than torch: auto would never get past torch
            "broken": [1.0, None],  # failed its gate on one shape: never a candidate
            "triton:rowwise": [1.0, 1.0],  # a variant: never a candidate
            "numba": [1.0, 1.0],  # emulated: never a candidate
        },
    )
    auto_order = compare.auto_order_from_results(results, source="x.json")
    assert auto_order["order"] == {device_type: ["triton", "cupy", "torch"], other: ["torch"]}
    assert auto_order["source"] == "x.json"
    assert "over the 2 shapes" in auto_order["note"]
    assert "failing the gate: broken" in auto_order["note"]


def test_auto_order_counts_host_dispatch_with_device_time() -> None:
    # triton's kernels are faster, but its calls cost more: 10 + 30 against 12 + 10 us
    times = {"torch": [100.0, 100.0, 1.0], "triton": [10.0, 10.0, 1.0], "cupy": [12.0, 12.0, 1.0]}
    dispatch = {"torch": [50.0, 50.0, 1.0], "triton": [30.0, 30.0, None], "cupy": [10.0, 10.0, 1.0]}
    auto_order = compare.auto_order_from_results(_results("cuda", times, dispatch))
    assert auto_order["order"]["cuda"] == ["cupy", "triton", "torch"]
    # the third shape is left out: triton's dispatch was not measured there
    assert "over the 2 shapes" in auto_order["note"]
    assert "cupy 22.0 us, triton 40.0 us, torch 150.0 us" in auto_order["note"]


def test_auto_order_cli_round_trip(tmp_path: Path) -> None:
    results_path, order_path = tmp_path / "results.json", tmp_path / "auto_order.json"
    results = _results("cuda", {"torch": [100.0], "cupy": [10.0]})
    results_path.write_text(json.dumps(results))
    argv = ["compare", "--auto-order-from", str(results_path), "--write-auto-order"]
    assert main([*argv, str(order_path)]) == 0
    written = json.loads(order_path.read_text())
    assert written == compare.auto_order_from_results(results, source=results_path.as_posix())


def test_committed_auto_order_matches_its_results() -> None:
    committed = json.loads((REPO / "masks" / "auto_order.json").read_text())
    if committed["source"] is None:
        pytest.skip("masks/auto_order.json names no results file yet (no GPU results committed)")
    results = compare.read_json(REPO / committed["source"])
    assert committed == compare.auto_order_from_results(results, source=committed["source"])
