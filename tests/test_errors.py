"""Every error of the contract: the right exception, naming the argument, expectation and value."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch

from masks import BackendUnavailableError, SamplingMask, compact_sampling_mask

LOGITS = torch.randn(3, 10)


@pytest.mark.parametrize(
    ("kwargs", "error", "pattern"),
    [
        ({"logits": [[1.0, 2.0]]}, TypeError, r"logits must be a torch.Tensor, got list"),
        ({"logits": torch.ones(3, 10, dtype=torch.int32)}, TypeError, r"logits .*dtype.*int32"),
        ({"logits": torch.ones(3, 10, dtype=torch.int64)}, TypeError, r"logits .*dtype.*int64"),
        ({"logits": torch.ones(3, 10, dtype=torch.bool)}, TypeError, r"logits .*dtype.*bool"),
        (
            {"logits": torch.randn(3, 10).to_sparse()},
            TypeError,
            r"logits must be a dense \(strided\) tensor, got layout torch.sparse_coo",
        ),
        ({"logits": torch.randn(10)}, ValueError, r"logits must be 2-D .*got shape \(10,\)"),
        ({"logits": torch.randn(2, 3, 4)}, ValueError, r"logits must be 2-D .*\(2, 3, 4\)"),
        (
            {"logits": torch.empty(3, 10, device="meta")},
            ValueError,
            r"logits must be on a CPU or CUDA device, got meta",
        ),
        ({"num_sampled_tokens": [1, 1, 1]}, TypeError, r"num_sampled_tokens must be .*got list"),
        (
            {"num_sampled_tokens": torch.ones(3)},
            TypeError,
            r"num_sampled_tokens must have dtype int32 or int64, got torch.float32",
        ),
        (
            {"num_sampled_tokens": torch.ones(4, dtype=torch.int32)},
            ValueError,
            r"num_sampled_tokens must have shape \[num_reqs\] = \[3\], got \[4\]",
        ),
        (
            {"num_sampled_tokens": torch.ones(3, dtype=torch.int32).to_sparse()},
            TypeError,
            r"num_sampled_tokens must be a dense \(strided\) tensor, got layout torch.sparse_coo",
        ),
        (
            {"num_sampled_tokens": torch.ones(3, 1, dtype=torch.int64)},
            ValueError,
            r"num_sampled_tokens must have shape .*got \[3, 1\]",
        ),
        (
            {"num_sampled_tokens": torch.ones(3, dtype=torch.int32, device="meta")},
            ValueError,
            r"num_sampled_tokens must be on the logits' device cpu, got meta",
        ),
        ({"max_num_kept": -1}, ValueError, r"max_num_kept must be >= 0, got -1"),
        ({"max_num_kept": 2.0}, TypeError, r"max_num_kept must be an int, got float"),
        ({"max_num_kept": True}, TypeError, r"max_num_kept must be an int, got bool"),
        ({"max_num_kept": np.True_}, TypeError, r"max_num_kept must be an int, got bool"),
        ({"max_num_kept": torch.tensor(4)}, TypeError, r"max_num_kept must be an int, got Tensor"),
        ({"max_num_kept": np.int64(-1)}, ValueError, r"max_num_kept must be >= 0, got -1"),
        (
            {"backend": "cuda"},
            ValueError,
            r"backend must be one of torch, triton, cupy, numba, auto",
        ),
        ({"backend": 3}, TypeError, r"backend must be a str, got int"),
        ({"backend": ["torch"]}, TypeError, r"backend must be a str, got list"),
        (
            {"backend": "torch:nope"},
            ValueError,
            r"backend 'torch' has variants reference, got 'nope'",
        ),
        ({"backend": "torch:"}, ValueError, r"backend 'torch:' names no variant after ':'"),
        (
            {"backend": "auto:fused"},
            ValueError,
            r"backend 'auto' takes no variant, got 'auto:fused'",
        ),
        ({"backend": "auto:"}, ValueError, r"backend 'auto' takes no variant, got 'auto:'"),
    ],
    ids=lambda value: None if isinstance(value, dict | type) else value[:40],
)
def test_bad_arguments_raise(kwargs, error, pattern) -> None:
    arguments = {"logits": LOGITS, "backend": "torch", **kwargs}
    with pytest.raises(error, match=pattern):
        compact_sampling_mask(**arguments)


@pytest.mark.parametrize("width", [np.int64(4), np.int32(4), np.uint16(4)])
def test_a_numpy_integer_width_is_an_int(width) -> None:
    """vLLM's width is the batch's largest top-k, which may come out of NumPy."""
    result = compact_sampling_mask(LOGITS, max_num_kept=width, backend="torch")
    assert result.token_ids.shape == (3, 4)
    assert torch.equal(result.token_ids, compact_sampling_mask(LOGITS, max_num_kept=4).token_ids)


def _out_with(**fields: torch.Tensor) -> SamplingMask:
    """A sound ``out`` for `LOGITS` at W = 4 with the given fields replaced."""
    return dataclasses.replace(SamplingMask.empty(3, 10, 4), **fields)


@pytest.mark.parametrize(
    ("out", "error", "pattern"),
    [
        ("not a mask", TypeError, r"out must be a SamplingMask, got str"),
        (SamplingMask.empty(3, 11, 4), ValueError, r"out.vocab_size must be 10, got 11"),
        (
            SamplingMask.empty(3, 10, 5),
            ValueError,
            r"out.token_ids must have shape \[3, 4\] \(W = min\(max_num_kept, vocab_size\)\), "
            r"got \[3, 5\]",
        ),
        (SamplingMask.empty(2, 10, 4), ValueError, r"out.token_ids must have shape \[3, 4\]"),
        (
            _out_with(token_ids=torch.empty(3, 4, dtype=torch.int64)),
            TypeError,
            r"out.token_ids must have dtype torch.int32, got torch.int64",
        ),
        (
            _out_with(token_ids=torch.empty(4, 3, dtype=torch.int32).t()),
            ValueError,
            r"out.token_ids must be contiguous",
        ),
        (SamplingMask.empty(3, 10, 4, device="meta"), ValueError, r"out.token_ids must be on cpu"),
        (
            _out_with(counts=torch.empty(4, dtype=torch.int32)),
            ValueError,
            r"out.counts must have shape \[3\], got \[4\]",
        ),
        (
            _out_with(packed_mask=torch.empty(3, 5, dtype=torch.uint8)),
            ValueError,
            r"out.packed_mask must have shape \[3, 2\], got \[3, 5\]",
        ),
    ],
    ids=lambda value: value[:30] if isinstance(value, str) else None,
)
def test_bad_out_raises(out, error, pattern) -> None:
    with pytest.raises(error, match=pattern):
        compact_sampling_mask(LOGITS, max_num_kept=4, backend="torch", out=out)


@pytest.mark.parametrize(
    ("sizes", "pattern"),
    [
        ((-1, 10, 4), r"num_reqs must be >= 0, got -1"),
        ((3, -10, 4), r"vocab_size must be >= 0, got -10"),
        ((3, 10, -4), r"max_num_kept must be >= 0, got -4"),
    ],
)
def test_empty_outputs_of_a_negative_size_raise(sizes, pattern) -> None:
    with pytest.raises(ValueError, match=pattern):
        SamplingMask.empty(*sizes)


@pytest.mark.parametrize("backend", ["cupy", "triton", "numba"])
def test_named_gpu_backend_on_cpu_tensor_is_unavailable(backend, monkeypatch) -> None:
    """Outside its CPU emulation, a GPU backend refuses CPU tensors instead of falling back."""
    from masks import registry

    spec = registry.BACKENDS[backend]
    if spec.emulated():
        pytest.skip(f"{spec.emulation_env}=1 runs {backend} on CPU tensors")
    with pytest.raises(BackendUnavailableError, match=rf"backend '{backend}'.*CPU tensor"):
        compact_sampling_mask(LOGITS, backend=backend)
