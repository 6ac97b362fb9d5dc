"""The consoles agentopt prints to.

On a terminal rich measures the window and wraps to it. Anywhere else — a pipe, a file, a CI
log — there is no window: rich would assume 80 columns and hard-wrap every long line, breaking
paths, URLs and diffs in the middle. There, text is never wrapped and tables get room to be as
wide as their content (`COLUMNS` still wins when a user sets it).
"""

from __future__ import annotations

import os
import sys
from typing import TextIO

from rich.console import Console

UNWRAPPED_WIDTH = 240
"""Room for tables when the output is not a terminal (text itself is never wrapped)."""


def make_console(*, stderr: bool = False, stream: TextIO | None = None) -> Console:
    """A console for stdout (or stderr) that hard-wraps only on a terminal."""
    target = stream if stream is not None else (sys.stderr if stderr else sys.stdout)
    terminal = _isatty(target)
    if terminal or os.environ.get("COLUMNS"):
        return Console(stderr=stderr, file=stream, highlight=False)
    return Console(
        stderr=stderr, file=stream, highlight=False, width=UNWRAPPED_WIDTH, soft_wrap=True
    )


def _isatty(stream: TextIO) -> bool:
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except ValueError:  # a closed stream
        return False
