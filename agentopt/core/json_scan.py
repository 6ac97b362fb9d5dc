"""Bracket nesting in JSON text, strings skipped: where the deep parts and the closing
brackets are, without parsing (for text that does not parse, or that the parser would refuse).

Shared by the bounded JSON reader (`files/bounded.py`: where nesting passes its limit) and the
judge-reply parser (`evaluators/judges/parsing.py`: where each `{...}` group ends).
"""

from __future__ import annotations

from collections.abc import Iterator


def bracket_depths(text: str, start: int = 0, brackets: str = "[]{}") -> Iterator[tuple[int, int]]:
    """(offset, depth after it) of each bracket of `text` from `start` that stands outside a
    JSON string; `brackets` lists the pairs counted, each opening then closing."""
    opening, closing = brackets[0::2], brackets[1::2]
    depth, in_string, escaped = 0, False, False
    for i in range(start, len(text)):
        ch = text[i]
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in opening:
            depth += 1
            yield i, depth
        elif ch in closing:
            depth -= 1
            yield i, depth
