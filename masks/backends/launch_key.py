"""What a backend's launch plan for one call depends on, besides the data pointers.

Triton, CuPy and Numba each keep one launch plan per call shape (kernel, grid, every argument
but the pointers), so a repeated shape only reads its pointers; all three key the plan by this
tuple, plus what their own launch also depends on (device, variant, pointer alignment).
"""

from __future__ import annotations

import torch

from masks.result import SamplingMask


def call_shape(
    logits: torch.Tensor, num_sampled_tokens: torch.Tensor | None, out: SamplingMask
) -> tuple:
    """Logits dtype, shape and strides; num_sampled_tokens' dtype and stride (None when absent);
    the compact width W."""
    counts_in = None
    if num_sampled_tokens is not None:
        counts_in = (num_sampled_tokens.dtype, num_sampled_tokens.stride(0))
    return (logits.dtype, logits.shape, logits.stride(), counts_in, out.token_ids.shape[1])
