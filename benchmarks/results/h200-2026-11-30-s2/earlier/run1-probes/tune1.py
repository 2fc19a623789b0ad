"""Device run 1 probes: triton direct launch A/B, cupy split sweep, host-step phases."""

from __future__ import annotations

import time

import torch
import triton

from masks import SamplingMask, compact_sampling_mask
from masks.backends import cupy as cb
from masks.backends import triton as tb
from masks.testing import assert_masks_equal, make_logits, reference

DEV = "cuda"
F32, BF16 = torch.float32, torch.bfloat16


def host_us(backend: str, num_reqs: int = 1, calls: int = 2000) -> float:
    logits = make_logits(num_reqs, 151936, 50, device=DEV)
    out = SamplingMask.empty(num_reqs, 151936, 2048, device=DEV)
    for _ in range(50):
        compact_sampling_mask(logits, None, 2048, backend, out=out)
    torch.cuda.synchronize()
    best = []
    for _ in range(5):
        torch.cuda._sleep(50_000_000)
        start = time.perf_counter()
        for _ in range(calls // 5):
            compact_sampling_mask(logits, None, 2048, backend, out=out)
        best.append((time.perf_counter() - start) / (calls // 5) * 1e6)
        torch.cuda.synchronize()
    best.sort()
    return best[len(best) // 2]


class NoCache(dict):
    def __setitem__(self, key, value) -> None:
        pass


def triton_ab() -> None:
    for backend in ("triton:split", "triton:fused", "cupy:split", "cupy:fused", "numba:split"):
        try:
            print(f"host us R=1 {backend:14s} {host_us(backend):6.1f}", flush=True)
        except Exception as error:
            print(backend, "failed", error)
    saved = tb._compiled
    tb._compiled = NoCache()
    for backend in ("triton:split", "triton:fused"):
        print(f"host us R=1 {backend:14s} JIT only {host_us(backend):6.1f}", flush=True)
    tb._compiled = saved


_inputs: dict = {}


def device_us(num_reqs, vocab, dtype, support, backend) -> float:
    key = (num_reqs, vocab, dtype, support)
    if key not in _inputs:
        _inputs[key] = make_logits(num_reqs, vocab, support, dtype, seed=2, device=DEV)
    logits = _inputs[key]
    out = SamplingMask.empty(num_reqs, vocab, 2048, device=DEV)
    expected = reference(logits.cpu(), None, 2048)
    compact_sampling_mask(logits, None, 2048, backend, out=out)
    assert_masks_equal(out, expected)

    def run() -> None:
        compact_sampling_mask(logits, None, 2048, backend, out=out)

    return triton.testing.do_bench(run, warmup=10, rep=60) * 1e3


def cupy_sweep() -> None:
    cases = [(r, 151936, F32, s) for r in (1, 4, 16, 32, 64) for s in (50, "full")]
    print("cupy split: SPLIT_THREADS, TILES_PER_SM, MAX_SEGS ->", [c[0] for c in cases])
    defaults = (cb.SPLIT_THREADS, cb.SPLIT_TILES_PER_SM, cb.MAX_SEGS_PER_UNIT)
    for threads, tiles, segs in [
        defaults,
        (128, 2, 16),
        (128, 3, 16),
        (128, 6, 16),
        (256, 2, 16),
        (256, 4, 16),
        (128, 4, 32),
        (64, 8, 16),
    ]:
        cb.SPLIT_THREADS, cb.SPLIT_TILES_PER_SM, cb.MAX_SEGS_PER_UNIT = threads, tiles, segs
        cb._kernels.clear()
        cells = [f"{device_us(*c, 'cupy:split'):6.1f}" for c in cases]
        print(f"T={threads:4d} tiles/SM={tiles} segs={segs:3d} " + " ".join(cells), flush=True)
    cb.SPLIT_THREADS, cb.SPLIT_TILES_PER_SM, cb.MAX_SEGS_PER_UNIT = defaults
    cb._kernels.clear()
    for backend in ("triton:split", "numba:split", "cupy:fused", "triton:fused"):
        try:
            cells = [f"{device_us(*c, backend):6.1f}" for c in cases]
            print(f"{backend:24s} " + " ".join(cells), flush=True)
        except Exception as error:
            print(backend, "failed", error)


def triton_fused_sweep() -> None:
    cases = [(256, 151936, dt, s) for dt in (F32, BF16) for s in (50, "full")]
    cases += [(1024, 151936, F32, 50)]
    ceiling = 4259e3  # GB/s * 1e3: bytes / us
    defaults = (tb._FUSED_BLOCK_BYTES, tb._FUSED_NUM_WARPS, tb._FUSED_RANK_WORDS)
    for block, warps, rank in [
        defaults,
        (16384, 4, 512),
        (16384, 8, 512),
        (65536, 8, 512),
        (65536, 16, 512),
        (32768, 16, 512),
        (32768, 4, 512),
        (32768, 8, 256),
    ]:
        tb._FUSED_BLOCK_BYTES, tb._FUSED_NUM_WARPS, tb._FUSED_RANK_WORDS = block, warps, rank
        cells = []
        for r, v, dt, sup in cases:
            us = device_us(r, v, dt, sup, "triton:fused")
            nbytes = r * (v * torch.empty((), dtype=dt).element_size() + (v + 7) // 8 + 8196)
            cells.append(f"{100 * nbytes / us / ceiling:5.1f}%")
        print(
            f"triton fused block={block} warps={warps} rank={rank}: " + " ".join(cells), flush=True
        )
    tb._FUSED_BLOCK_BYTES, tb._FUSED_NUM_WARPS, tb._FUSED_RANK_WORDS = defaults


def host_step_phases() -> None:
    from masks.transfer import PendingCSR

    for num_reqs in (64, 512):
        logits = make_logits(num_reqs, 151936, 50, device=DEV)
        out = SamplingMask.empty(num_reqs, 151936, 512, device=DEV)
        compact_sampling_mask(logits, None, 512, "cupy", out=out)
        for _ in range(20):
            PendingCSR(out).wait()
        times = {"kernel": [], "init": [], "wait": [], "all": []}
        for _ in range(30):
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            compact_sampling_mask(logits, None, 512, "cupy", out=out)
            t1 = time.perf_counter()
            pending = PendingCSR(out)
            t2 = time.perf_counter()
            pending.wait()
            t3 = time.perf_counter()
            times["kernel"].append(t1 - t0)
            times["init"].append(t2 - t1)
            times["wait"].append(t3 - t2)
            times["all"].append(t3 - t0)
        med = {k: sorted(v)[len(v) // 2] * 1e6 for k, v in times.items()}
        print(f"host step R={num_reqs}: " + " ".join(f"{k} {v:.0f}us" for k, v in med.items()))


if __name__ == "__main__":
    host_step_phases()
    triton_ab()
    cupy_sweep()
    triton_fused_sweep()
