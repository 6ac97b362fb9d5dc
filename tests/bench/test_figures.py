"""A bench table's range reads as what it measured: a range only when its two ends differ as
printed, so a reader never sees "0.14–0.14" (a spread that is not there) nor a spread hidden
by rounding to fewer places than the figure is printed with."""

from __future__ import annotations

from bench.figures import spread


def test_ends_that_print_alike_are_one_value() -> None:
    assert spread([0.141, 0.144]) == "0.14"
    assert spread([55.2, 55.4], "{:.0f}") == "55"


def test_ends_that_print_differently_are_a_range_in_the_format_shown() -> None:
    assert spread([0.144, 0.1, 0.2]) == "0.10–0.20"
    assert spread([3.095, 3.105], "{:.3f}") == "3.095–3.105"
    assert spread([0.04, -0.03], "{:+.3f}") == "-0.030–+0.040"
