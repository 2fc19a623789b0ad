"""The README's example runs and prints what it shows (a doctest of README.md)."""

from __future__ import annotations

import doctest
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_the_readme_example_prints_what_it_shows() -> None:
    results = doctest.testfile(
        str(README), module_relative=False, optionflags=doctest.NORMALIZE_WHITESPACE
    )
    assert results.attempted >= 10, "the README's example is gone or no longer a doctest"
    assert results.failed == 0
