"""masks: compact each LLM request's sampling support on the GPU, in four kernel languages.

    >>> from masks import compact_sampling_mask
    >>> m = compact_sampling_mask(logits, max_num_kept=512, backend="auto")
    >>> ids, offsets = m.to_csr()

See ``docs/CONTRACT.md`` for the exact function every backend computes.
"""

from masks.api import compact_sampling_mask
from masks.errors import BackendUnavailableError
from masks.registry import available_backends, is_emulated, unavailable_reasons
from masks.result import MAX_COMPACT_SUPPORT, SamplingMask

__all__ = [
    "MAX_COMPACT_SUPPORT",
    "BackendUnavailableError",
    "SamplingMask",
    "available_backends",
    "compact_sampling_mask",
    "is_emulated",
    "unavailable_reasons",
]
__version__ = "0.1.0"
