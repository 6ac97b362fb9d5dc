"""How the benches write a range of measurements: one place, so every table reads alike."""

from __future__ import annotations

from collections.abc import Sequence


def spread(values: Sequence[float], fmt: str = "{:.2f}") -> str:
    """The range as `fmt` writes it, low–high; one value when both ends read the same in that
    format (0.141 and 0.144 at two decimals are "0.14", not "0.14–0.14"; 3.095 and 3.105 at
    three are a range, though they agree to two)."""
    lo, hi = fmt.format(min(values)), fmt.format(max(values))
    return lo if lo == hi else f"{lo}–{hi}"
