"""The leak check: no proposal may carry a task's query or its expected answer.

A rule that quotes a train question with its answer ("When asked "Do you offer free
shipping?", the expected answer is: $35") states no policy: a model given it learns one FAQ
entry, passes that train task, and gains nothing on the reworded questions users ask. So every
text a proposal adds (instructions, skill bodies, tool and parameter descriptions) is checked
against every task of every split before it is evaluated, on normalised words (lower case,
punctuation dropped):

- `QUERY_WORDS` consecutive words of a query (a whole query when it is shorter, from
  `SHORT_QUERY` words on);
- the full expected answer on the same line as `ATTACHED_WORDS` consecutive words of its own
  query ("attached" to it);
- `QUERY_WORDS` consecutive words of an expected answer (a long answer quoted whole).

Text the starting configuration already holds is the user's own and never counts. The
reflection proposers drop the lines that leak (`Scrub`); the search refuses a candidate that
still leaks. Both are counted (`JobRecord.leak_refusals`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from agentopt.contracts.task import Task
from agentopt.core.files.agent_definition import AgentDefinition

QUERY_WORDS = 8
SHORT_QUERY = 5
"""A query shorter than `QUERY_WORDS` leaks whole from this many words on; a shorter one is
too generic to be a quotation ("where is my order")."""
ATTACHED_WORDS = 4
_WORD = re.compile(r"\w+")


def words(text: str) -> list[str]:
    return _WORD.findall(text.casefold())


def _grams(tokens: list[str], n: int) -> Iterator[tuple[str, ...]]:
    for i in range(len(tokens) - n + 1):
        yield tuple(tokens[i : i + n])


def _contains(tokens: list[str], seq: tuple[str, ...]) -> bool:
    n = len(seq)
    return any(tuple(tokens[i : i + n]) == seq for i in range(len(tokens) - n + 1))


@dataclass(frozen=True)
class Leak:
    """One quotation: which task, what of it, and the line that carries it."""

    task: str
    what: str
    """"query" or "expected answer"."""
    line: str

    def describe(self) -> str:
        line = " ".join(self.line.split())
        line = line if len(line) <= 80 else line[:79] + "…"
        return f"quotes the {self.what} of task {self.task}: {line!r}"


@dataclass
class _TaskText:
    name: str
    query: list[str]
    truth: tuple[str, ...]


@dataclass
class LeakCheck:
    """The tasks of every split, indexed once per job."""

    windows: dict[tuple[str, ...], str] = field(default_factory=dict)
    """Query (and long answer) windows → the task they come from."""
    kinds: dict[tuple[str, ...], str] = field(default_factory=dict)
    tasks: list[_TaskText] = field(default_factory=list)
    sizes: set[int] = field(default_factory=set)

    @classmethod
    def of(cls, tasks: Iterable[Task]) -> LeakCheck:
        check = cls()
        for task in tasks:
            for turn in task.turns:
                query = words(turn.query)
                check._add(query, task.name, "query", min_len=SHORT_QUERY)
                truth = tuple(words(turn.ground_truth or ""))
                check._add(list(truth), task.name, "expected answer", min_len=QUERY_WORDS)
                if truth:
                    check.tasks.append(_TaskText(task.name, query, truth))
        return check

    def _add(self, tokens: list[str], name: str, kind: str, *, min_len: int) -> None:
        if len(tokens) < min_len:
            return
        n = min(QUERY_WORDS, len(tokens))
        self.sizes.add(n)
        for gram in _grams(tokens, n):
            self.windows.setdefault(gram, name)
            self.kinds.setdefault(gram, kind)

    def in_line(self, line: str, allowed: str = "") -> Leak | None:
        """The first quotation `line` holds that `allowed` (the starting text) does not."""
        tokens = words(line)
        if not tokens:
            return None
        known = words(allowed) if allowed else []
        for n in sorted(self.sizes, reverse=True):
            for gram in _grams(tokens, n):
                name = self.windows.get(gram)
                if name is not None and not (known and _contains(known, gram)):
                    return Leak(name, self.kinds[gram], line)
        for task in self.tasks:
            if not _contains(tokens, task.truth) or (known and _contains(known, task.truth)):
                continue
            n = min(ATTACHED_WORDS, len(task.query))
            for gram in _grams(task.query, n):
                if _contains(tokens, gram) and not set(gram) <= set(task.truth):
                    return Leak(task.name, "query and expected answer", line)
        return None

    def in_text(self, text: str, allowed: str = "") -> list[Leak]:
        """The quotations of every line of `text` that is not a line of `allowed`."""
        old = {" ".join(words(x)) for x in allowed.splitlines()}
        found = []
        for line in text.splitlines():
            if " ".join(words(line)) in old:
                continue
            leak = self.in_line(line, allowed)
            if leak is not None:
                found.append(leak)
        return found

    def scrub(self, text: str, allowed: str) -> tuple[str, list[Leak]]:
        """`text` without its new lines that quote a task, and what was dropped."""
        old = {" ".join(words(x)) for x in allowed.splitlines()}
        kept: list[str] = []
        dropped: list[Leak] = []
        for line in text.splitlines():
            leak = None if " ".join(words(line)) in old else self.in_line(line, allowed)
            if leak is None:
                kept.append(line)
            else:
                dropped.append(leak)
        return "\n".join(kept), dropped

    def in_definition(self, new: AgentDefinition, start: AgentDefinition) -> list[Leak]:
        """Every quotation a configuration adds to the starting one."""
        return [
            leak for text, allowed in _texts(new, start) for leak in self.in_text(text, allowed)
        ]


def _descriptions(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "description" and isinstance(value, str):
                yield value
            else:
                yield from _descriptions(value)
    elif isinstance(node, list):
        for value in node:
            yield from _descriptions(value)


def _texts(new: AgentDefinition, start: AgentDefinition) -> Iterator[tuple[str, str]]:
    """(text, the starting text it may repeat) for every optimizable text."""
    yield new.instructions or "", start.instructions or ""
    old_skills = {s.name: s for s in start.skills}
    for skill in new.skills:
        before = old_skills.get(skill.name)
        yield skill.body or "", (before.body or "") if before else ""
    old_tools = "\n".join(_descriptions(start.tools))
    for text in _descriptions(new.tools):
        yield text, old_tools
