"""The launch plans of the GPU backends: what a plan depends on, and how many are kept.

Triton, CuPy and Numba each keep one launch plan per call shape (kernel, grid, the arguments
that are not pointers), so a repeated shape only reads its pointers; all three key the plan by
`call_shape`, the device and the variant, and store it with `remember`. Pointer alignment,
which picks load paths, is handled per backend: CuPy keys the logits' 16-byte alignment,
Triton plans only calls whose pointers are all 16-byte aligned (the others go through its JIT,
which specialises on alignment), and Numba's plan derives the alignment arguments from each
call's pointers.
"""

from __future__ import annotations

from typing import TypeVar

import torch

from masks.result import SamplingMask

MAX_ENTRIES = 4096
"""Entries a per-shape or per-stream cache holds before it is emptied: a server sees a few
shapes and streams, but a sweep over thousands of them must not grow memory without bound."""

Value = TypeVar("Value")


def call_shape(
    logits: torch.Tensor, num_sampled_tokens: torch.Tensor | None, out: SamplingMask
) -> tuple:
    """Logits dtype, shape and strides; num_sampled_tokens' dtype and stride (None when absent);
    the compact width W."""
    counts_in = None
    if num_sampled_tokens is not None:
        counts_in = (num_sampled_tokens.dtype, num_sampled_tokens.stride(0))
    return (logits.dtype, logits.shape, logits.stride(), counts_in, out.token_ids.shape[1])


def remember(cache: dict[tuple, Value], key: tuple, value: Value) -> Value:
    """Store ``value`` under ``key`` unless a racing thread stored one first, and return the
    stored one; a full cache is emptied first (each step is one dict operation, atomic under
    the GIL). A value dropped from the cache stays valid for whoever still holds it."""
    if key not in cache and len(cache) >= MAX_ENTRIES:
        cache.clear()
    return cache.setdefault(key, value)
