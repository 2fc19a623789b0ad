"""`fused` compiled for sm_90 without a GPU (tox env triton-ptx, with the H200 image's triton):
Triton's real lowering, which the interpreter never runs, and the registers that decide how
many programs an SM holds. The first per-warp-range design took 102 registers with triton 3.6
and ran 1.4-1.7x slower (results/h200-2026-11-30-s6 run 1); this check finds that on a CPU."""

from __future__ import annotations

import math
import os

import pytest
import torch

if os.environ.get("TRITON_INTERPRET") == "1":
    pytest.skip(
        "the interpreter replaces Triton's JIT functions: compile checks run without it",
        allow_module_level=True,
    )
try:
    from triton.backends.compiler import GPUTarget
    from triton_registers import compile_fused, frame_size, fused_registers, register_count
except ImportError as error:
    if os.environ.get("MASKS_REQUIRE_TRITON_PTX") == "1":  # tox env triton-ptx: never skip
        raise
    pytest.skip(f"triton is not installed: {error}", allow_module_level=True)

MAX_REGISTERS = 64
"""Four 256-thread `fused` programs per SM (65536 registers), as in the H200 runs."""
MAX_REGISTERS_PAIRS = 128
"""Two programs per SM for 16-bit logits read two per int32: the compiler keeps the next block's
loads in flight through the whole block (104 registers with triton 3.6), which was faster on the
H200 at R = 256-1024 than four programs without (results/h200-2026-12-01-s5, runs 1-2)."""


@pytest.mark.parametrize(
    "dtype, pairs",
    [
        (torch.bfloat16, True),
        (torch.float16, True),
        (torch.bfloat16, False),
        (torch.float32, True),
        (torch.float64, True),
    ],
)
def test_fused_compiles_for_sm90_within_its_register_budget(dtype, pairs):
    budget = MAX_REGISTERS_PAIRS if pairs and dtype.itemsize == 2 else MAX_REGISTERS
    registers = fused_registers(dtype, GPUTarget("cuda", 90, 32), pairs)
    assert 0 < registers <= budget, (
        f"fused ({dtype}, pairs={pairs}) takes {registers} registers per thread, more than "
        f"{budget}: fewer programs per SM (see benchmarks/triton_registers.py)"
    )


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_capped_paired_kernel_fits_three_programs_per_sm_without_spills(dtype):
    """Many rows launch the paired kernel capped (`_fused_max_registers`): three 8-warp programs
    per SM, which only pays while ptxas needs no local memory for it."""
    from masks.backends import triton as backend

    cap = backend._FUSED_PAIRED_MAX_REGISTERS
    allocated = math.ceil(cap / 8) * 8  # registers are allocated per thread in steps of 8
    assert 3 * allocated * 32 * backend._FUSED_NUM_WARPS <= 65536, "two programs per SM at most"
    cubin = compile_fused(dtype, GPUTarget("cuda", 90, 32), True, cap).asm["cubin"]
    assert register_count(cubin) <= cap
    assert frame_size(cubin) == 0, f"capped at {cap} registers, ptxas spilled to local memory"
