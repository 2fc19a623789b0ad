"""`compact_sampling_mask`: the contract's argument checks and dispatch, in one place."""

from __future__ import annotations

import operator

import torch

from masks import registry
from masks.result import MAX_COMPACT_SUPPORT, SamplingMask

FLOAT_DTYPES = (torch.float32, torch.float16, torch.bfloat16, torch.float64)
COUNT_DTYPES = (torch.int32, torch.int64)


def compact_sampling_mask(
    logits: torch.Tensor,
    num_sampled_tokens: torch.Tensor | None = None,
    max_num_kept: int = MAX_COMPACT_SUPPORT,
    backend: str = "auto",
    *,
    out: SamplingMask | None = None,
) -> SamplingMask:
    """Compact the support (finite logits) of each row on the logits' device.

    Args:
        logits: ``[num_reqs, vocab_size]`` float32/float16/bfloat16/float64, any strides.
        num_sampled_tokens: optional int32/int64 ``[num_reqs]``; rows with a value <= 0 are
            inactive (count 0, empty mask, ids all -1). ``None``: every row is active.
        max_num_kept: compact width ``W = min(max_num_kept, vocab_size)``.
        backend: ``"torch"``, ``"triton"``, ``"cupy"``, ``"numba"`` (optionally
            ``"name:variant"``) or ``"auto"`` (fastest native backend for the device).
        out: preallocated result (see `SamplingMask.empty`) to fill instead of allocating,
            so a serving loop or a CUDA graph allocates nothing per step.

    No host synchronisation on CUDA; kernels run on torch's current stream. The exception is a
    backend's first call on a device, which probes it with a tiny case compared on the host:
    warm up before serving (or capturing) with a call per dtype and shape, which also
    compiles the kernels and plans the launch.
    """
    max_num_kept = _check_inputs(logits, num_sampled_tokens, max_num_kept)
    kernel = registry.resolve(backend, logits.device, logits.dtype)
    num_reqs, vocab_size = logits.shape
    if out is None:
        out = SamplingMask.empty(num_reqs, vocab_size, max_num_kept, device=logits.device)
    else:
        _check_out(out, num_reqs, vocab_size, min(max_num_kept, vocab_size), logits.device)
    if num_reqs and vocab_size:
        try:
            kernel(logits, num_sampled_tokens, out)
        except Exception as error:  # e.g. a compile failure for a new dtype, a lost device
            if backend != registry.AUTO or not registry.may_pass_over(kernel, error):
                _name_the_backend(error, kernel)
                raise
            _answer_with_the_reference(kernel, error, logits, num_sampled_tokens, out)
    elif num_reqs:
        out.counts.zero_()
    return out


def _answer_with_the_reference(
    kernel: registry.Kernel,
    error: Exception,
    logits: torch.Tensor,
    num_sampled_tokens: torch.Tensor | None,
    out: SamplingMask,
) -> None:
    """`auto` never fails while the reference can run: its backend raised (a kernel that does
    not compile for this dtype, say), so the reference answers, and the backend is passed over
    for the dtype from then on. If the reference raises too, nothing is recorded and the
    backend's error is raised, naming both."""
    reference = registry.resolve(registry.REFERENCE, logits.device, logits.dtype)
    try:
        reference(logits, num_sampled_tokens, out)
    except Exception as second:
        _name_the_backend(error, kernel)
        if hasattr(error, "add_note"):  # Python >= 3.11
            error.add_note(f"then the reference raised {type(second).__name__}: {second}")
        raise error from None
    registry.pass_over(kernel, logits.device, logits.dtype, error)


def _name_the_backend(error: Exception, kernel: registry.Kernel) -> None:
    """Add which backend raised to the traceback (a note, so the exception's type is kept)."""
    if hasattr(error, "add_note"):  # Python >= 3.11
        error.add_note(f"raised by masks backend '{registry.backend_of(kernel)}'")


