"""Collect every problem of one file, located by key path (and line when known), before
raising: a user fixing a config wants the whole list at once, not one error per run."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence
from typing import Any

from agentopt.core.errors import ConfigError, InputError, Problem, printable

KeyPath = tuple[str | int, ...]


def format_path(path: Sequence[str | int]) -> str:
    """`("evaluators", 2, "name")` → `evaluators[2].name`; `(2, "weight")` → `[2].weight`."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def describe(value: Any) -> str:
    """How a found value is shown in a message: short, typed, never a huge dump."""
    if value is None:
        return "nothing (null)"
    if isinstance(value, bool):
        return f"{str(value).lower()} (a boolean)"
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:37] + "..."
        return printable(f'"{shown}"') if value else "an empty string"
    if isinstance(value, int) and abs(value) >= 10**40:
        return f"an integer of {len(str(abs(value)))} digits"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    return type(value).__name__


def closest(word: str, choices: Iterable[str]) -> str | None:
    """The known key a typo most likely meant, or None when nothing is close."""
    options = list(choices)
    hits = difflib.get_close_matches(word, options, n=1, cutoff=0.6)
    if hits:
        return hits[0]
    lowered = {c.lower(): c for c in options}
    return lowered.get(word.lower())


class LineIndex:
    """Key path → 1-based line number, built while loading YAML (empty for JSON)."""

    def __init__(self, lines: dict[KeyPath, int] | None = None) -> None:
        self._lines = dict(lines or {})

    def set(self, path: KeyPath, line: int) -> None:
        self._lines[path] = line

    def copy(self) -> LineIndex:
        return LineIndex(self._lines)

    def move(self, old: KeyPath, new: KeyPath) -> None:
        """Give the keys under `new` the lines of `old` (after an alias was renamed)."""
        for key, line in list(self._lines.items()):
            if key[: len(old)] == old:
                self._lines.setdefault((*new, *key[len(old) :]), line)

    def line(self, path: Sequence[str | int]) -> int | None:
        """The line of `path`, or of its nearest ancestor that has one."""
        key = tuple(path)
        while key:
            if key in self._lines:
                return self._lines[key]
            key = key[:-1]
        return self._lines.get((), None)


MAX_LISTED = 100
"""Problems of each severity kept in full per file; the rest are counted (a rubric of 20,000
broken rows must cost time linear in its size, and no one reads past the first hundred)."""


class Collector:
    """Gathers errors and warnings for one file, then raises them all at once."""

    def __init__(self, file: str, lines: LineIndex | None = None) -> None:
        self.file = file
        self.lines = lines or LineIndex()
        self.problems: list[Problem] = []
        self._errors: list[Problem] = []
        self._warnings: list[Problem] = []
        self._sorted = 0  # problems[:_sorted] are in _errors / _warnings
        self._more = {"error": 0, "warning": 0}

    def location(self, path: Sequence[str | int]) -> str:
        text = format_path(path)
        line = self.lines.line(path) if path else None
        if line is None:
            return text
        return f"{text} (line {line})" if text else f"line {line}"

    def _add(self, path: Sequence[str | int], message: str, severity: str) -> None:
        kept = self.errors if severity == "error" else self._warnings
        if len(kept) >= MAX_LISTED:
            self._more[severity] += 1
            return
        self.problems.append(Problem(self.file, self.location(path), message, severity))

    def error(self, path: Sequence[str | int], message: str) -> None:
        self._add(path, message, "error")

    def warn(self, path: Sequence[str | int], message: str) -> None:
        self._add(path, message, "warning")

    def unknown_key(self, path: Sequence[str | int], key: str, known: Iterable[str]) -> None:
        """Warn about a key we do not read, suggesting the closest one we do."""
        if len(self.warnings) >= MAX_LISTED:
            self._more["warning"] += 1  # no did-you-mean to compute for a counted warning
            return
        guess = closest(key, known)
        hint = f'; did you mean "{guess}"?' if guess else ""
        self.warn((*path, key), f'unknown key "{key}" is ignored{hint}')

    def _sort(self) -> None:
        """File what was appended since last time (also by `problems.extend`): amortized O(1)
        per problem, where a list comprehension per check was quadratic."""
        for problem in self.problems[self._sorted :]:
            (self._errors if problem.severity == "error" else self._warnings).append(problem)
        self._sorted = len(self.problems)

    @property
    def errors(self) -> list[Problem]:
        self._sort()
        return self._errors

    @property
    def warnings(self) -> list[Problem]:
        self._sort()
        return self._warnings + self._count_line("warning")

    def _count_line(self, severity: str) -> list[Problem]:
        more = self._more[severity]
        if not more:
            return []
        message = f"... and {more:,} more {severity}s (the first {MAX_LISTED} are listed)"
        return [Problem(self.file, "", message, severity)]

    def listed(self) -> list[Problem]:
        """Every problem kept, then a line per severity counting those that were not."""
        return [*self.problems, *self._count_line("error"), *self._count_line("warning")]

    def raise_if_errors(self, *, config: bool = False) -> None:
        """Raise an InputError (or ConfigError) holding every error found so far."""
        errors = self.errors
        if errors:
            cls = ConfigError if config else InputError
            raise cls(problems=[*errors, *self._count_line("error")])


def expect_int(
    c: Collector, path: KeyPath, value: Any, *, lo: int | None = None, hi: int | None = None
) -> int | None:
    """An integer (not a bool), optionally within [lo, hi]; digit strings are accepted."""
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        value = int(value.strip())
    ok = isinstance(value, int) and not isinstance(value, bool)
    if ok and (lo is None or value >= lo) and (hi is None or value <= hi):
        return int(value)
    if lo is not None and hi is not None:
        want = f"an integer {lo}–{hi}"
    elif lo is not None:
        want = f"an integer ≥ {lo}"
    else:
        want = "an integer"
    c.error(path, f"expected {want}, found {describe(value)}")
    return None


def expect_str(c: Collector, path: KeyPath, value: Any, *, required: bool = True) -> str | None:
    """A non-empty string; numbers are accepted and converted (YAML `version: 1`)."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, str) and (value.strip() or not required):
        return value
    c.error(path, f"expected a non-empty string, found {describe(value)}")
    return None


def expect_mapping(c: Collector, path: KeyPath, value: Any) -> dict[str, Any] | None:
    if isinstance(value, dict):
        return value
    c.error(path, f"expected a mapping, found {describe(value)}")
    return None


def expect_bool(c: Collector, path: KeyPath, value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    c.error(path, f"expected true or false, found {describe(value)}")
    return None
