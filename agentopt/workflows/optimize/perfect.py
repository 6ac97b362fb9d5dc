"""When the search has nothing left to learn: a perfect minibatch, failures that resisted
proposals, failures a strategy has nothing to say about, and the validation ceiling.

All of them save calls that could not change the outcome. A parent whose weakest train tasks all
passed with the top score leaves no failure to reflect on (GEPA skips such a minibatch too),
so a proposal written from failures would spend a reflection call and a screening on a child
that can at best tie. A task the parent fails on which `RESIST_LIMIT` of its children, written
from failures and screened on it, did no better goes to the back of its minibatches (GEPA
walks the train split in shuffled epochs rather than hammering the same failures), and a
minibatch holding only such tasks and passed ones has nothing new to teach. And once the best
candidate passes every validation task with the top score, no candidate can rank above it on
quality, while screening admits only a child that beats its parent, never one that merely
ties at a lower cost: the search is over.

A strategy whose reply changed nothing (the reflection model gave the same tool description or
text back, or only lines quoting a task) produced no child, so nothing was screened and the
failures it was shown never counted as resisting. It was asked again from the same parent, on
the same failures, and answered the same: in one `tool-routing` bench run, six tool
proposals from one parent came back unchanged, three reflection requests each (one a tool),
18 of the run's 36. Once it came back empty `RESIST_LIMIT` times from a parent (`Barren`), a
minibatch whose failures it has all been shown is not put to it again; one with a failure it
has not seen is, and the other strategies still are.
"""

from __future__ import annotations

from collections.abc import Iterable

from agentopt.contracts.optimize_job import JobRecord
from agentopt.contracts.task_record import UnitResult
from agentopt.workflows.optimize.evaluation import UnitBook
from agentopt.workflows.optimize.ranking import SCORE_EPS
from agentopt.workflows.optimize.state import JobContext

FROM_FAILURES = frozenset({"instructions", "tools", "skills"})
"""Targets whose strategies learn from failed traces. The model and toolset strategies do not
need a failure (a cheaper model, an unused tool), so they still propose from a perfect parent."""
LEARNED = frozenset({"instructions", "rules", "tools", "skills"})
"""What a child's `strategy` starts with when it was written from its parent's failures."""
RESIST_LIMIT = 2
"""Children written from failures that did no better on a task before the task stops
steering its parent's proposals."""


def perfect(unit: UnitResult) -> bool:
    """Passed with the top score (scores are normalized to [0, 1]) and no error."""
    score = unit.score
    return score.status == "pass" and not score.errors() and (score.score or 0.0) >= 1 - SCORE_EPS


def all_perfect(units: Iterable[UnitResult]) -> bool:
    """Every unit perfect, and at least one."""
    seen = False
    for unit in units:
        if not perfect(unit):
            return False
        seen = True
    return seen


def at_ceiling(ctx: JobContext) -> str | None:
    """The best candidate, when every validation task of it is in the book and perfect."""
    job = ctx.job
    best = job.candidate(job.best) if job.best else None
    if best is None or best.validation is None:
        return None
    names = ctx.splits.validation.names
    units = ctx.book_units(best.id, names)
    return best.id if len(units) == len(names) and all_perfect(units.values()) else None


def resisted(job: JobRecord, book: UnitBook, parent: str) -> frozenset[str]:
    """The train tasks `parent` fails on which `RESIST_LIMIT` of its screened-out children,
    written from failures and screened on the task, scored no higher than it."""
    counts: dict[str, int] = {}
    for child in job.candidates:
        screening = child.screening
        if (
            child.parent != parent
            or child.status != "screened_out"
            or screening is None
            or child.strategy.split(":", 1)[0] not in LEARNED
        ):
            continue
        for name in screening.tasks:
            mine, theirs = book.get(parent, name), book.get(child.id, name)
            if mine is None or theirs is None or perfect(mine):
                continue
            if (theirs.score.score or 0.0) <= (mine.score.score or 0.0) + SCORE_EPS:
                counts[name] = counts.get(name, 0) + 1
    return frozenset(n for n, k in counts.items() if k >= RESIST_LIMIT)


class Barren:
    """Per (parent, strategy): the strategy's empty replies (`NoProposal.empty`) and the
    parent's failures they were shown, recorded as slots are applied, in slot order."""

    def __init__(self) -> None:
        self._empty: dict[tuple[str, str], tuple[int, frozenset[str]]] = {}

    def record(self, parent: str, strategy: str, failures: Iterable[str]) -> None:
        count, shown = self._empty.get((parent, strategy), (0, frozenset()))
        self._empty[(parent, strategy)] = (count + 1, shown | frozenset(failures))

    def of(self, parent: str, strategy: str) -> frozenset[str]:
        """The failures `strategy` was shown from `parent`, once it came back empty
        `RESIST_LIMIT` times from it (none before)."""
        count, shown = self._empty.get((parent, strategy), (0, frozenset()))
        return shown if count >= RESIST_LIMIT else frozenset()


def failures(units: dict[str, UnitResult]) -> list[str]:
    """The tasks of `units` not passed with the top score, by name."""
    return sorted(n for n, u in units.items() if not perfect(u))


def nothing_new_to_ask(
    strategy: str, parent: str, units: dict[str, UnitResult], barren: frozenset[str]
) -> str:
    """Why `strategy` would have nothing new to say on this minibatch (it came back empty
    `RESIST_LIMIT` times from `parent`, and was shown every failure of this one), or "" when
    it may."""
    failed = failures(units)
    if failed and all(n in barren for n in failed):
        return (
            f"nothing new to ask {strategy}: its replies from {parent} came back unchanged "
            f"{RESIST_LIMIT} times, on failures that included {', '.join(failed)}"
        )
    return ""


def nothing_to_learn(parent: str, units: dict[str, UnitResult], stuck: frozenset[str]) -> str:
    """Why a proposal written from `parent`'s failures on this minibatch would learn nothing
    new, or "" when it may."""
    if all_perfect(units.values()):
        if stuck:  # the failures it has were put last
            return (
                f"nothing new to learn from: {parent} passed all {len(units)} train tasks of "
                f"the minibatch with the top score, and its failures ({', '.join(sorted(stuck))})"
                f" resisted {RESIST_LIMIT} of its proposals each"
            )
        return (
            f"nothing to learn from: {parent} passed all {len(units)} of its weakest train "
            "tasks with the top score"
        )
    failed = sorted(n for n, u in units.items() if not perfect(u))
    if failed and all(n in stuck for n in failed):
        return (
            f"nothing new to learn from: {parent} still fails {', '.join(failed)}, on which "
            f"{RESIST_LIMIT} of its proposals each did no better"
        )
    return ""
