"""Seeded random cases against the reference: every backend and variant, in every mode.

Each case comes from one seed (printed before it runs, and named in a failure together with the
command that replays it), so a failure reproduces from one number. Cases cover what a serving
engine can hand over: R = 0..300 rows, V = 1..300k columns (scaled down to the mode's element
budget), every float dtype, transposed views, column slices, column strides > 1, a broadcast row
(row stride 0), supports that are empty, sparse, around W, dense, full or random per row, kept
logits at the dtype's extremes (largest finite, smallest normal and subnormal, signed zeros),
+inf and NaNs with random payloads and signs, inactive rows with int32/int64 (and strided) counts,
and widths from 0 to 2048 and past V.

The expected result is `masks.testing.reference` on the same device, except for the torch
backend, which is the reference: it is checked against the independent NumPy contract.

Budgets, per backend variant (environment variables override the mode's defaults):
``MASKS_FUZZ_CASES`` cases, ``MASKS_FUZZ_SECONDS`` stops a variant early (the figure logged is
the number of cases actually run), ``MASKS_FUZZ_SEED`` the first case's seed (case i uses seed
+ i). Natively on CUDA the defaults are large (a `gpu` test); in the CPU modes of CI they are
small for Triton's interpreter and Numba's simulator (~0.2 ms per logit), and the CPU's for
torch and for the CuPy backend's CUDA C built for the CPU.
"""

from __future__ import annotations

import dataclasses
import math
import os
import random
import time
from dataclasses import dataclass

import pytest
import torch
from cases import ALL_DTYPES, lay_out
from numpy_contract import numpy_contract
from suite import backend_params, gpu_backend_params
from test_conformance import assert_guards_intact, poisoned

from masks import SamplingMask, compact_sampling_mask, registry
from masks.testing import assert_masks_equal, make_logits, reference


@dataclass(frozen=True)
class FuzzBudget:
    """How many cases one backend variant gets, for how long at most, and how large they are.

    ``cases_per_structure`` consecutive seeds share one structure (shape, width, dtype, layout,
    counts dtype and stride) and differ in contents (supports, non-finite values, activity).
    """

    cases: int
    seconds: float
    max_rows: int
    max_vocab: int
    max_elements: int
    cases_per_structure: int = 1


BUDGETS = {
    "cuda": FuzzBudget(
        cases=2_000, seconds=5.0, max_rows=300, max_vocab=300_000, max_elements=1 << 21
    ),
    "cpu": FuzzBudget(
        cases=300, seconds=60.0, max_rows=300, max_vocab=300_000, max_elements=1 << 16
    ),
    "TRITON_INTERPRET": FuzzBudget(
        cases=20, seconds=60.0, max_rows=8, max_vocab=2_000, max_elements=4_000
    ),
    "NUMBA_ENABLE_CUDASIM": FuzzBudget(
        cases=10, seconds=60.0, max_rows=4, max_vocab=300, max_elements=1_200
    ),
    "MASKS_CUPY_EMULATE": FuzzBudget(
        cases=300, seconds=60.0, max_rows=300, max_vocab=300_000, max_elements=1 << 16
    ),
}
"""Per mode: natively on a device type, or through a backend's CPU emulation."""
CUDA_CASES_PER_STRUCTURE = {"triton": 50}
"""Triton compiles one kernel per specialisation (docs/reliability.md; 0.3-2 s each on the
H200), and random strides, dtypes and vocabularies reach many of them, so on CUDA its cases
share structures in groups; the other backends compile once per dtype and get a new structure
every case."""

LAYOUTS = ("contiguous", "column_slice", "transposed", "column_stride", "row_broadcast")
SUPPORT_KINDS = ("empty", "sparse", "around_width", "dense", "full", "random")
EDGE_VOCABS = (1, 2, 7, 8, 9, 31, 32, 33, 255, 256, 257, 1_024, 2_047, 2_049, 32_000, 151_936)


