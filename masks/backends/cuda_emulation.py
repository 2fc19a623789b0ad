"""The CUDA C kernels of ``compact.cu`` run on the CPU: the `cupy` backend's CPU mode.

``MASKS_CUPY_EMULATE=1`` makes the `cupy` backend compile ``compact.cu`` unchanged as host C++
(GCC: ``$CXX`` or ``g++``), against ``cuda_emulation.h``, which defines the CUDA built-ins the
kernels use: blocks run concurrently on a few OS threads, a block's threads are fibers that meet
at barriers and warp collectives, and misuse a GPU would leave undefined (a divergent
collective, a misaligned load, an index past a shared array, a block that waits forever) is an
error that names the block and thread; after one, the process launches nothing more. The
backend keeps its own launch plans and parameter blocks; only CuPy's compiler and
``cuLaunchKernel`` are replaced (`Module`, `launch_kernel`), so CI runs the kernels and the host
code that feeds them. It proves logic, never speed.

The library is built once per source, compiler and flags, into ``$MASKS_CACHE_DIR`` (default
``~/.cache/masks``).
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import platform
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Iterable
from importlib import resources
from pathlib import Path

SWITCH = "MASKS_CUPY_EMULATE"
HEADER = "cuda_emulation.h"
FLAGS = (
    "-std=c++17", "-O2", "-shared", "-fPIC", "-fno-strict-aliasing", "-pthread",
    "-fvisibility=hidden", "-fno-gnu-unique",
    "-fsanitize=alignment,bounds", "-fno-sanitize-recover=alignment,bounds",
    "-Wall", "-Wextra", "-Werror", "-Wno-unknown-pragmas",
)  # fmt: skip
"""GCC's. Hidden and not GNU-unique symbols: a library per dtype, each with its own shared
variables and thread-local state (a unique symbol binds every loaded library to the first one's).
The sanitizers turn misaligned accesses and indices past fixed-size arrays into launch errors
(the header's handlers). ``-Werror`` as for nvcc (`masks.testing.nvcc_check`), so a newer g++
with a new warning fails the build until the warning is dealt with; ``#pragma unroll`` is the
GPU compiler's."""
WORKERS = 2
"""OS threads a launch runs its blocks on: enough for blocks to wait on each other for real."""
SEED = 0x6D61736B
"""Seeds the order in which a block's threads run between barriers (with the block index)."""
STALL_SECONDS = 60
"""A launch in which no block finishes for this long fails as stalled instead of hanging."""
ERROR_BYTES = 1024
"""Room for a launch's error text (longer ones are cut)."""


def compiler() -> str | None:
    """The C++ compiler to build with: ``$CXX``, else ``g++`` (`FLAGS` are GCC's)."""
    return shutil.which(os.environ.get("CXX") or "g++")


def unavailable_reason() -> str | None:
    if compiler() is None:
        return "no C++ compiler to build its CPU emulation (install g++, or set CXX to one)"
    return None


def _cache_dir() -> Path:
    if os.environ.get("MASKS_CACHE_DIR"):
        return Path(os.environ["MASKS_CACHE_DIR"])
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "masks"


def _program(source: str, names: Iterable[str]) -> str:
    """The translation unit: the header, the kernels' source, and the table of the named kernels'
    entry points that the header's exported functions search (``names`` are NVRTC name
    expressions, as CuPy is given)."""
    entries = "".join(f'  {{"{name}", &masks_emulation::entry<&{name}>}},\n' for name in names)
    return (
        f'#include "{HEADER}"\n\n{source}\n\n'
        f"const masks_emulation::Kernel masks_emulation::kKernels[] = {{\n{entries}  {{}},\n}};\n"
    )


def _build(program: str) -> Path:
    """Compile ``program`` into a shared library (cached by content, compiler and flags)."""
    cxx = compiler()
    if cxx is None:
        raise RuntimeError(unavailable_reason())
    header = resources.files("masks.backends").joinpath(HEADER).read_text()
    version = subprocess.run([cxx, "--version"], capture_output=True, text=True).stdout
    parts = [header, program, version, platform.machine(), *FLAGS]
    key = hashlib.sha256("\0".join(parts).encode()).hexdigest()
    library = _cache_dir() / f"compact-emulated-{key[:20]}.so"
    if library.exists():
        return library
    library.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=library.parent) as work:
        (Path(work) / HEADER).write_text(header)
        (Path(work) / "program.cpp").write_text(program)
        built = Path(work) / library.name
        command = [cxx, *FLAGS, "program.cpp", "-o", str(built)]
        result = subprocess.run(command, cwd=work, capture_output=True, text=True)
        if result.returncode != 0:
            raise RuntimeError(f"{' '.join(command)} failed:\n{result.stdout}{result.stderr}")
        os.replace(built, library)  # atomic: a concurrent build of the same key is identical
    return library


class Kernel:
    """A built kernel, named by the integer ``ptr`` that `launch_kernel` takes, as a CuPy kernel
    is named by its ``CUfunction`` handle."""

    __slots__ = ("ptr",)

    def __init__(self, ptr: int) -> None:
        self.ptr = ptr


_lock = threading.Lock()
_failure: str | None = None
"""The first failed launch's error. Later launches are refused, as a CUDA context refuses work
after a kernel fault: a failed `split` launch leaves its stream's scratch dirty, and the next
launch would run on its stale tickets; a stalled one leaves blocks spinning that cannot be
stopped."""
_libraries: dict[str, ctypes.CDLL] = {}
_handles: list[tuple] = []
"""(the library's launch function, the kernel's index in it, its name), by `Kernel.ptr`."""


class Module:
    """The kernels ``names`` of ``source`` built for the CPU, as ``cupy.RawModule`` with
    ``name_expressions`` (`get_function` returns a `Kernel`)."""

    def __init__(self, source: str, names: Iterable[str]) -> None:
        program = _program(source, names)
        with _lock:
            library = _libraries.get(program)
            if library is None:
                library = ctypes.CDLL(str(_build(program)))
                library.masks_kernel_index.argtypes = [ctypes.c_char_p]
                library.masks_launch.argtypes = [
                    ctypes.c_int, ctypes.c_uint, ctypes.c_uint, ctypes.c_void_p, ctypes.c_uint,
                    ctypes.c_uint, ctypes.c_uint, ctypes.c_char_p, ctypes.c_size_t,
                ]  # fmt: skip
                _libraries[program] = library
        self._library = library

    def get_function(self, name: str) -> Kernel:
        index = self._library.masks_kernel_index(name.encode())
        if index < 0:
            raise KeyError(f"{name!r} is not a kernel of this module")
        with _lock:
            _handles.append((self._library.masks_launch, index, name))
            return Kernel(len(_handles) - 1)


def launch_kernel(
    function: int,
    grid_x: int,
    grid_y: int,
    grid_z: int,
    block_x: int,
    block_y: int,
    block_z: int,
    shared_bytes: int,
    stream: int,
    params: int,
    extra: int,
) -> None:
    """``cupy.cuda.driver.launchKernel`` for a `Kernel`'s ``ptr``: runs the grid now, on the CPU
    (the stream is ignored: the call returns when the kernel has finished)."""
    global _failure
    if (grid_y, grid_z, block_y, block_z, shared_bytes, extra) != (1, 1, 1, 1, 0, 0):
        raise ValueError("the emulation launches 1-D grids and blocks, no dynamic shared memory")
    if _failure is not None:
        raise RuntimeError(
            "an earlier launch failed, so the emulated device runs nothing more in this process "
            f"(as a CUDA context after a fault: restart the process): {_failure}"
        )
    error = ctypes.create_string_buffer(ERROR_BYTES)
    launch, index, name = _handles[function]
    if launch(index, grid_x, block_x, params, WORKERS, SEED, STALL_SECONDS, error, ERROR_BYTES):
        _failure = f"{name}: {error.value.decode()}"
        raise RuntimeError(_failure)


def launch(kernel: Kernel, blocks: int, threads: int, args: tuple[int, ...]) -> None:
    """Run ``kernel`` over ``blocks`` blocks of ``threads`` with ``args`` as 64-bit values (the
    parameter block the `cupy` backend builds), for tests and tools that launch a kernel once."""
    values = (ctypes.c_int64 * len(args))(*args)
    first = ctypes.addressof(values)
    params = (ctypes.c_void_p * len(args))(*(first + 8 * index for index in range(len(args))))
    launch_kernel(kernel.ptr, blocks, 1, 1, threads, 1, 1, 0, 0, ctypes.addressof(params), 0)
