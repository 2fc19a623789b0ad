"""Run 5 (session 2026-12-02-s7), run 4's script extended: B2, the driver launch given the
kernel's CUfunction in the current context (`cuKernelGetFunction`, once) rather than its
CUkernel; and each launch alone (the plan's `_enqueue` with the call's values made once, split's
scratch held across the batch), to split a call's time between the driver and the Python
around it.

Run 4 (session 2026-12-02-s7): Numba's launch through cuda.core against the driver's
cuLaunchKernel with a prepared parameter block (CuPy's way), in one process.

B: `masks.backends.numba.compact` of the working tree: its plan writes the call's pointers into
a `ParamBlock` of 64-bit values and calls `cuda.bindings.driver.cuLaunchKernel` with the
kernel's handle. A: the same entry and plan, the plan's class swapped for `CorePlan`, whose
launch is the committed one (547270c): `cuda.core.launch` with a LaunchConfig, a cached
cuda.core stream and every argument per call. C: CuPy's `compact` (the working tree's, whose
plans now share `ParamBlock`; for reference). Backend calls only (no API checks),
back-to-back, host wall clock per call: rounds of 200 calls per path in a shuffled order,
median over 30 rounds, beside a one-element torch fill. Outputs of A and B are first compared
bit for bit with the reference (fused and split, with and without num_sampled_tokens).
"""

import functools
import json
import math
import random
import statistics
import sys
import time

import torch

import masks.backends.cupy as cb
import masks.backends.numba as nb
from masks import SamplingMask
from masks.backends import scratch as stream_scratch
from masks.testing import assert_masks_equal, make_logits, reference

ROUNDS, CALLS = 30, 200


class CorePlan(nb._Plan):
    """The committed launch (547270c's `_Plan._launch`): `cuda.core.launch` with the plan's
    LaunchConfig, a cuda.core stream cached per raw stream pointer, every argument per call."""

    def prepare(self) -> None:
        from cuda.core import LaunchConfig, launch

        self.core_launch = launch
        self.config = LaunchConfig(grid=self.grid, block=self.threads, shmem_size=self.shared)
        values = list(self.params.values)
        self.head = tuple(values[2:5])  # row stride, column stride, exponent
        self.counts_in = tuple(values[7:9])
        self.tail = tuple(values[9 : self.outputs])  # vocab, width, num_bytes[, tiling]
        self.core_kernel = self.kernel.kernel

    def _launch(self, logits, num_sampled_tokens, out) -> None:
        pointer = nb._raw_stream(self.device)
        stream = core_stream(self.device, pointer)
        address = logits.data_ptr()
        counts_ptr = 0 if num_sampled_tokens is None else num_sampled_tokens.data_ptr()
        ids, counts, mask = (
            out.token_ids.data_ptr(),
            out.counts.data_ptr(),
            out.packed_mask.data_ptr(),
        )
        mask_align = math.gcd(self.num_bytes, mask, 16)
        wide = int(self.wide_layout and address % 16 == 0)
        head = (address, address, *self.head, wide, counts_ptr, *self.counts_in)
        if self.variant == "fused":
            self.core_launch(
                stream, self.config, self.core_kernel, *head, *self.tail, ids, counts, mask, mask,
                mask_align,
            )  # fmt: skip
            return
        zeroed = stream_scratch.for_stream(self.device, pointer)
        state = zeroed.acquire(self.state_size, logits.device)
        try:
            self.core_launch(
                stream, self.config, self.core_kernel, *head, *self.tail, ids, counts, mask, mask,
                mask_align, state.data_ptr(),
            )  # fmt: skip
        finally:
            zeroed.release()


class FunctionPlan(nb._Plan):
    """The working tree's launch with the kernel's CUfunction in the current context."""

    def prepare(self) -> None:
        from cuda.bindings import driver

        error, function = driver.cuKernelGetFunction(self.kernel.handle)
        assert error == driver.CUresult.CUDA_SUCCESS, error
        self.function = function


_core_streams = {}


def core_stream(device: int, pointer: int):
    stream = _core_streams.get((device, pointer))
    if stream is None:
        from numba import cuda
        from numba.cuda.cudadrv.driver import _to_core_stream

        with cuda.gpus[device]:
            stream = _core_streams[(device, pointer)] = _to_core_stream(
                cuda.external_stream(pointer)
            )
    return stream


def plan_for(logits, nst, out):
    nb.compact(logits, nst, out)  # makes the plan
    key = (logits.device.index, "auto", *nb.call_shape(logits, nst, out))
    return nb._plans[key]


