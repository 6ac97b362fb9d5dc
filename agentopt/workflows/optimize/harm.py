"""Lines that hurt: an instruction a child added that broke validation answers.

A rule can help train and hurt held-out tasks (a promotion that has ended, a policy of one
customer group applied to everyone, the wrong one of two plausible rules). Screening on train
cannot see it; the child's validation can: on the tasks where the child scored below its
parent, its answers carry the rule's words and the parent's did not. A line whose words sit in
the answers of at least `MIN_BROKEN` such tasks, more than in answers it improved, is harmful:
the rule proposer takes it out of the parents that hold it and never writes it again, and a
reflection reply that brings it back loses it (`strategies/prompts.scrub`). Validation decides
here as it decides the ranking; the test split never does.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from agentopt.contracts.optimize_job import BASELINE_ID, CandidateRecord
from agentopt.workflows.optimize.ranking import SCORE_EPS
from agentopt.workflows.optimize.state import JobContext
from agentopt.workflows.optimize.strategies.failure_groups import STOP, norm, tokens

MIN_BROKEN = 2
_QUOTED = re.compile(r"(?<!\w)['‘\"“`]([^'’\"”`\n]{2,80}?)['’\"”`](?!\w)")


def _line_key(line: str) -> str:
    return norm(line.strip().removeprefix("- "))


def _words_of(line: str) -> list[str]:
    """What a line asks the agent to say: its quoted spans, else the longest run of
    non-function words after its condition ("On returns: mention the refund window")."""
    quoted = [norm(q) for q in _QUOTED.findall(line)]
    if quoted:
        return [q for q in quoted if q]
    action = line.rsplit(":", 1)[-1]
    best: list[str] = []
    run: list[str] = []
    for w in [*tokens(action), ""]:
        if w and w not in STOP:
            run.append(w)
            continue
        best = run if len(run) > len(best) else best
        run = []
    return [" ".join(best[1:])] if len(best) > 2 else []  # without the verb


def _has(answer: str, phrase: str) -> bool:
    return f" {phrase} " in f" {answer} "


class HarmTracker:
    """Harmful lines, worked out once per evaluated candidate."""

    def __init__(self) -> None:
        self.seen: dict[str, frozenset[str]] = {}

    def lines(self, ctx: JobContext) -> frozenset[str]:
        for c in ctx.job.evaluated:
            if c.id not in self.seen and c.id != BASELINE_ID:
                self.seen[c.id] = frozenset(_harmful(ctx, c))
        return frozenset().union(*self.seen.values()) if self.seen else frozenset()


def _added(ctx: JobContext, child: str, parent: str) -> Iterator[str]:
    mine = ctx.definitions.get(child)
    theirs = ctx.definitions.get(parent)
    if mine is None or theirs is None:
        return
    old = {_line_key(x) for x in (theirs.instructions or "").splitlines()}
    for line in (mine.instructions or "").splitlines():
        key = _line_key(line)
        if key and key not in old and not line.lstrip().startswith("#"):
            yield line


def _harmful(ctx: JobContext, child: CandidateRecord) -> set[str]:
    parent = ctx.job.candidate(child.parent) if child.parent else None
    if parent is None or parent.validation is None or child.validation is None:
        return set()
    if child.strategy == "merge":
        return set()
    lines = list(_added(ctx, child.id, parent.id))
    if not lines:
        return set()
    found: set[str] = set()
    names = ctx.splits.validation.names
    for line in lines:
        phrases = _words_of(line)
        if not phrases:
            continue
        broken = improved = 0
        for name in names:
            mine, theirs = ctx.book.get(child.id, name), ctx.book.get(parent.id, name)
            if mine is None or theirs is None:
                continue
            a, b = mine.score.score, theirs.score.score
            if a is None or b is None:
                continue
            said = norm(mine.record.response or "")
            before = norm(theirs.record.response or "")
            if not any(_has(said, p) and not _has(before, p) for p in phrases):
                continue
            if a < b - SCORE_EPS:
                broken += 1
            elif a > b + SCORE_EPS:
                improved += 1
        if broken >= MIN_BROKEN and broken > improved:
            found.add(_line_key(line))
    return found
