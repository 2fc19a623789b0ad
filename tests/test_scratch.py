"""The per-stream zeroed scratch of the split kernels: sizes, growth, and exclusive holding."""

from __future__ import annotations

import threading

import pytest
import torch

from masks.backends import scratch


def test_hold_gives_a_buffer_at_least_as_large_as_asked_and_reuses_it() -> None:
    stream_scratch = scratch.StreamScratch()
    with stream_scratch.hold(10, torch.device("cpu")) as first:
        assert first.dtype == torch.int32 and first.numel() >= 10
    with stream_scratch.hold(5, torch.device("cpu")) as second:
        assert second.data_ptr() == first.data_ptr()


def test_a_larger_request_grows_the_buffer_by_doubling() -> None:
    stream_scratch = scratch.StreamScratch()
    with stream_scratch.hold(10, torch.device("cpu")):
        pass
    with stream_scratch.hold(11, torch.device("cpu")) as large:
        assert large.numel() >= 20  # so growth is rare


def test_a_second_holder_waits_until_the_first_has_launched_everything() -> None:
    stream_scratch = scratch.StreamScratch()
    events = []
    inside = threading.Event()

    def second_holder() -> None:
        inside.wait()
        with stream_scratch.hold(4, torch.device("cpu")):
            events.append("second")

    thread = threading.Thread(target=second_holder)
    thread.start()
    with stream_scratch.hold(4, torch.device("cpu")):
        inside.set()
        thread.join(timeout=0.2)  # blocked on the held scratch
        events.append("first done")
    thread.join()
    assert events == ["first done", "second"]


def test_each_stream_of_each_device_has_its_own_scratch() -> None:
    assert scratch.for_stream(0, 1) is scratch.for_stream(0, 1)
    assert scratch.for_stream(0, 1) is not scratch.for_stream(0, 2)
    assert scratch.for_stream(0, 1) is not scratch.for_stream(1, 1)


def test_a_failed_allocation_releases_the_stream(monkeypatch) -> None:
    stream_scratch = scratch.StreamScratch()

    def out_of_memory(*args, **kwargs):
        raise torch.OutOfMemoryError("injected")

    monkeypatch.setattr(scratch.torch, "zeros", out_of_memory)
    with pytest.raises(torch.OutOfMemoryError), stream_scratch.hold(4, torch.device("cpu")):
        pass
    monkeypatch.undo()
    assert not stream_scratch._lock.locked()
    with stream_scratch.hold(4, torch.device("cpu")) as buffer:
        assert buffer.numel() >= 4


def test_the_scratch_is_zero_when_allocated_and_when_grown() -> None:
    stream_scratch = scratch.StreamScratch()
    with stream_scratch.hold(10, torch.device("cpu")) as first:
        assert not first.any()
    with stream_scratch.hold(100, torch.device("cpu")) as grown:
        assert grown.numel() >= 100 and not grown.any()
