"""Collecting every problem of one file before failing, and wording them for people.

Loaders report all problems at once (a user fixing a 200-line file should not meet them one
run at a time), so they append to a `ProblemLog` and raise at the end.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from agentopt.core.errors import InputError, Problem

_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_LINE = re.compile(r"^line (\d+)")
_INDEX = re.compile(r"\[(\d+)\]")


MAX_LISTED = 100
"""Problems of each severity kept in full per file; beyond that they are counted. A file of
20,000 broken lines gets its first 100 errors and "... and 19,900 more errors", in time and
memory linear in its size (the list was de-duplicated with `in`: 54 s of CPU for it)."""


class ProblemLog:
    """Errors and warnings of one file, in the order they were found: each distinct problem
    once (a set makes the check O(1)), the first `MAX_LISTED` of each severity in full."""

    def __init__(self, file: str) -> None:
        self.file = file
        self.problems: list[Problem] = []
        self._seen: set[Problem] = set()
        self._kept: dict[bool, list[Problem]] = {True: [], False: []}
        self._more: dict[bool, int] = {True: 0, False: 0}

    def error(self, location: str, message: str) -> None:
        self._add(Problem(self.file, location, message, "error"))

    def warn(self, location: str, message: str) -> None:
        self._add(Problem(self.file, location, message, "warning"))

    def extend(self, problems: Iterable[Problem]) -> None:
        for p in problems:
            self._add(p)

    def _add(self, problem: Problem) -> None:
        if problem in self._seen:
            return
        self._seen.add(problem)
        is_error = problem.severity == "error"
        kept = self._kept[is_error]
        if len(kept) >= MAX_LISTED:
            self._more[is_error] += 1
            return
        kept.append(problem)
        self.problems.append(problem)

    @property
    def errors(self) -> list[Problem]:
        """The errors kept in full (`error_count` counts them all)."""
        return self._kept[True]

    @property
    def warnings(self) -> list[Problem]:
        return self._kept[False]

    def listing(self, severity: str) -> bool:
        """Whether a new problem of `severity` would still be listed in full (not only
        counted): a caller can skip wording it carefully when it would not be."""
        return len(self._kept[severity == "error"]) < MAX_LISTED

    @property
    def error_count(self) -> int:
        """Every distinct error found, listed or not."""
        return len(self._kept[True]) + self._more[True]

    def in_order(self) -> list[Problem]:
        """Problems sorted by line number (stable), so people can fix them top to bottom,
        then one line per severity saying how many more were found."""
        ordered = sorted(self.problems, key=_line_number)
        for is_error, more in self._more.items():
            if more:
                noun = "error" if is_error else "warning"
                ordered.append(
                    Problem(
                        self.file,
                        "",
                        f"... and {more:,} more {noun}{'s' if more != 1 else ''} "
                        f"(the first {MAX_LISTED} are listed)",
                        "error" if is_error else "warning",
                    )
                )
        return ordered

    def raise_if_errors(self, hint: str | None = None) -> None:
        """Raise one InputError carrying every error (then the warnings, for context)."""
        if self.errors:
            ordered = self.in_order()
            errors = [p for p in ordered if p.severity == "error"]
            warnings = [p for p in ordered if p.severity != "error"]
            raise InputError(problems=errors + warnings, hint=hint)


def _line_number(problem: Problem) -> tuple[int, list[int]]:
    """Line number first, then the list indexes in a key path (`items[10]` after `items[9]`)."""
    match = _LINE.match(problem.location)
    return (int(match[1]) if match else 0, [int(n) for n in _INDEX.findall(problem.location)])


def describe(value: Any) -> str:
    """A short, plain-English rendering of a JSON value for "found ..." messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()}"
    if isinstance(value, int | float):
        return f"the number {value}"
    if isinstance(value, str):
        if not value.strip():
            return "an empty string" if not value else "blank text"
        shown = value if len(value) <= 40 else value[:37] + "..."
        return f"the text {_quote(shown)}"
    if isinstance(value, list):
        if not value:
            return "an empty list"
        return f"a list of {len(value)} item{'s' if len(value) != 1 else ''}"
    if isinstance(value, dict):
        if not value:
            return "an empty object"
        keys = ", ".join(_quote(str(k)) for k in list(value)[:5])
        more = ", ..." if len(value) > 5 else ""
        return f"an object with keys {keys}{more}"
    return type(value).__name__


def _quote(text: str) -> str:
    return '"' + text.replace('"', '\\"') + '"'


def did_you_mean(word: str, known: Sequence[str], synonyms: Mapping[str, str] | None = None) -> str:
    """' (did you mean "x"?)' for the closest known word, or '' when nothing is close.

    `synonyms` maps words people commonly use (e.g. "answer") to the known key they meant.
    """
    if synonyms and word.lower() in synonyms:
        return f' (did you mean "{synonyms[word.lower()]}"?)'
    close = difflib.get_close_matches(word, list(known), n=1, cutoff=0.76)
    if not close:
        lowered = {k.lower(): k for k in known}
        if word.lower() in lowered:
            close = [lowered[word.lower()]]
    return f' (did you mean "{close[0]}"?)' if close else ""


def key_path(parts: Iterable[str | int]) -> str:
    """`items[3].turns[0].prompt` from ("items", 3, "turns", 0, "prompt")."""
    out = ""
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        elif _IDENT.match(part):
            out += f".{part}" if out else part
        else:
            out += f"[{_quote(part)}]"
    return out


def join_path(base: str, key: str | int) -> str:
    """Extend a rendered key path by one step."""
    tail = key_path([key])
    if not base:
        return tail
    return base + tail if tail.startswith("[") else f"{base}.{tail}"
