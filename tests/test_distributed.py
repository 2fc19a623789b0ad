"""`masks.distributed.gather_sampling_masks` on real process groups (gloo on CPU, NCCL on 2 GPUs).

Each group is a set of subprocesses running this file as a worker (``python test_distributed.py
'<json>'``) with a ``file://`` store in ``tmp_path``. A worker runs every check of its scenario
and writes ``{check: "ok" | error}`` to ``rank<k>.json``; the parent joins the workers with a
deadline, kills stragglers and asserts per check, so a hang fails the test instead of CI.
One group runs all correctness checks (spawning dominates the cost on a 2-core machine).
"""

from __future__ import annotations

import datetime
import itertools
import json
import os
import subprocess
import sys
import time
import traceback
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.distributed as dist

import masks
from masks import compact_sampling_mask
from masks.distributed import _group_rank_of, gather_sampling_masks
from masks.result import SamplingMask
from masks.testing import assert_csr_equal, assert_masks_equal, make_logits

pytestmark = pytest.mark.skipif(
    not (dist.is_available() and dist.is_gloo_available()), reason="torch.distributed with gloo"
)

VOCAB = 301  # not a multiple of 8: the last mask byte has padding bits
WIDTH = 16  # rows with more kept ids than this are decoded from the bitmask by to_csr
SLICES = {2: [5, 0], 4: [3, 0, 6, 1]}  # requests per rank, an empty rank included
GROUP_TIMEOUT_S = 30.0  # correctness groups: never reached unless something is broken
FAILURE_TIMEOUT_S = 2.0  # failure groups: how long survivors wait for the missing rank
JOIN_SLACK_S = 60.0  # process start-up + imports on a loaded 2-core machine


# ----------------------------------------------------------------------------- parent side


def _parents_import_path() -> str:
    """PYTHONPATH for the workers, first the folder of the `masks` this process imported: a
    worker starts in ``tests/``, so an uninstalled checkout (found by ``python -m pytest`` in
    its working directory) would not be importable there, and an installed one could differ."""
    return os.pathsep.join(
        filter(None, [str(Path(masks.__file__).parent.parent), os.environ.get("PYTHONPATH")])
    )


def _run_group(
    tmp_path: Path,
    scenario: str,
    backend: str,
    world_size: int,
    timeout_s: float,
    kill_last: bool = False,
) -> tuple[list[dict | None], list[str]]:
    """Start ``world_size`` workers, join them by a deadline (killing stragglers), read results.

    ``kill_last``: the last rank is meant to hang; kill it once the others are done.
    """
    tmp_path.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": _parents_import_path()}
    processes, logs = [], []
    for rank in range(world_size):
        spec = {
            "scenario": scenario,
            "backend": backend,
            "rank": rank,
            "world_size": world_size,
            "store": str(tmp_path / "store"),
            "out": str(tmp_path / f"rank{rank}.json"),
            "timeout_s": timeout_s,
        }
        log = open(tmp_path / f"rank{rank}.log", "w")  # noqa: SIM115 (closed below)
        logs.append(log)
        processes.append(
            subprocess.Popen(
                [sys.executable, __file__, json.dumps(spec)], stdout=log, stderr=log, env=env
            )
        )
    deadline = time.monotonic() + timeout_s + JOIN_SLACK_S
    for rank, process in enumerate(processes):
        if kill_last and rank == world_size - 1:
            process.kill()
        try:
            process.wait(timeout=max(deadline - time.monotonic(), 0.1))
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    for log in logs:
        log.close()
    results, outputs = [], []
    for rank in range(world_size):
        out = tmp_path / f"rank{rank}.json"
        results.append(json.loads(out.read_text()) if out.exists() else None)
        outputs.append((tmp_path / f"rank{rank}.log").read_text()[-4000:])
    return results, outputs


NCCL_SKIP = pytest.mark.skipif(
    torch.cuda.device_count() < 2, reason="NCCL gather needs 2 CUDA devices"
)