@dataclass(frozen=True)
class FuzzCase:
    """One random input, fully determined by its seed and the budget it was drawn under."""

    seed: int
    num_reqs: int
    vocab_size: int
    supports: tuple[int, ...]
    max_num_kept: int
    dtype: torch.dtype
    layout: str
    junk: bool
    extremes: bool
    num_sampled: tuple[int, ...] | None
    num_sampled_dtype: torch.dtype
    strided_counts: bool

    def logits(self, device: torch.device) -> torch.Tensor:
        dense = make_logits(
            self.num_reqs, self.vocab_size, self.supports, self.dtype, self.seed, device, self.junk
        )
        if self.extremes:
            dense = _with_extremes(dense, self.seed)
        if self.layout == "row_broadcast":  # one row seen R times: row stride 0
            return dense[:1].expand(self.num_reqs, -1)
        return lay_out(dense, self.layout)

    def num_sampled_tokens(self, device: torch.device) -> torch.Tensor | None:
        if self.num_sampled is None:
            return None
        values = torch.tensor(self.num_sampled, dtype=self.num_sampled_dtype, device=device)
        if not self.strided_counts:
            return values
        # Every other entry of a buffer whose other entries say the opposite, so a kernel that
        # ignores the stride reads the wrong rows' activity.
        buffer = torch.empty(2 * self.num_reqs, dtype=self.num_sampled_dtype, device=device)
        buffer[0::2] = values
        buffer[1::2] = torch.where(values > 0, 0, 5)
        return buffer[0::2]

    def summary(self) -> str:
        counts = (
            "none"
            if self.num_sampled is None
            else f"{str(self.num_sampled_dtype)[6:]}{'-strided' if self.strided_counts else ''}"
        )
        return (
            f"seed={self.seed} R={self.num_reqs} V={self.vocab_size} W={self.max_num_kept} "
            f"{str(self.dtype)[6:]} {self.layout} junk={self.junk} extremes={self.extremes} "
            f"counts={counts}"
        )


_INTEGER_VIEWS = {
    torch.float16: torch.int16,
    torch.bfloat16: torch.int16,
    torch.float32: torch.int32,
    torch.float64: torch.int64,
}


def _with_extremes(logits: torch.Tensor, seed: int) -> torch.Tensor:
    """A quarter of the finite logits replaced by the dtype's extremes, each sign: the largest
    finite value (exponent one short of all ones), the smallest normal (exponent 1), the smallest
    subnormal and zero (exponent 0). All are kept; a kernel that tests the wrong exponent bits
    drops some of them."""
    info = torch.finfo(logits.dtype)
    subnormal = torch.ones(1, dtype=_INTEGER_VIEWS[logits.dtype]).view(logits.dtype)
    normal = torch.tensor([info.max, info.tiny, 0.0], dtype=logits.dtype)
    magnitudes = torch.cat([normal, subnormal])
    extremes = torch.cat([magnitudes, -magnitudes])
    generator = torch.Generator().manual_seed(seed)
    picked = torch.rand(logits.shape, generator=generator) < 0.25
    choice = torch.randint(len(extremes), logits.shape, generator=generator)
    replaced = picked.to(logits.device) & logits.isfinite()
    return torch.where(replaced, extremes[choice].to(logits.device), logits)


def _log_uniform(rng: random.Random, low: int, high: int) -> int:
    return min(high, max(low, round(math.exp(rng.uniform(math.log(low), math.log(high))))))


