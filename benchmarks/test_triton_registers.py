"""`fused` compiled for sm_90 without a GPU (tox env triton-ptx, with the H200 image's triton):
Triton's real lowering, which the interpreter never runs, and the registers that decide how
many programs an SM holds. The first per-warp-range design took 102 registers with triton 3.6
and ran 1.4-1.7x slower (results/h200-2026-11-30-s6 run 1); this check finds that on a CPU."""

from __future__ import annotations

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
    from triton_registers import compile_fused, frame_size, register_count, set_knob
except ImportError as error:
    if os.environ.get("MASKS_REQUIRE_TRITON_PTX") == "1":  # tox env triton-ptx: never skip
        raise
    pytest.skip(f"triton is not installed: {error}", allow_module_level=True)

THREE_PER_SM = 80
"""Registers per thread for three 256-thread `fused` programs per SM (65536 registers, allocated
in steps of 8): every kernel with 32 KB per iteration, as in the H200 runs of
results/h200-2026-12-02 (paired 16-bit 74, fp32 80 with triton 3.6)."""
FOUR_PER_SM = 64
"""With 16 KB per iteration (`_FUSED_SMALL_BLOCK_ROWS_PER_SM`): four programs per SM, fp32's
budget where it ranks in pass 1 beyond three rows per SM."""
SIX_PER_SM = 40
"""Paired 16-bit rows with 16 KB per iteration: six programs per SM, which is what made them
2-6% faster than 32 KB at R = 512 on the H200 (results/h200-2026-12-02 run 6)."""


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
    from masks.backends import triton as backend

    small = SIX_PER_SM if pairs and dtype.itemsize == 2 else FOUR_PER_SM
    budgets = {backend._FUSED_BLOCK_BYTES: THREE_PER_SM, backend._FUSED_SMALL_BLOCK_BYTES: small}
    for block_bytes, budget in budgets.items():
        cubin = compile_fused(dtype, GPUTarget("cuda", 90, 32), pairs, block_bytes).asm["cubin"]
        registers = register_count(cubin)
        assert 0 < registers <= budget, (
            f"fused ({dtype}, pairs={pairs}, {block_bytes} bytes per iteration) takes "
            f"{registers} registers per thread, more than {budget}: fewer programs per SM (see "
            f"benchmarks/triton_registers.py)"
        )
        assert frame_size(cubin) == 0, (
            f"{dtype} ({block_bytes} bytes): ptxas spilled to local memory"
        )


def test_a_knob_overridden_after_a_compile_takes_effect() -> None:
    """``--knob`` on a global that the kernels read (a ``tl.constexpr``) changes the kernel's
    cache key, also once the key was computed (else the kernel compiled with the committed value
    comes back), and the kernel compiles with it."""
    from masks.backends import triton as backend

    committed = int(backend._FILL_BLOCK)
    before = backend._fused_kernel.cache_key
    try:
        set_knob("_FILL_BLOCK=1024")
        assert isinstance(backend._FILL_BLOCK, type(backend._EMIT_WORDS))  # a tl.constexpr
        assert backend._fused_kernel.cache_key != before
        cubin = compile_fused(torch.float32, GPUTarget("cuda", 90, 32), True, 32768).asm["cubin"]
        assert register_count(cubin) > 0
    finally:
        set_knob(f"_FILL_BLOCK={committed}")
    assert backend._fused_kernel.cache_key == before