@pytest.fixture(
    scope="module",
    params=[
        pytest.param(("gloo", 2), id="gloo-2"),
        pytest.param(("gloo", 4), id="gloo-4"),
        pytest.param(("nccl", 2), id="nccl-2", marks=NCCL_SKIP),
    ],
)
def correctness_run(request, tmp_path_factory) -> tuple[list[dict | None], list[str]]:
    backend, world_size = request.param
    tmp_path = tmp_path_factory.mktemp(f"{backend}{world_size}")
    return _run_group(tmp_path, "correctness", backend, world_size, GROUP_TIMEOUT_S)


def _assert_check(run: tuple[list[dict | None], list[str]], check: str) -> None:
    results, outputs = run
    for rank, (result, output) in enumerate(zip(results, outputs, strict=True)):
        assert result is not None, f"rank {rank} wrote no result; its output:\n{output}"
        assert result.get(check) == "ok", f"rank {rank}, {check}: {result.get(check)}"


@pytest.mark.parametrize("check", ["all_ranks", "all_ranks_bf16_inactive_rows"])
def test_gather_on_all_ranks_equals_unsharded_mask(correctness_run, check) -> None:
    _assert_check(correctness_run, check)


@pytest.mark.parametrize("check", ["dst_first", "dst_last"])
def test_gather_to_dst_equals_unsharded_mask_and_others_get_none(correctness_run, check) -> None:
    _assert_check(correctness_run, check)


@pytest.mark.parametrize("check", ["all_empty", "zero_width"])
def test_gather_degenerate_shapes(correctness_run, check) -> None:
    _assert_check(correctness_run, check)


@pytest.mark.parametrize(
    "check",
    [
        "vocab_mismatch",
        "width_mismatch",
        "inconsistent_mask",
        "inconsistent_ids_dtype",
        "inconsistent_packed_dtype",
        "inconsistent_rows",
        "mixed_devices",
        "bad_dst",
        "negative_dst",
    ],
)
def test_mismatches_raise_value_error_on_every_rank(correctness_run, check) -> None:
    _assert_check(correctness_run, check)


def test_group_still_usable_after_errors(correctness_run) -> None:
    _assert_check(correctness_run, "after_errors")


def test_gather_on_subgroup_to_global_dst(correctness_run) -> None:
    _assert_check(correctness_run, "subgroup")


@pytest.mark.parametrize(
    ("scenario", "world_size"), [("failed_rank_hangs", 3), ("failed_rank_exits", 2)]
)
def test_failed_rank_surfaces_as_error_on_the_others(tmp_path, scenario, world_size) -> None:
    """A rank that raises before the gather never joins it: the others must error, not hang."""
    hangs = scenario == "failed_rank_hangs"
    results, outputs = _run_group(
        tmp_path, scenario, "gloo", world_size, FAILURE_TIMEOUT_S, kill_last=hangs
    )
    failed = world_size - 1
    assert results[failed] is not None, outputs[failed]
    assert results[failed]["failed"] == "ok", results[failed]
    for rank in range(failed):
        result = results[rank]
        assert result is not None, f"rank {rank} hung or crashed:\n{outputs[rank]}"
        assert result["error"] is not None, f"rank {rank} gathered without the failed rank"
        # The gather started after init, so only the collective's timeout (plus slack) counts.
        assert result["elapsed_s"] < FAILURE_TIMEOUT_S + 5, result
        if hangs:  # only gloo's timeout can end the wait for a live rank that never joins
            assert "Timed out" in result["error"], result


# ----------------------------------------------------------------------------- worker side


