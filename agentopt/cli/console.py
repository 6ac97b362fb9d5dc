"""The consoles agentopt prints to.

On a terminal rich measures the window and wraps to it. Anywhere else — a pipe, a file, a CI
log — there is no window: rich would assume 80 columns and hard-wrap every long line, breaking
paths, URLs and diffs in the middle. There, text is never wrapped and tables get room to be as
wide as their content (`COLUMNS` still wins when a user sets it), without the blanks rich
pads a table's last column with (a pasted table would carry 200 trailing spaces a line).

No console turns `:name:` into an emoji: what agentopt prints (task names, queries, paths,
answers) shows as written, as its error lines always did, and a printed line no longer loads
rich's table of 3,600 emoji codes (~10 ms of CPU, a third of `eval validate`'s budget over
`--version`'s, issue 37).
"""

from __future__ import annotations

import os
import re
import sys
from typing import Any, TextIO

from rich.console import Console

UNWRAPPED_WIDTH = 240
"""Room for tables when the output is not a terminal (text itself is never wrapped)."""


def make_console(*, stderr: bool = False, stream: TextIO | None = None) -> Console:
    """A console for stdout (or stderr) that hard-wraps only on a terminal."""
    target = stream if stream is not None else (sys.stderr if stderr else sys.stdout)
    terminal = _isatty(target)
    if terminal or os.environ.get("COLUMNS"):
        return Console(stderr=stderr, file=stream, highlight=False, emoji=False)
    return Console(
        stderr=stderr,
        file=_TrimmedLines(stream, stderr=stderr),  # type: ignore[arg-type]
        highlight=False,
        emoji=False,
        width=UNWRAPPED_WIDTH,
        soft_wrap=True,
    )


_TRAILING_BLANKS = re.compile(r"[ \t]+(?=\n)")


class _TrimmedLines:
    """Writes to the stream with each line's trailing blanks dropped. The stream is looked up
    at each write when none is given, as rich does (tests and callers swap sys.stdout)."""

    def __init__(self, stream: TextIO | None, *, stderr: bool) -> None:
        self._stream = stream
        self._stderr = stderr

    @property
    def target(self) -> TextIO:
        if self._stream is not None:
            return self._stream
        return sys.stderr if self._stderr else sys.stdout

    def write(self, text: str) -> int:
        self.target.write(_TRAILING_BLANKS.sub("", text))
        return len(text)

    def flush(self) -> None:
        self.target.flush()

    def isatty(self) -> bool:
        return False

    def __getattr__(self, name: str) -> Any:
        return getattr(self.target, name)


def _isatty(stream: TextIO) -> bool:
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except ValueError:  # a closed stream
        return False
