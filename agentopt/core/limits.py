"""Size caps on what agentopt receives (issue 38 item 4): an agent's answer, a tool's result,
a judge's reply, a generated file. One 50 MB answer used to be held whole (1.17 GB of RSS),
written three times (journal, answers, results), cached and sent on to the judges. Now
anything over the cap is an error, the text itself discarded: never held past the cap by the
HTTP client, never written, cached or forwarded.

The cap is `options.max_answer_bytes` (default 1 MiB of UTF-8); HTTP bodies may be larger
by the JSON around the text (`max_body_bytes`). One owner: the call layer sets it from its
settings when a command builds it (`models/call.py`), everything else asks here.
"""

from __future__ import annotations

KIB = 1024
MIB = 1024 * KIB
DEFAULT_MAX_ANSWER_BYTES = MIB
"""1 MiB of text: a hundred times a long answer, far below what hurts memory."""

_max_answer = DEFAULT_MAX_ANSWER_BYTES


def max_answer_bytes() -> int:
    """The cap on one answer, tool result, judge reply or generated text, in UTF-8 bytes."""
    return _max_answer


def set_max_answer_bytes(value: int | None) -> None:
    """Set by the call layer from `options.max_answer_bytes` (None: the default)."""
    global _max_answer
    _max_answer = int(value) if value else DEFAULT_MAX_ANSWER_BYTES


def max_body_bytes() -> int:
    """The most an HTTP answer body may hold: the text cap with room for JSON escapes
    (`\\uXXXX` is six bytes for one), tool calls and the envelope."""
    return max(8 * MIB, 8 * _max_answer)


def oversize(text: str | None) -> int | None:
    """The UTF-8 size of `text` when it is over the cap, else None (cheap when it is not)."""
    if not text or len(text) * 4 <= _max_answer:
        return None
    size = len(text.encode("utf-8", "surrogatepass"))
    return size if size > _max_answer else None


def too_large(what: str, size: int) -> str:
    """The message for something over the cap."""
    return (
        f"{what} is {_human(size)}, over the {_human(_max_answer)} cap; it was discarded "
        "(raise options.max_answer_bytes if answers this long are expected)"
    )


def _human(n: int) -> str:
    return f"{n / MIB:.1f} MiB" if n >= MIB else f"{max(1, n // KIB)} KiB"