def dispatch_samples(plan, logits, out, probe) -> dict[str, list[float]]:
    """Host us per call of each path, one sample per round."""
    kernel_handle = plan.function
    plan.__class__ = FunctionPlan
    plan.prepare()
    function = plan.function
    plan.__class__ = CorePlan
    plan.prepare()
    select = {
        "A numba cuda.core": (CorePlan, kernel_handle),
        "B numba driver": (nb._Plan, kernel_handle),
        "B2 numba driver CUfunction": (nb._Plan, function),
        "B launch only": (nb._Plan, kernel_handle),
        "B2 launch only": (nb._Plan, function),
    }
    stream = nb._raw_stream(0)
    mask = out.packed_mask.data_ptr()
    outputs = (out.token_ids.data_ptr(), out.counts.data_ptr(), mask, mask, 16)
    address = logits.data_ptr()
    cupy_plan = cb._plans[(0, "auto", address % 16 == 0, *cb.call_shape(logits, None, out))]
    cupy_pointers = (address, 0, mask, out.token_ids.data_ptr(), out.counts.data_ptr())
    calls = {
        "A numba cuda.core": lambda: nb.compact(logits, None, out),
        "B numba driver": lambda: nb.compact(logits, None, out),
        "B2 numba driver CUfunction": lambda: nb.compact(logits, None, out),
        "C cupy": lambda: cb.compact(logits, None, out),
        "probe fill": lambda: probe.fill_(1.0),
    }
    held = {
        "B launch only": lambda state: plan._enqueue(stream, address, 1, 0, (*outputs, state)),
        "B2 launch only": lambda state: plan._enqueue(stream, address, 1, 0, (*outputs, state)),
        "C launch only": lambda state: cupy_plan._enqueue((*cupy_pointers, state), stream),
    }
    samples = {name: [] for name in (*calls, *held)}
    for round_index in range(ROUNDS):
        for name in random.Random(round_index).sample(list(samples), len(samples)):
            if name in select:
                plan.__class__, plan.function = select[name]
            torch.cuda.synchronize()
            if name in held:
                zeroed = stream_scratch.for_stream(0, stream)
                state = zeroed.acquire(max(plan.state_size, cupy_plan.scratch_size), logits.device)
                pointer = state.data_ptr()
                try:
                    call = functools.partial(held[name], pointer)
                    samples[name].append(time_batch(call))
                finally:
                    zeroed.release()
            else:
                samples[name].append(time_batch(calls[name]))
    plan.__class__, plan.function = nb._Plan, kernel_handle
    return samples


def time_batch(call) -> float:
    """Host us per call of CALLS back-to-back calls, after two untimed ones."""
    call()
    call()
    start = time.perf_counter()
    for _ in range(CALLS):
        call()
    return (time.perf_counter() - start) / CALLS * 1e6


def main(out_path: str) -> None:
    device = torch.device("cuda", 0)
    torch.cuda.set_device(device)
    report = {"checks": [], "timings": []}
    # exactness of B against A and the reference
    for r, v, dtype, with_counts in [
        (1, 151_936, torch.float32, False), (1, 151_936, torch.bfloat16, True),
        (4, 128_256, torch.float32, True), (256, 128_256, torch.bfloat16, False),
        (300, 1_000, torch.float16, True), (3, 9_999, torch.float64, False),
    ]:  # fmt: skip
        logits = make_logits(r, v, 50, dtype=dtype, seed=r + v, device=device)
        nst = None
        if with_counts:
            nst = torch.randint(0, 3, (r,), dtype=torch.int32, device=device)
        want = reference(logits, nst, 2048)
        plan = plan_for(logits, nst, SamplingMask.empty(r, v, 2048, device=device))
        handle = plan.function
        for cls in (nb._Plan, CorePlan, FunctionPlan):
            plan.__class__ = cls
            if cls is not nb._Plan:
                plan.prepare()
            got = SamplingMask.empty(r, v, 2048, device=device)
            nb.compact(logits, nst, got)
            torch.cuda.synchronize()
            assert_masks_equal(got, want)
        plan.__class__ = nb._Plan
        plan.function = handle
        report["checks"].append(
            f"R={r} V={v} {dtype} counts={with_counts} {plan.variant}: A, B and B2 exact"
        )
        print(report["checks"][-1], flush=True)
    # dispatch
    for dtype in (torch.float32, torch.bfloat16):
        logits = make_logits(1, 151_936, 50, dtype=dtype, seed=1, device=device)
        out = SamplingMask.empty(1, 151_936, 2048, device=device)
        plan = plan_for(logits, None, out)
        cb.compact(logits, None, out)
        samples = dispatch_samples(plan, logits, out, torch.empty(1, device=device))
        torch.cuda.synchronize()
        plan.__class__ = nb._Plan
        row = {"dtype": str(dtype), "variant": plan.variant}
        for name, values in samples.items():
            row[name] = statistics.median(values)
        report["timings"].append(row)
        print(json.dumps(row), flush=True)
    with open(out_path, "w") as f:
        json.dump(report, f, indent=1)


if __name__ == "__main__":
    main(sys.argv[1])
