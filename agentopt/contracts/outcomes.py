"""The one ordering of task outcomes, and what a change between two of them is.

Compare (`eval show --compare`, the `view` compare page), the `--baseline` gate and the colours
of every view ask this module, so `partial → fail` is "worse" everywhere.

Best first: `pass` > `partial` > `fail` > `error` > `skipped`.

- `pass`: every evaluator passed.
- `partial`: the agent answered, but some evaluator could not decide (an evaluator error, which
  wins over a failing verdict when a status is made: evaluators.md §6). The verdict is not
  known to be wrong, so it ranks above `fail`.
- `fail`: some evaluator failed the answer.
- `error`: the agent failed (no answer to judge).
- `skipped`: never sent, because an earlier turn of the conversation failed (`turnSkipped`).
  It is the bottom, beside `error`: neither carries a verdict, so `error ↔ skipped` is
  "changed", not better or worse (which of the two a turn lands on depends on where the thread
  broke, not on how good the answers were).

An outcome present in only one run (`None` on the other side) is "changed": a task that was
added or removed is listed, never counted as an improvement or a regression.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from agentopt.contracts.record import Record

Outcome = Literal["pass", "partial", "fail", "error", "skipped"]
Change = Literal["better", "worse", "changed", "same"]

OUTCOME_ORDER: tuple[Outcome, ...] = ("pass", "partial", "fail", "error", "skipped")
"""Best first."""

_RANK: dict[str, int] = {"pass": 4, "partial": 3, "fail": 2, "error": 1, "skipped": 1}
"""Higher is better; `error` and `skipped` share the bottom (no verdict either way)."""

OUTCOME_LABELS: dict[str, str] = {
    "pass": "pass",
    "partial": "partial (an evaluator could not decide)",
    "fail": "fail",
    "error": "error (the agent failed)",
    "skipped": "skipped (an earlier turn failed)",
}
"""What each outcome means, in the words every view uses when it explains one."""

OUTCOME_COLOURS: dict[str, str] = {
    "pass": "green",
    "partial": "yellow",
    "fail": "red",
    "error": "magenta",
    "skipped": "bright_black",
}
"""The colour of each outcome (rich style names; the HTML report maps the same names)."""

CHANGE_COLOURS: dict[str, str] = {
    "better": "green",
    "worse": "red",
    "changed": "yellow",
    "same": "",
}
"""The colour of each kind of change, in the terminal, the HTML comparison and `view`."""


def outcome_rank(outcome: str | None) -> int:
    """Higher is better; 0 for an absent or unknown outcome (sorting: worst first by rank)."""
    return _RANK.get(outcome or "", 0)


def outcome_change(
    before: str | None, after: str | None
) -> Literal["better", "worse", "changed", "same"]:
    """What going from `before` to `after` is, by OUTCOME_ORDER.

    Equal outcomes are "same" (a score change within them is the caller's to judge, with its
    noise rule); an outcome missing on one side, an unknown one, or `error ↔ skipped` is
    "changed"; otherwise the higher rank is "better".
    """
    if before == after:
        return "same"
    b, a = _RANK.get(before or ""), _RANK.get(after or "")
    if b is None or a is None or a == b:
        return "changed"
    return "better" if a > b else "worse"


class OutcomeCounts(Record):
    """A run's tally: task runs by outcome, and the calls that failed, by side.

    Computed once (`evaluators.run_stats.RunTally`, as units finish) and carried by live
    progress and the run summary, so every view shows the same numbers with the same words.
    `passed + failed + partial + errors` is the task runs counted so far.
    """

    passed: int = 0
    failed: int = 0
    partial: int = 0
    """Task runs where an evaluator could not decide (the agent answered)."""
    errors: int = 0
    """Task runs where the agent failed."""
    agent_errors: int = 0
    """Agent turns that failed after retries (a turn skipped after one is not counted)."""
    evaluator_errors: int = 0
    """Evaluator results with no verdict (judgeParseFailed, judgeUnavailable, …)."""
    skipped_turns: int = 0
    """Turns never sent because an earlier turn of their conversation failed."""

    @property
    def runs(self) -> int:
        """Task runs counted."""
        return self.passed + self.failed + self.partial + self.errors

    @property
    def failed_calls(self) -> int:
        """Agent and evaluator calls that failed after retries: what `--max-errors` limits."""
        return self.agent_errors + self.evaluator_errors

    @classmethod
    def total(cls, parts: Iterable[OutcomeCounts]) -> OutcomeCounts:
        """Several runs' tallies as one (a matrix run's variants)."""
        sums = dict.fromkeys(cls.model_fields, 0)
        for part in parts:
            for name in sums:
                sums[name] += getattr(part, name)
        return cls(**sums)
