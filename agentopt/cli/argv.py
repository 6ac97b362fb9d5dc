"""cli.md shows `--prompts P1 P2 …`; click options take one value each, so
`--prompts a b --expected x y` is rewritten to repeated options before parsing."""

from __future__ import annotations

VARIADIC = ("--prompts", "--expected")


def expand_variadic_options(argv: list[str]) -> list[str]:
    """Repeat a variadic option before each of its values, up to the next option."""
    out: list[str] = []
    current: str | None = None
    pending = False  # a variadic option seen with no value yet: keep it so click reports it
    for arg in argv:
        if current is not None and not arg.startswith("-"):
            out.extend([current, arg])
            pending = False
            continue
        if pending and current is not None:
            out.append(current)
        current, pending = (arg, True) if arg in VARIADIC else (None, False)
        if current is None:
            out.append(arg)
    if pending and current is not None:
        out.append(current)
    return out
