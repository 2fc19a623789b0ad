"""Registers and loop sizes of Triton's `_fused_kernel`, compiled for sm_90 without a GPU.

Compiles the kernel as benchmarks/triton_registers.py does (contiguous logits, aligned
pointers, paired 16-bit reads), disassembles it with ``cuobjdump -sass`` and prints, per loop
with a backward branch, its SASS instructions, global loads and global stores. Run from the
repository root of the commit to measure, with triton 3.6 and CUDA's cuobjdump:
``PYTHONPATH=.:benchmarks python sass_loops.py CUOBJDUMP``.
"""

import re
import subprocess
import sys
import tempfile

import triton_registers as tr
from triton.backends.compiler import GPUTarget


def loops(sass: str) -> list[tuple[int, int, int]]:
    """(instructions, LDG, STG) of each loop, in address order of its backward branch."""
    found = re.findall(r"/\*([0-9a-f]{4,})\*/\s+(.*?);", sass)
    instructions = [(int(address, 16), text.strip()) for address, text in found]
    index = {address: i for i, (address, _) in enumerate(instructions)}
    result = []
    for i, (address, text) in enumerate(instructions):
        target = re.search(r"BRA\s.*?0x([0-9a-f]+)", text)
        if target and int(target.group(1), 16) < address and int(target.group(1), 16) in index:
            body = [t for _, t in instructions[index[int(target.group(1), 16)] : i + 1]]
            result.append((len(body), sum("LDG" in t for t in body), sum("STG" in t for t in body)))
    return result


def main() -> None:
    cuobjdump = sys.argv[1]
    for name in ("bf16", "fp32"):
        compiled = tr.compile_fused(tr.DTYPES[name], GPUTarget("cuda", 90, 32))
        with tempfile.NamedTemporaryFile(suffix=".cubin") as cubin:
            cubin.write(compiled.asm["cubin"])
            cubin.flush()
            sass = subprocess.run([cuobjdump, "-sass", cubin.name], capture_output=True, text=True)
        registers = tr.register_count(compiled.asm["cubin"])
        print(f"{name}: {registers} registers; loops (instructions, LDG, STG):", loops(sass.stdout))


if __name__ == "__main__":
    main()
