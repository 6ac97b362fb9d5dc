"""The bench's own check that no optimizer's text carries a task verbatim: a task's question
(its id included or not), or its expected answer on a line with its question. Independent of
agentopt's `leak.py` (which refuses near-verbatim quotations too), so the table's count of
leaking winners is not agentopt grading itself."""

from __future__ import annotations

import re
from collections.abc import Iterable

from bench.gepa_peer.world_base import BenchTask

_ID = re.compile(r"^\[t\d+\]\s*")


def _flat(text: str) -> str:
    return " ".join(text.lower().split())


def leaks(texts: Iterable[str], tasks: list[BenchTask]) -> list[str]:
    """The tasks whose question (or question with answer) one of `texts` carries."""
    found: list[str] = []
    lines = [_flat(line) for text in texts for line in text.splitlines()]
    for task in tasks:
        question = _flat(_ID.sub("", task.query))
        whole = _flat(task.query)
        for line in lines:
            # A templated question ("A customer asks a question about returns.") is a topic,
            # not a quotation; only a worded one (`memorized-qa`) counts without its id.
            quoted = whole in line or (bool(task.text) and question in line)
            if quoted or (task.truth and question in line and task.truth.lower() in line):
                found.append(task.name)
                break
    return found
