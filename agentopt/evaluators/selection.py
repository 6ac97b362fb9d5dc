"""Which evaluators run on each task turn (evaluators.md §5, files.md §4.2).

1. The configured evaluators (eval.yaml `evaluators`, or `--evaluator` flags) run on every turn.
2. M365 documents add their own per item and per turn: the document's `default_evaluators`
   (when it has none: Relevance + Coherence, unless evaluators are configured) combined with the
   item's and then the turn's `evaluators` — `extend` (default) adds them, the item's options
   winning key by key on a clash; `replace` uses the item's (or turn's) own only.
3. A turn with criteria also gets builtin.task_adherence, once.
4. Nothing configured at all: Relevance + Coherence (+ task_adherence where criteria exist).
5. A conversation scored as a whole (`evaluation_level: conversation`) gets the evaluators of
   all its turns once, and builtin.goal_reached when a simulated user played it; the turns of
   a simulated conversation scored one by one get the task's evaluators, those that compare
   against the task's ground truth or criteria on the last turn only.
Evaluators are identified by canonical name, so `Relevance` and `builtin.relevance` are one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agentopt.contracts.task import Dataset, EvaluatorRef, Task
from agentopt.evaluators.base import EvaluatorUse
from agentopt.evaluators.registry import canonical_name, lookup

TASK_ADHERENCE = "builtin.task_adherence"
GOAL_REACHED = "builtin.goal_reached"
SYSTEM_DEFAULTS: tuple[str, ...] = ("Relevance", "Coherence")


def _key(name: str) -> str:
    return canonical_name(name).lower()


def merge(base: Sequence[EvaluatorUse], extra: Sequence[EvaluatorUse]) -> list[EvaluatorUse]:
    """`base` then `extra`; an evaluator in both keeps base's position with options merged,
    extra's winning."""
    out: list[EvaluatorUse] = [u.model_copy() for u in base]
    index = {_key(u.name): i for i, u in enumerate(out)}
    for use in extra:
        k = _key(use.name)
        if k in index:
            old = out[index[k]]
            out[index[k]] = old.model_copy(update={"options": {**old.options, **use.options}})
        else:
            index[k] = len(out)
            out.append(use.model_copy())
    return out


def _uses(refs: Sequence[EvaluatorRef | EvaluatorUse | str | Any] | None) -> list[EvaluatorUse]:
    return [EvaluatorUse.coerce(r) for r in refs or []]


def _apply(
    base: list[EvaluatorUse], own: list[EvaluatorRef] | None, mode: str
) -> list[EvaluatorUse]:
    if own is None:
        return base
    return _uses(own) if mode == "replace" else merge(base, _uses(own))


def select_evaluators(
    task: Task,
    *,
    configured: Sequence[EvaluatorUse | EvaluatorRef | str | Any] | None = None,
    dataset: Dataset | None = None,
) -> list[list[EvaluatorUse]]:
    """The evaluators for each turn of `task` (one list per turn, in order).

    Args:
        task: the task.
        configured: eval.yaml `evaluators` or `--evaluator` flags (None or [] = none).
        dataset: the task's dataset; M365 documents (`format == "m365"`) carry defaults.
    """
    chosen = _uses(configured)
    is_m365 = dataset is not None and dataset.format == "m365"
    per_turn: list[list[EvaluatorUse]] = []
    for turn in task.turns:
        if is_m365:
            assert dataset is not None
            if dataset.default_evaluators is not None:
                base = _uses(dataset.default_evaluators)
            else:
                base = [] if chosen else _uses(SYSTEM_DEFAULTS)
            own = _apply(base, task.evaluators, task.evaluators_mode)
            own = _apply(own, turn.evaluators, turn.evaluators_mode)
            uses = merge(chosen, own)
        else:
            uses = chosen or _uses(SYSTEM_DEFAULTS)
            uses = _apply(uses, task.evaluators, task.evaluators_mode)
            uses = _apply(uses, turn.evaluators, turn.evaluators_mode)
        if turn.criteria and all(_key(u.name) != TASK_ADHERENCE for u in uses):
            uses = [*uses, EvaluatorUse(name=TASK_ADHERENCE)]
        per_turn.append(uses)
    return per_turn


def select_for_conversation(
    task: Task,
    *,
    configured: Sequence[EvaluatorUse | EvaluatorRef | str | Any] | None = None,
    dataset: Dataset | None = None,
    simulated: bool = False,
) -> list[EvaluatorUse]:
    """The evaluators of `task` scored as one conversation (rule 5)."""
    uses: list[EvaluatorUse] = []
    for turn_uses in select_evaluators(task, configured=configured, dataset=dataset):
        uses = merge(uses, turn_uses)
    if simulated and all(_key(u.name) != GOAL_REACHED for u in uses):
        uses.append(EvaluatorUse(name=GOAL_REACHED))
    return uses


def select_for_simulated_turns(
    task: Task,
    turns: int,
    *,
    configured: Sequence[EvaluatorUse | EvaluatorRef | str | Any] | None = None,
    dataset: Dataset | None = None,
) -> list[list[EvaluatorUse]]:
    """The evaluators of each of `turns` agent turns of a simulated conversation (rule 5)."""
    uses = select_evaluators(task, configured=configured, dataset=dataset)[0]
    earlier = [u for u in uses if not _about_the_end(u)]
    return [earlier] * max(turns - 1, 0) + [uses]


def _about_the_end(use: EvaluatorUse) -> bool:
    """Compares against the task's ground truth or criteria (where the conversation ends)."""
    if _key(use.name) in (TASK_ADHERENCE, GOAL_REACHED):
        return True
    info = lookup(use.name)
    return info is not None and "ground_truth" in info.needs
