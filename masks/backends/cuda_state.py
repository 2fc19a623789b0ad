"""torch's CUDA state as the GPU backends' launches read it: the current device, the raw pointer
of its current stream, and SM counts. Read on every call, so without `torch.cuda`'s Python
layers (building a `torch.cuda.Stream` per call cost about 1 us of host time)."""

from __future__ import annotations

import torch


def _current_stream_pointer(index: int) -> int:
    return torch.cuda.current_stream(index).cuda_stream


current_device = getattr(torch._C, "_cuda_getDevice", torch.cuda.current_device)
"""The index of torch's current CUDA device."""
raw_stream = getattr(torch._C, "_cuda_getCurrentRawStream", _current_stream_pointer)
"""``raw_stream(index)``: the pointer of torch's current stream on CUDA device ``index``."""

_sm_counts: dict[int, int] = {}


def sm_count(index: int) -> int:
    """The number of SMs of CUDA device ``index`` (read once per device)."""
    count = _sm_counts.get(index)
    if count is None:
        count = _sm_counts.setdefault(
            index, torch.cuda.get_device_properties(index).multi_processor_count
        )
    return count