def _check_inputs(
    logits: torch.Tensor, num_sampled_tokens: torch.Tensor | None, max_num_kept: int
) -> int:
    """Raise on a bad argument; return ``max_num_kept`` as a Python int (a NumPy integer, such
    as a batch's largest top-k, is accepted)."""
    if not isinstance(logits, torch.Tensor):
        raise TypeError(f"logits must be a torch.Tensor, got {type(logits).__name__}")
    if logits.dtype not in FLOAT_DTYPES:
        raise TypeError(
            f"logits must have dtype float32, float16, bfloat16 or float64, got {logits.dtype}"
        )
    if logits.layout != torch.strided:  # a kernel reads the data pointer as dense memory
        raise TypeError(f"logits must be a dense (strided) tensor, got layout {logits.layout}")
    if logits.dim() != 2:
        raise ValueError(
            f"logits must be 2-D [num_reqs, vocab_size], got shape {tuple(logits.shape)}"
        )
    if num_sampled_tokens is not None:
        if not isinstance(num_sampled_tokens, torch.Tensor):
            raise TypeError(
                "num_sampled_tokens must be a torch.Tensor or None, "
                f"got {type(num_sampled_tokens).__name__}"
            )
        if num_sampled_tokens.dtype not in COUNT_DTYPES:
            raise TypeError(
                f"num_sampled_tokens must have dtype int32 or int64, got {num_sampled_tokens.dtype}"
            )
        if num_sampled_tokens.layout != torch.strided:
            raise TypeError(
                "num_sampled_tokens must be a dense (strided) tensor, "
                f"got layout {num_sampled_tokens.layout}"
            )
        if num_sampled_tokens.shape != logits.shape[:1]:
            raise ValueError(
                f"num_sampled_tokens must have shape [num_reqs] = [{logits.shape[0]}], "
                f"got {list(num_sampled_tokens.shape)}"
            )
        if num_sampled_tokens.device != logits.device:
            raise ValueError(
                f"num_sampled_tokens must be on the logits' device {logits.device}, "
                f"got {num_sampled_tokens.device}"
            )
    if type(max_num_kept) is not int:  # the common case without a call
        width = as_integer(max_num_kept)
        if width is None:
            raise TypeError(f"max_num_kept must be an int, got {type(max_num_kept).__name__}")
        max_num_kept = width
    if max_num_kept < 0:
        raise ValueError(f"max_num_kept must be >= 0, got {max_num_kept}")
    return max_num_kept


def as_integer(value: object) -> int | None:
    """``value`` as a Python int when it is an integer (a NumPy one, say), else None: never for a
    bool, nor for a tensor, whose conversion would read device memory on the host."""
    if isinstance(value, (bool, torch.Tensor)):
        return None
    try:
        return operator.index(value)
    except TypeError:
        return None


def _check_out(
    out: SamplingMask, num_reqs: int, vocab_size: int, width: int, device: torch.device
) -> None:
    if not isinstance(out, SamplingMask):
        raise TypeError(f"out must be a SamplingMask, got {type(out).__name__}")
    ids, counts, mask = out.token_ids, out.counts, out.packed_mask
    if (  # the serving-loop case, checked without building messages (host time per step)
        out.vocab_size == vocab_size
        and ids.dtype == torch.int32
        and counts.dtype == torch.int32
        and mask.dtype == torch.uint8
        and ids.shape == (num_reqs, width)
        and counts.shape == (num_reqs,)
        and mask.shape == (num_reqs, (vocab_size + 7) // 8)
        and ids.device == counts.device == mask.device == device
        and ids.is_contiguous()
        and counts.is_contiguous()
        and mask.is_contiguous()
    ):
        return
    if out.vocab_size != vocab_size:
        raise ValueError(f"out.vocab_size must be {vocab_size}, got {out.vocab_size}")
    expected = (
        ("token_ids", torch.int32, (num_reqs, width)),
        ("counts", torch.int32, (num_reqs,)),
        ("packed_mask", torch.uint8, (num_reqs, (vocab_size + 7) // 8)),
    )
    for field, dtype, shape in expected:
        tensor = getattr(out, field)
        if tensor.dtype != dtype:
            raise TypeError(f"out.{field} must have dtype {dtype}, got {tensor.dtype}")
        if tuple(tensor.shape) != shape:
            hint = " (W = min(max_num_kept, vocab_size))" if field == "token_ids" else ""
            raise ValueError(
                f"out.{field} must have shape {list(shape)}{hint}, got {list(tensor.shape)}"
            )
        if tensor.device != device:
            raise ValueError(f"out.{field} must be on {device}, got {tensor.device}")
        if not tensor.is_contiguous():
            raise ValueError(f"out.{field} must be contiguous, got strides {tensor.stride()}")
