"""runevals' `--log-level` may be given without a value (`runevals --log-level` means info);
click options take one, so a bare one is completed before parsing (like argv.py's variadic
options). Kept apart from runevals_flags.py: every command line passes through here, so it
imports nothing."""

from __future__ import annotations

from collections.abc import Sequence

OPTIONAL_VALUES = {"--log-level": "info"}
"""Options whose value may be left out, and the value they then take."""


def fill_optional_values(argv: Sequence[str]) -> list[str]:
    """`--log-level` with no value (last, or before another option) → `--log-level=info`."""
    out = list(argv)
    for i, arg in enumerate(out):
        if arg == "--":
            break
        default = OPTIONAL_VALUES.get(arg)
        if default is not None and (i + 1 == len(out) or out[i + 1].startswith("-")):
            out[i] = f"{arg}={default}"
    return out
