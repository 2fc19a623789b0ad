"""Time `gather_sampling_masks` over NCCL next to the compaction it gathers (one process a GPU).

Each rank compacts its own R x V slice (fp32, 50 kept ids per row, W=512) with ``auto`` on
``cuda:rank``, then rank 0 gathers every rank's mask. The gathered mask is checked bit for bit
against the torch reference of the concatenated logits on rank 0 before anything is timed.
The compaction is timed as `masks.compare` times it (`masks.timing.device_time`: L2 flushed,
host dispatch kept out); the gathers, collectives whose waits are part of their cost, by CUDA
events around each call on an idle GPU.
Run: ``python benchmarks/distributed_gather.py --out gather.json`` on a machine with >= 2 GPUs.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import statistics
import tempfile

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

from masks import SamplingMask, compact_sampling_mask, timing
from masks.distributed import gather_sampling_masks
from masks.testing import assert_masks_equal, make_logits, reference

NUM_REQS, VOCAB, KEPT, WIDTH = 512, 151_936, 50, 512


def _gather_median_us(fn, reps: int = 30) -> float:
    times = []
    for _ in range(reps):
        torch.cuda.synchronize()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end) * 1e3)
    return statistics.median(times)


def _worker(rank: int, world_size: int, store: str, out: str | None) -> None:
    os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
    torch.cuda.set_device(rank)
    dist.init_process_group(
        "nccl",
        init_method=f"file://{store}",
        rank=rank,
        world_size=world_size,
        device_id=torch.device("cuda", rank),
    )
    device = torch.device("cuda", rank)
    full = make_logits(NUM_REQS * world_size, VOCAB, KEPT, seed=0, device=device)
    logits = full[rank * NUM_REQS : (rank + 1) * NUM_REQS].contiguous()
    mask = compact_sampling_mask(logits, max_num_kept=WIDTH)
    gathered = gather_sampling_masks(mask, dst=0)
    if rank == 0:
        assert_masks_equal(gathered, reference(full, max_num_kept=WIDTH))
    out = SamplingMask.empty(NUM_REQS, VOCAB, WIDTH, device=device)
    compact = functools.partial(compact_sampling_mask, logits, None, WIDTH, out=out)
    compaction_us = timing.device_time(compact, device, reps=30).median_us
    gather_us = _gather_median_us(lambda: gather_sampling_masks(mask, dst=0))
    gather_all_us = _gather_median_us(lambda: gather_sampling_masks(mask))
    if rank == 0:
        report = {
            "device": torch.cuda.get_device_name(device),
            "world_size": world_size,
            "num_reqs_per_rank": NUM_REQS,
            "vocab": VOCAB,
            "kept": KEPT,
            "width": WIDTH,
            "compaction_us": compaction_us,
            "gather_to_rank0_us": gather_us,
            "gather_to_all_us": gather_all_us,
            "bit_exact": True,
        }
        print(json.dumps(report, indent=2))
        if out:
            with open(out, "w") as f:
                json.dump(report, f, indent=2)
    dist.destroy_process_group()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    world_size = torch.cuda.device_count()
    if world_size < 2:
        raise SystemExit(f"needs >= 2 CUDA devices, found {world_size}")
    with tempfile.TemporaryDirectory() as tmp:
        mp.spawn(
            _worker, args=(world_size, os.path.join(tmp, "store"), args.out), nprocs=world_size
        )


if __name__ == "__main__":
    main()