class _Worker:
    """One rank: builds the seeded cases, runs the checks, records each outcome."""

    def __init__(self, spec: dict) -> None:
        self.rank, self.world_size = spec["rank"], spec["world_size"]
        if spec["backend"] == "nccl":
            torch.cuda.set_device(self.rank)
            self.device, self.kernel = torch.device("cuda", self.rank), "auto"
        else:
            self.device, self.kernel = torch.device("cpu"), "torch"
        self.out = Path(spec["out"])
        self.results: dict[str, object] = {}

    def save(self) -> None:
        self.out.write_text(json.dumps(self.results))

    def record(self, check: str, function, *args) -> None:
        try:
            function(*args)
            self.results[check] = "ok"
        except Exception:
            self.results[check] = traceback.format_exc()

    def case(self, slices: list[int], index: int, dtype: torch.dtype, inactive: bool):
        """The full seeded batch (CPU), its num_sampled_tokens and slice ``index``'s rows."""
        seed = 7
        total = sum(slices)
        generator = torch.Generator().manual_seed(seed)
        # Supports from empty to full, many wider than WIDTH.
        supports = torch.randint(0, VOCAB + 1, (total,), generator=generator).tolist()
        supports[: min(total, 2)] = [VOCAB, 0][: min(total, 2)]
        logits = make_logits(total, VOCAB, supports, dtype=dtype, seed=seed, junk=True)
        nst = None
        if inactive:
            nst = torch.randint(-1, 3, (total,), generator=generator, dtype=torch.int32)
        start = sum(slices[:index])
        return logits, nst, start, start + slices[index]

    def local_mask(self, logits, nst, start, stop, width: int = WIDTH) -> SamplingMask:
        rows = logits[start:stop].to(self.device)
        rows_nst = None if nst is None else nst[start:stop].to(self.device)
        return compact_sampling_mask(rows, rows_nst, width, backend=self.kernel)

    def check_gather(
        self,
        dst: int | None,
        dtype=torch.float32,
        inactive=False,
        slices=None,
        width=WIDTH,
        members: list[int] | None = None,
    ) -> None:
        """Gather this rank's slice (of ``members``' group if given); compare on receivers."""
        group = None if members is None else dist.new_group(members)  # collective on all ranks
        members = list(range(self.world_size)) if members is None else members
        if self.rank not in members:
            return
        slices = SLICES[self.world_size] if slices is None else slices
        index = dist.get_rank(group)  # group rank: the gathered row order
        logits, nst, start, stop = self.case(slices, index, dtype, inactive)
        local = self.local_mask(logits, nst, start, stop, width)
        got = gather_sampling_masks(local, group=group, dst=dst)
        if dst is not None and dst != self.rank:
            assert got is None, "a non-destination rank received a mask"
            return
        assert got is not None and got.device == self.device, got
        want = compact_sampling_mask(logits, nst, width, backend="torch")
        assert_masks_equal(got, want)
        # The gathered CSR is the concatenation of every rank's own CSR.
        bounds = np.cumsum([0, *slices])
        csrs = [
            compact_sampling_mask(
                logits[a:b], None if nst is None else nst[a:b], width, backend="torch"
            ).to_csr()
            for a, b in itertools.pairwise(bounds)
        ]
        shifts = np.cumsum([0] + [len(ids) for ids, _ in csrs[:-1]])
        ids = np.concatenate([ids for ids, _ in csrs]).astype(np.int32)
        offsets = np.concatenate(
            [[0]] + [o[1:] + s for (_, o), s in zip(csrs, shifts, strict=True)]
        )
        assert_csr_equal(got.to_csr(), (ids, offsets.astype(np.int64)))
        assert got.tolists() == want.tolists()

    def check_raises(self, message: str, mask: SamplingMask, dst: int | None = None) -> None:
        try:
            gather_sampling_masks(mask, dst=dst)
        except ValueError as error:
            assert message in str(error), f"wrong message: {error}"
            return
        raise AssertionError(f"no ValueError (expected {message!r})")

    def correctness(self) -> None:
        last = self.world_size - 1
        self.record("all_ranks", self.check_gather, None)
        self.record("all_ranks_bf16_inactive_rows", self.check_gather, None, torch.bfloat16, True)
        self.record("dst_first", self.check_gather, 0)
        self.record("dst_last", self.check_gather, last, torch.float16, True)
        self.record("all_empty", self.check_gather, last, torch.float32, False, [0] * (last + 1))
        self.record("zero_width", self.check_gather, None, torch.float32, False, None, 0)
        own = SamplingMask.empty(self.rank, VOCAB + self.rank, WIDTH, device=self.device)
        self.record("vocab_mismatch", self.check_raises, "vocab_size must agree", own)
        own = SamplingMask.empty(1, VOCAB, WIDTH + self.rank, device=self.device)
        self.record("width_mismatch", self.check_raises, "width must agree", own, 0)
        broken_on_last_rank = {  # what each check's last rank passes instead of a sound mask
            "inconsistent_mask": lambda m: SamplingMask(
                m.token_ids, m.counts.long(), m.packed_mask, VOCAB
            ),
            "inconsistent_ids_dtype": lambda m: SamplingMask(
                m.token_ids.long(), m.counts, m.packed_mask, VOCAB
            ),
            "inconsistent_packed_dtype": lambda m: SamplingMask(
                m.token_ids, m.counts, m.packed_mask.short(), VOCAB
            ),
            # one row of ids for two requests: copy_ would broadcast it
            "inconsistent_rows": lambda m: SamplingMask(
                m.token_ids[:1], m.counts, m.packed_mask, VOCAB
            ),
            "mixed_devices": lambda m: SamplingMask(
                m.token_ids.to("meta"), m.counts, m.packed_mask, VOCAB
            ),
        }
        for check, break_it in broken_on_last_rank.items():
            own = SamplingMask.empty(2, VOCAB, WIDTH, device=self.device)
            if self.rank == last:
                own = break_it(own)
            self.record(
                check,
                self.check_raises,
                f"inconsistent SamplingMask on group rank(s) [{last}]",
                own,
            )
        own = SamplingMask.empty(1, VOCAB, WIDTH, device=self.device)
        self.record("bad_dst", self.check_raises, "dst must be a rank", own, self.world_size)
        self.record("negative_dst", self.check_raises, "dst must be a rank", own, -1)
        self.record("after_errors", self.check_gather, None)
        # A subgroup without rank 0; dst is a GLOBAL rank, rows come in group-rank order.
        members = list(range(1, self.world_size))
        slices = SLICES[self.world_size][1:]
        self.record(
            "subgroup", self.check_gather, last, torch.float32, True, slices, WIDTH, members
        )

    def failed_rank(self, exits: bool) -> None:
        """The last rank fails before the gather; the others time how long their error takes."""
        mask = SamplingMask.empty(1, VOCAB, WIDTH, device=self.device)
        if self.rank == self.world_size - 1:
            self.results["failed"] = "ok"
            self.save()
            if exits:
                raise SystemExit(1)
            time.sleep(GROUP_TIMEOUT_S)  # alive but never joining (the parent kills it)
            return
        start = time.monotonic()
        try:
            gather_sampling_masks(mask)
            self.results["error"] = None
        except Exception as error:
            self.results["error"] = f"{type(error).__name__}: {error}"
        self.results["elapsed_s"] = time.monotonic() - start


def _worker_main(spec: dict) -> None:
    worker = _Worker(spec)
    dist.init_process_group(
        spec["backend"],
        init_method=f"file://{spec['store']}",
        rank=spec["rank"],
        world_size=spec["world_size"],
        timeout=datetime.timedelta(seconds=spec["timeout_s"]),
    )
    try:
        if spec["scenario"] == "correctness":
            worker.correctness()
        else:
            worker.failed_rank(exits=spec["scenario"] == "failed_rank_exits")
    finally:
        worker.save()
    if spec["scenario"] == "correctness":
        dist.destroy_process_group()
    else:  # a peer is gone or stuck: leave without touching the group again
        sys.stdout.flush()
        os._exit(0)


if __name__ == "__main__":
    _worker_main(json.loads(sys.argv[1]))


def test_dst_is_any_integer_but_a_bool() -> None:
    assert _group_rank_of(None, np.int64(1), 2) == 1  # a rank from NumPy, say
    for wrong in (True, 1.0, "1", torch.tensor(1)):
        with pytest.raises(TypeError, match=f"got {type(wrong).__name__}"):
            _group_rank_of(None, wrong, 2)
