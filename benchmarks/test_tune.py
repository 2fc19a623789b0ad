"""`benchmarks/tune.py` sweeps each knob from its committed default, read from the module."""

from __future__ import annotations

from tune import knob_choices


def test_the_default_comes_first_and_once() -> None:
    knobs = {"TILES": (2, 4, 8), "BAND": ((1.0, 2.0),)}
    choices = knob_choices({"TILES": 4, "BAND": (3.0, 4.0)}, knobs)
    assert choices == {"TILES": (4, 2, 8), "BAND": ((3.0, 4.0), (1.0, 2.0))}
