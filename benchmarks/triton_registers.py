"""Registers per thread of Triton's `fused` kernel, compiled for a GPU target without a GPU.

A `fused` program's registers decide how many programs an SM holds (65536 registers: 64 per
thread of 256 threads allow four), and Triton's compiler, not the source, decides them: a knob
can move them by a third. This script compiles `_fused_kernel` the way `compact` launches it
(contiguous logits, aligned pointers, no num_sampled_tokens) for a target and prints the
registers that ptxas allocated, read from the cubin's ``.nv.info`` (EIATTR_REGCOUNT). The
knobs of `masks.backends.triton` can be overridden to see their cost before a GPU run.

Run: ``python benchmarks/triton_registers.py --dtypes bf16,fp32 [--knob _FUSED_RANGE_SUBSTEPS=8]``
(the result depends on the installed triton version: use the one the GPU runs).
"""

from __future__ import annotations

import argparse
import struct

import torch
import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
from triton.runtime import JITFunction

from masks.backends import triton as backend

DTYPES = {
    "bf16": torch.bfloat16,
    "fp16": torch.float16,
    "fp32": torch.float32,
    "fp64": torch.float64,
}
_POINTER_TYPES = {
    torch.bfloat16: "*bf16",
    torch.float16: "*fp16",
    torch.float32: "*fp32",
    torch.float64: "*fp64",
}
_REGCOUNT = 0x2F
"""EIATTR_REGCOUNT: a kernel's registers per thread in the cubin's .nv.info sections."""
_FRAME_SIZE = 0x11
"""EIATTR_FRAME_SIZE: a kernel's local-memory stack frame in bytes (nonzero once ptxas spills)."""


def _nv_info(cubin: bytes, attribute_code: int) -> int:
    """The value of one per-kernel attribute (``[kernel index, value]``) in an ELF cubin's
    .nv.info sections."""
    section_offset = struct.unpack_from("<Q", cubin, 0x28)[0]
    entry_size, count, names_index = struct.unpack_from("<HHH", cubin, 0x3A)
    sections = [
        struct.unpack_from("<IIQQQQIIQQ", cubin, section_offset + i * entry_size)
        for i in range(count)
    ]
    names = sections[names_index][4]
    for section in sections:
        name = cubin[names + section[0] : cubin.index(b"\0", names + section[0])]
        if not name.startswith(b".nv.info"):
            continue
        position, end = section[4], section[4] + section[5]
        while position < end:
            form, attribute = cubin[position], cubin[position + 1]
            if form != 4:  # fixed-size attribute: 4 bytes
                position += 4
                continue
            size = struct.unpack_from("<H", cubin, position + 2)[0]
            if attribute == attribute_code:
                return struct.unpack_from("<I", cubin, position + 8)[0]
            position += 4 + size
    raise ValueError(f"no .nv.info attribute {attribute_code:#x} in the cubin")


def register_count(cubin: bytes) -> int:
    """Registers per thread from an ELF cubin's EIATTR_REGCOUNT attribute."""
    return _nv_info(cubin, _REGCOUNT)


def frame_size(cubin: bytes) -> int:
    """Bytes of local-memory stack frame (EIATTR_FRAME_SIZE): 0 unless registers spilled."""
    return _nv_info(cubin, _FRAME_SIZE)


def fused_registers(
    dtype: torch.dtype, target: GPUTarget, pairs: bool = True, block_bytes: int | None = None
) -> int:
    """Registers of `_fused_kernel` compiled for ``dtype`` (`compile_fused`)."""
    return register_count(compile_fused(dtype, target, pairs, block_bytes).asm["cubin"])


def compile_fused(
    dtype: torch.dtype, target: GPUTarget, pairs: bool = True, block_bytes: int | None = None
):
    """Compile `_fused_kernel` for ``dtype`` as `compact` would launch it (``pairs``: on rows that
    `_pairs` allows, i.e. contiguous with an even length; ``block_bytes``: `_fused_block_bytes`,
    by default `_FUSED_BLOCK_BYTES`): the CompiledKernel."""
    block_bytes = block_bytes or backend._FUSED_BLOCK_BYTES
    constexprs = {
        "num_sampled_ptr": None,
        "col_stride": 1,
        **backend._fused_constexprs(dtype, words=True, pairs=pairs, block_bytes=block_bytes),
    }
    types = {
        "logits_ptr": _POINTER_TYPES[dtype],
        "ids_ptr": "*i32",
        "counts_ptr": "*i32",
        "mask_ptr": "*u8",
    }
    names = backend._fused_kernel.arg_names
    signature = {n: "constexpr" if n in constexprs else types.get(n, "i32") for n in names}
    aligned = ("logits_ptr", "row_stride", "ids_ptr", "counts_ptr", "mask_ptr", "vocab_size")
    attributes = {(names.index(n),): [["tt.divisibility", 16]] for n in aligned}
    source = ASTSource(backend._fused_kernel, signature, constexprs=constexprs, attrs=attributes)
    return triton.compile(source, target=target, options={"num_warps": backend._FUSED_NUM_WARPS})


def set_knob(knob: str) -> None:
    """Override ``NAME=VALUE`` of `masks.backends.triton`. A global that the kernels read stays a
    ``tl.constexpr`` (Triton refuses to read any other global), and the kernels' cache keys and
    the global values recorded with them are computed afresh (else a kernel compiled before
    comes back unchanged, or triton 3.6 finds the old value beside the new one and raises)."""
    name, value = knob.split("=")
    if not isinstance(getattr(backend, name), tl.constexpr):
        setattr(backend, name, int(value))
        return
    setattr(backend, name, tl.constexpr(int(value)))
    for function in vars(backend).values():
        if isinstance(function, JITFunction):
            function.hash, function.used_global_vals = None, {}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dtypes", default="bf16,fp32")
    parser.add_argument("--arch", type=int, default=90, help="compute capability, e.g. 90")
    parser.add_argument(
        "--knob", action="append", default=[], help="NAME=VALUE of masks.backends.triton"
    )
    args = parser.parse_args()
    for knob in args.knob:
        set_knob(knob)
    target = GPUTarget("cuda", args.arch, 32)
    print(f"triton {triton.__version__}, sm_{args.arch}, knobs {args.knob or 'as committed'}")
    small = backend._FUSED_SMALL_BLOCK_BYTES
    for name in args.dtypes.split(","):
        sixteen_bit = DTYPES[name].itemsize == 2  # the kernels that may read pairs
        for pairs in (True, False) if sixteen_bit else (True,):
            label = f"{name} (pairs)" if pairs and sixteen_bit else name
            registers = fused_registers(DTYPES[name], target, pairs)
            registers_small = fused_registers(DTYPES[name], target, pairs, small)
            print(f"{label}: {registers} registers per thread, {registers_small} at {small} bytes")


if __name__ == "__main__":
    main()
