"""The launch-plan keys and the bounded caches the GPU backends share (`masks.backends.plans`)."""

from __future__ import annotations

import pytest
import torch

from masks.backends import plans
from masks.result import SamplingMask


def test_call_shape_keys_what_a_launch_depends_on() -> None:
    logits = torch.zeros(4, 100)
    out = SamplingMask.empty(4, 100, 16)
    key = plans.call_shape(logits, None, out)
    assert plans.call_shape(torch.ones(4, 100), None, SamplingMask.empty(4, 100, 16)) == key
    others = [
        plans.call_shape(logits.to(torch.bfloat16), None, out),
        plans.call_shape(torch.zeros(100, 4).t(), None, out),
        plans.call_shape(torch.zeros(4, 101)[:, :100], None, out),
        plans.call_shape(logits, torch.ones(4, dtype=torch.int32), out),
        plans.call_shape(logits, torch.ones(4, dtype=torch.int64), out),
        plans.call_shape(logits, torch.ones(8, dtype=torch.int32)[::2], out),
        plans.call_shape(logits, None, SamplingMask.empty(4, 100, 17)),
        plans.call_shape(torch.zeros(3, 100), None, SamplingMask.empty(3, 100, 16)),
    ]
    assert len({key, *others}) == 1 + len(others), "two different launches share a key"


def test_remember_keeps_the_first_value_and_bounds_the_cache(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(plans, "MAX_ENTRIES", 3)
    cache: dict[tuple, str] = {}
    assert plans.remember(cache, (1,), "first") == "first"
    assert plans.remember(cache, (1,), "racing") == "first"
    plans.remember(cache, (2,), "b")
    plans.remember(cache, (3,), "c")
    assert plans.remember(cache, (3,), "again") == "c" and len(cache) == 3
    assert plans.remember(cache, (4,), "d") == "d"
    assert cache == {(4,): "d"}