def _support(rng: random.Random, kind: str, vocab_size: int, width: int) -> int:
    if kind == "empty":
        return 0
    if kind == "sparse":
        return rng.randint(1, min(vocab_size, 64))
    if kind == "around_width":
        return min(vocab_size, max(0, width + rng.randint(-2, 2)))
    if kind == "dense":
        return rng.randint(vocab_size // 4, max(vocab_size // 4, 3 * vocab_size // 4))
    if kind == "full":
        return vocab_size
    return rng.randint(0, vocab_size)


def draw_case(seed: int, budget: FuzzBudget) -> FuzzCase:
    """The case of ``seed``: its group's structure (V, then R within the element budget, width,
    dtype, layout, counts), then its own contents (supports, non-finite values, activity)."""
    shape = random.Random(f"structure-{seed // budget.cases_per_structure}")
    vocab_limit = min(budget.max_vocab, budget.max_elements)
    edges = [v for v in EDGE_VOCABS if v <= vocab_limit]
    vocab_size = (
        shape.choice(edges) if shape.random() < 0.25 else _log_uniform(shape, 1, vocab_limit)
    )
    row_limit = min(budget.max_rows, budget.max_elements // vocab_size)
    draw = shape.random()
    num_reqs = 0 if draw < 0.03 else 1 if draw < 0.2 else _log_uniform(shape, 1, row_limit)
    max_num_kept = shape.choice(
        [0, 1, shape.randint(2, 2_048), 2_048, vocab_size - 1, vocab_size, vocab_size + 1]
    )
    dtype, layout = shape.choice(ALL_DTYPES), shape.choice(LAYOUTS)
    has_counts = shape.random() < 0.6
    num_sampled_dtype = shape.choice((torch.int32, torch.int64))
    strided_counts = shape.random() < 0.5

    contents = random.Random(f"contents-{seed}")
    width = min(max_num_kept, vocab_size)
    if contents.random() < 0.5:
        kinds = [contents.choice(SUPPORT_KINDS)] * num_reqs
    else:
        kinds = [contents.choice(SUPPORT_KINDS) for _ in range(num_reqs)]
    num_sampled = None
    if has_counts:
        num_sampled = tuple(contents.choice((-2, -1, 0, 1, 2, 3)) for _ in range(num_reqs))
    return FuzzCase(
        seed=seed,
        num_reqs=num_reqs,
        vocab_size=vocab_size,
        supports=tuple(_support(contents, kind, vocab_size, width) for kind in kinds),
        max_num_kept=max_num_kept,
        dtype=dtype,
        layout=layout,
        junk=contents.random() < 0.8,
        extremes=contents.random() < 0.5,  # drawn last: the other draws stay as they were
        num_sampled=num_sampled,
        num_sampled_dtype=num_sampled_dtype,
        strided_counts=strided_counts,
    )


def fuzz_budget(backend: str, device: torch.device) -> FuzzBudget:
    """The budget of ``backend`` on ``device``: its mode's, overridden by the environment."""
    spec, _ = registry.parse_backend(backend)
    mode = spec.emulation_env if spec.emulated() else device.type
    return dataclasses.replace(
        BUDGETS[mode],
        cases=int(os.environ.get("MASKS_FUZZ_CASES", BUDGETS[mode].cases)),
        seconds=float(os.environ.get("MASKS_FUZZ_SECONDS", BUDGETS[mode].seconds)),
        cases_per_structure=CUDA_CASES_PER_STRUCTURE.get(spec.name, 1) if mode == "cuda" else 1,
    )


def expected_mask(
    backend: str, logits: torch.Tensor, num_sampled: torch.Tensor | None, max_num_kept: int
) -> SamplingMask:
    """The reference result; for the torch backend (the reference) the NumPy contract's.

    Zero rows never reach a backend (the API answers them), and the NumPy contract cannot
    reshape them, so they are compared with the reference too.
    """
    if not backend.startswith("torch") or logits.shape[0] == 0:
        return reference(logits, num_sampled, max_num_kept)
    contract = numpy_contract(logits, num_sampled, max_num_kept)
    return SamplingMask(
        token_ids=torch.from_numpy(contract["token_ids"]),
        counts=torch.from_numpy(contract["counts"]),
        packed_mask=torch.from_numpy(contract["packed_mask"]),
        vocab_size=logits.shape[1],
    )


def check_case(backend: str, case: FuzzCase, device: torch.device) -> None:
    logits, num_sampled = case.logits(device), case.num_sampled_tokens(device)
    expected = expected_mask(backend, logits, num_sampled, case.max_num_kept)
    out = poisoned(case.num_reqs, case.vocab_size, expected.width, device)
    compact_sampling_mask(logits, num_sampled, case.max_num_kept, backend=backend, out=out)
    assert_masks_equal(out, expected)
    assert_guards_intact(out)


def run_fuzz(backend: str, device: torch.device, test_name: str, record_figures) -> None:
    budget = fuzz_budget(backend, device)
    spec, _ = registry.parse_backend(backend)
    mode_env = f"{spec.emulation_env}=1 " if spec.emulated() else ""
    first_seed = int(os.environ.get("MASKS_FUZZ_SEED", "0"))
    started = time.perf_counter()
    cases = largest = 0
    for seed in range(first_seed, first_seed + budget.cases):
        if time.perf_counter() - started > budget.seconds:
            break
        case = draw_case(seed, budget)
        print(f"fuzz {backend} {case.summary()}")
        try:
            check_case(backend, case, device)
        except Exception as error:
            replay = (
                f"{mode_env}MASKS_FUZZ_SEED={seed} MASKS_FUZZ_CASES=1 "
                f"python -m pytest 'tests/test_fuzz.py::{test_name}[{backend}]'"
            )
            raise AssertionError(
                f"{backend} fails fuzz case {case.summary()}: "
                f"{type(error).__name__}: {error}\nreplay: {replay}"
            ) from error
        cases += 1
        largest = max(largest, case.num_reqs * case.vocab_size)
    record_figures(
        backend=backend,
        device=str(device),
        cases_fuzzed=cases,
        seeds=[first_seed, first_seed + cases - 1],
        largest_case_elements=largest,
        seconds=round(time.perf_counter() - started, 2),
        budget=dataclasses.asdict(budget),
    )
    assert cases > 0, "the time budget ran out before the first case"


@pytest.mark.parametrize("backend", backend_params(torch.device("cpu")))
def test_fuzz_cpu_modes(backend: str, record_figures) -> None:
    """The CI budget: torch natively, Triton, CuPy and Numba through their CPU emulations."""
    run_fuzz(backend, torch.device("cpu"), "test_fuzz_cpu_modes", record_figures)


@pytest.mark.parametrize("backend", gpu_backend_params())
def test_fuzz_gpu(backend: str, record_figures) -> None:
    """Thousands of cases per backend natively on CUDA (budget: MASKS_FUZZ_CASES/_SECONDS)."""
    run_fuzz(backend, torch.device("cuda"), "test_fuzz_gpu", record_figures)
