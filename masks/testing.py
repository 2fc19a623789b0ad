"""Reference, seeded input generator and exact checker, shared by tests, probes and benchmarks.

The pure-torch backend is the single source of truth; `assert_masks_equal` compares bit for bit
and names the first differing row and column.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch

from masks.result import MAX_COMPACT_SUPPORT, SamplingMask


def reference(
    logits: torch.Tensor,
    num_sampled_tokens: torch.Tensor | None = None,
    max_num_kept: int = MAX_COMPACT_SUPPORT,
) -> SamplingMask:
    """The pure-torch reference result."""
    from masks.api import compact_sampling_mask

    return compact_sampling_mask(logits, num_sampled_tokens, max_num_kept, backend="torch")


def make_logits(
    num_reqs: int,
    vocab_size: int,
    supports: int | Sequence[int] | str,
    dtype: torch.dtype = torch.float32,
    seed: int = 0,
    device: torch.device | str = "cpu",
    junk: bool = False,
) -> torch.Tensor:
    """Seeded logits whose row r keeps ``supports[r]`` random columns (finite, never zero).

    ``supports`` is one count for every row, a count per row, or ``"full"``. The masked
    columns are ``-inf``; with ``junk=True`` they also get ``+inf`` and NaNs of both signs
    with random payloads, written through the bit pattern.
    """
    if supports == "full":
        supports = vocab_size
    counts = torch.as_tensor(supports, dtype=torch.int64).expand(num_reqs)
    if bool((counts > vocab_size).any()) or bool((counts < 0).any()):
        raise ValueError(f"supports must lie in [0, {vocab_size}], got {supports}")
    generator = torch.Generator(device=device).manual_seed(seed)
    # Random values in +-[0.5, 4.5): finite in every dtype, and never zero.
    magnitude = torch.rand(num_reqs, vocab_size, generator=generator, device=device) * 4 + 0.5
    sign = torch.randint(0, 2, (num_reqs, vocab_size), generator=generator, device=device) * 2 - 1
    values = (magnitude * sign).to(dtype)
    # A random permutation per row: the first counts[r] columns of it are kept.
    order = torch.rand(num_reqs, vocab_size, generator=generator, device=device).argsort(dim=1)
    rank = torch.empty_like(order).scatter_(
        1, order, torch.arange(vocab_size, device=device).expand(num_reqs, -1)
    )
    dropped = rank >= counts.to(device).unsqueeze(1)
    values[dropped] = float("-inf")
    if junk:
        _write_junk(values, dropped, generator)
    return values


BIT_FIELDS = {
    torch.float64: (torch.int64, 52, 11),
    torch.float32: (torch.int32, 23, 8),
    torch.float16: (torch.int16, 10, 5),
    torch.bfloat16: (torch.int16, 7, 8),
}
"""dtype: (integer dtype of its width, mantissa bits, exponent bits), for inputs written as bits."""


def _write_junk(values: torch.Tensor, dropped: torch.Tensor, generator: torch.Generator) -> None:
    """Replace a random two thirds of the dropped entries by +inf or NaN (random payload/sign)."""
    int_dtype, mantissa_bits, exponent_bits = BIT_FIELDS[values.dtype]
    bits = values.view(int_dtype)
    kind = torch.randint(0, 3, values.shape, generator=generator, device=values.device)
    payload_limit = 1 << min(mantissa_bits, 31)
    payload = torch.randint(
        1, payload_limit, values.shape, generator=generator, device=values.device
    ).to(int_dtype)
    negative = torch.randint(0, 2, values.shape, generator=generator, device=values.device) == 1
    exponent = torch.tensor(((1 << exponent_bits) - 1) << mantissa_bits).to(int_dtype)
    sign_bit = torch.tensor(1).to(int_dtype) << (mantissa_bits + exponent_bits)
    nan = (exponent | payload) | torch.where(negative, sign_bit, torch.zeros_like(sign_bit))
    bits[dropped & (kind == 1)] = exponent.to(values.device)  # +inf
    nan_positions = dropped & (kind == 2)
    bits[nan_positions] = nan[nan_positions]


def assert_masks_equal(actual: SamplingMask, expected: SamplingMask) -> None:
    """Exact equality of all three outputs; the error names the first differing row/column."""
    if actual.vocab_size != expected.vocab_size:
        raise AssertionError(f"vocab_size {actual.vocab_size} != expected {expected.vocab_size}")
    for field in ("counts", "token_ids", "packed_mask"):
        got = getattr(actual, field).cpu()
        want = getattr(expected, field).cpu()
        if got.dtype != want.dtype or got.shape != want.shape:
            raise AssertionError(
                f"{field}: got {got.dtype} {list(got.shape)}, expected {want.dtype} "
                f"{list(want.shape)}"
            )
        differs = got != want
        if bool(differs.any()):
            position = tuple(int(i) for i in differs.nonzero()[0])
            where = f"row {position[0]}" + (f", column {position[1]}" if len(position) > 1 else "")
            raise AssertionError(
                f"{field} differs at {where}: got {got[position].item()}, expected "
                f"{want[position].item()} ({int(differs.sum())} entries differ)"
            )


def assert_csr_equal(
    actual: tuple[np.ndarray, np.ndarray], expected: tuple[np.ndarray, np.ndarray]
) -> None:
    """Exact equality of two ``(ids, offsets)`` pairs, naming the first differing row."""
    (ids, offsets), (want_ids, want_offsets) = actual, expected
    if ids.dtype != np.int32 or offsets.dtype != np.int64:
        raise AssertionError(f"CSR dtypes {ids.dtype}/{offsets.dtype}, expected int32/int64")
    if not np.array_equal(offsets, want_offsets):
        row = (
            int(np.flatnonzero(offsets != want_offsets)[0])
            if len(offsets) == len(want_offsets)
            else -1
        )
        raise AssertionError(f"CSR offsets differ (first at index {row})")
    if not np.array_equal(ids, want_ids):
        first = int(np.flatnonzero(ids != want_ids)[0])
        row = int(np.searchsorted(offsets, first, side="right")) - 1
        raise AssertionError(
            f"CSR ids differ in row {row} at position {first - offsets[row]}: "
            f"got {ids[first]}, expected {want_ids[first]}"
        )


NVCC = shutil.which("nvcc") or next(
    (str(p) for p in (Path("/usr/local/cuda/bin/nvcc"),) if p.exists()), None
)
"""The CUDA compiler that checks CUDA C sources without a GPU (None when absent)."""
NVCC_REQUIRED = os.environ.get("MASKS_REQUIRE_NVCC") == "1"
"""Set where the compile checks must run (tox, so CI): without nvcc they fail, not skip."""
NVCC_SKIPPABLE = NVCC is None and not NVCC_REQUIRED
"""Whether the compile checks skip here (nvcc absent and not required), with `NVCC_MISSING`."""
NVCC_MISSING = "nvcc not found (PATH or /usr/local/cuda/bin)"


def nvcc_check(source: Path, kernels: Sequence[str], arch: str, workdir: Path) -> None:
    """Compile `kernels` (template instances named as in C++) of `source` for `arch` with every
    warning an error and ptxas's spill and local-memory warnings on; raise with nvcc's output if
    it fails. Each kernel is instantiated by taking its address."""
    if NVCC is None:
        raise RuntimeError(NVCC_MISSING)
    lines = [f"  out[{i}] = reinterpret_cast<const void*>(&{k});" for i, k in enumerate(kernels)]
    wrapper = workdir / "instantiate.cu"
    wrapper.write_text(
        f'#include "{source.resolve()}"\n\nvoid masks_instantiate(const void** out) {{\n'
        + "\n".join(lines)
        + "\n}\n"
    )
    command = [
        str(NVCC), "-std=c++17", f"-arch={arch}", "-c", str(wrapper), "-o", str(workdir / "k.o"),
        "-Werror", "all-warnings", "-Xcompiler", "-Wall,-Werror",
        "-Xptxas", "-warn-spills,-warn-lmem-usage",
    ]  # fmt: skip
    result = subprocess.run(command, capture_output=True, text=True, timeout=600)
    if result.returncode != 0:
        raise AssertionError(f"{' '.join(command)}\n{result.stdout}\n{result.stderr}")
