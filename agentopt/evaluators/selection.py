"""Which evaluators run on each task turn (evaluators.md §5, files.md §4.2).

1. The configured evaluators (eval.yaml `evaluators`, or `--evaluator` flags) run on every turn.
2. M365 documents add their own per item and per turn: the document's `default_evaluators`
   (when it has none: Relevance + Coherence, unless evaluators are configured) combined with the
   item's and then the turn's `evaluators` — `extend` (default) adds them, the item's options
   winning key by key on a clash; `replace` uses the item's (or turn's) own only.
3. A turn with criteria also gets builtin.task_adherence, once.
4. Nothing configured at all: Relevance + Coherence (+ task_adherence where criteria exist).
Evaluators are identified by canonical name, so `Relevance` and `builtin.relevance` are one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agentopt.contracts.task import Dataset, EvaluatorRef, Task
from agentopt.evaluators.base import EvaluatorUse
from agentopt.evaluators.registry import canonical_name

TASK_ADHERENCE = "builtin.task_adherence"
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
