"""One Foundry-shaped task record (a JSONL line or a CSV row) → `Task` (files.md §4.1).

Shared by the JSONL and CSV loaders so both accept the same fields, aliases and types, and
word their problems the same way. Unknown keys are kept in `Task.extra` and reported once per
file (not once per line) with a did-you-mean.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from agentopt.contracts.task_limits import MAX_TURNS
from agentopt.datasets.problems import ProblemLog, describe, did_you_mean, join_path
from agentopt.datasets.record_context import (
    Locate,
    RecordContext,
)
from agentopt.datasets.simulation_fields import (
    GOAL_KEYS,
    desired_turns,
    simulation_configuration,
)

if TYPE_CHECKING:
    from agentopt.contracts.task import Criterion, EvaluatorRef, Task, Turn

QUERY_KEYS = ("query", "prompt", "question")
NAME_KEYS = ("name", "id")
"""`id`: the task name in the rows Foundry's dataset generation writes (azd's
`datasets/<name>/<suite>_dg.jsonl`: `{id, description, query, candidate_response}`)."""
KEPT_KEYS = ("candidate_response",)
"""Known keys kept in the task's `metadata` (recorded with its results), never scored:
`candidate_response` is the dataset generator's sample answer, not a verified ground truth."""
TRUTH_KEYS = ("ground_truth", "groundTruth", "expected_response")
TASK_KEYS = (
    *NAME_KEYS,
    *KEPT_KEYS,
    *QUERY_KEYS,
    *TRUTH_KEYS,
    "context",
    "criteria",
    "turns",
    "desired_num_turns",
    "persona",
    *GOAL_KEYS,
    "stop_when",
    "simulation_configuration",
    "category",
    "tags",
    "metadata",
    "tool_mocks",
    "description",
    "evaluators",
    "evaluators_mode",
)
TURN_KEYS = (*QUERY_KEYS, *TRUTH_KEYS, "context", "criteria", "evaluators", "evaluators_mode")
SYNONYMS = {
    "input": "query",
    "user_input": "query",
    "answer": "ground_truth",
    "expected": "ground_truth",
    "expected_answer": "ground_truth",
    "expected_output": "ground_truth",
    "reference": "ground_truth",
    "label": "category",
    "checks": "criteria",
    "rubric": "criteria",
    "messages": "turns",
    "test_case_id": "name",
    "test_case_category": "category",
    "scenario": "goal",
    "user_description": "persona",
    "expected_outcome": "ground_truth",
    "max_turns": "desired_num_turns",
}
"""Keys people use for a known field, suggested in unknown-key warnings."""


@dataclass
class UnknownKeys:
    """Unknown keys seen across a file: one warning per key, naming the first line."""

    seen: dict[tuple[str, str], list[int]] = field(default_factory=dict)

    def add(self, scope: str, key: str, line: int) -> None:
        self.seen.setdefault((scope, key), []).append(line)

    def report(self, log: ProblemLog, where: Callable[[int], str] = lambda n: f"line {n}") -> None:
        for (scope, key), lines in self.seen.items():
            known = TURN_KEYS if scope == "turn" else TASK_KEYS
            inside = " in a turn" if scope == "turn" else ""
            more = ""
            if len(lines) > 1:
                more = f" (also on {len(lines) - 1} more line{'s' if len(lines) > 2 else ''})"
            # Past the listed warnings only a count is kept: no did-you-mean to compute (a
            # line of 40,000 unknown keys spent 11 s of CPU in difflib).
            guess = did_you_mean(key, known, SYNONYMS) if log.listing("warning") else ""
            log.warn(
                where(lines[0]), f'unknown key "{key}"{inside}{guess}; kept as extra data{more}'
            )


def task_from_record(record: dict[str, Any], ctx: RecordContext, index: int) -> Task | None:
    """Build one task, or None when the record has errors (already logged in `ctx`).

    The name is left "" when absent; `assign_names` fills it once the whole file is read.
    """
    plain = _plain_task(record, ctx, index)
    return plain if plain is not None else _any_task(record, ctx, index)


PLAIN_KEYS = frozenset({"name", "query", "ground_truth"})
"""The keys of the commonest record (a query, perhaps a name and an expected answer)."""


def _plain_task(record: dict[str, Any], ctx: RecordContext, index: int) -> Task | None:
    """The task of a record holding only `PLAIN_KEYS`, each as text that `_any_task` takes
    without a word (a non-blank query and name): the same task, fields set alike, built
    without the ~20 checks of fields it does not have (a third of loading 10,000 such tasks,
    which a cached rerun pays as a first run does). None: any other record."""
    if not PLAIN_KEYS.issuperset(record):
        return None
    query, name, truth = record.get("query"), record.get("name"), record.get("ground_truth")
    if type(query) is not str or not query.strip():
        return None
    if name is not None and (type(name) is not str or not name.strip()):
        return None
    if truth is not None and type(truth) is not str:
        return None
    models = ctx.models
    turn = (
        models.Turn(query=query) if truth is None else models.Turn(query=query, ground_truth=truth)
    )
    at = {} if ctx.line is None else {"line": ctx.line}  # as `_given` leaves it
    return models.Task(name=name or "", turns=[turn], index=index, **at)  # type: ignore[no-any-return]


def _any_task(record: dict[str, Any], ctx: RecordContext, index: int) -> Task | None:
    """`task_from_record` of any record: every field checked, every problem logged."""
    errors_before = ctx.log.error_count
    name_key = _pick_alias(record, NAME_KEYS, ctx) or "name"
    name = _text(record, (name_key,), ctx, numbers=True)
    if name is not None and not name.strip():
        ctx.error(name_key, f"expected a non-empty task name, found {describe(name)}")
    query_key = _pick_alias(record, QUERY_KEYS, ctx)
    truth_key = _pick_alias(record, TRUTH_KEYS, ctx)
    raw_turns = record.get("turns")
    turns: list[Turn] = []
    criteria = _criteria(record.get("criteria"), "criteria", ctx)
    if raw_turns is not None:
        for key in (query_key, truth_key, "context" if "context" in record else None):
            if key:
                ctx.error(key, "not allowed beside turns: give each turn its own value")
        turns = _turns(raw_turns, ctx)
        if turns and criteria:
            turns[-1].criteria.extend(criteria)
    elif query_key is None and not any(record.get(k) for k in GOAL_KEYS):
        ctx.error(
            "",
            'expected a "query" (the user message; aliases "prompt", "question"), '
            '"turns" (a multi-turn task) or a "goal" (a simulated user writes the opening '
            f"message), found {describe(record)}",
        )
    elif query_key is None:
        turns = [ctx.models.Turn(query="", criteria=criteria)]  # the simulated user opens
    else:
        query = _text(record, (query_key,), ctx, required=True)
        truth = _text(record, (truth_key,), ctx, numbers=True) if truth_key else None
        context = _text(record, ("context",), ctx)
        if query is not None:
            turns = [
                ctx.models.Turn(
                    query=query, **_given(ground_truth=truth, context=context, criteria=criteria)
                )
            ]
    evaluators = _evaluators(record.get("evaluators"), "evaluators", ctx)
    mode = _mode(record.get("evaluators_mode"), "evaluators_mode", ctx)
    desired = desired_turns(record.get("desired_num_turns"), "desired_num_turns", ctx)
    simulated = simulation_configuration(record.get("simulation_configuration"), ctx)
    if simulated is not None:
        if desired is not None:
            ctx.error(
                "simulation_configuration",
                "desired_num_turns is given twice (also at the top level); keep one",
            )
        desired = simulated
    goal_key = _pick_alias(record, GOAL_KEYS, ctx)
    goal = _text(record, (goal_key,), ctx) if goal_key else None
    persona = _text(record, ("persona",), ctx)
    stop_when = _text(record, ("stop_when",), ctx)
    if raw_turns is not None:
        for key in (goal_key, "persona", "stop_when"):
            if key and record.get(key) is not None:
                ctx.error(key, "not allowed beside turns: a simulated user writes its own turns")
        if desired is not None:
            ctx.warn(
                "desired_num_turns",
                "ignored: a task with scripted turns plays exactly those (desired_num_turns "
                "sets the length of a simulated conversation)",
            )
    category = _text(record, ("category",), ctx)
    description = _text(record, ("description",), ctx)
    tags = _tags(record.get("tags"), ctx)
    metadata = _object(record.get("metadata"), "metadata", ctx)
    tool_mocks = _object(record.get("tool_mocks"), "tool_mocks", ctx)
    kept = {k: record[k] for k in KEPT_KEYS if k in record}
    if kept:
        metadata = {**kept, **(metadata or {})}
    extra = {k: v for k, v in record.items() if k not in TASK_KEYS}
    for key in extra:
        ctx.unknown.add("task", key, ctx.line)
    if ctx.log.error_count > errors_before or not turns:
        return None
    return ctx.models.Task(  # type: ignore[no-any-return]
        name=name or "",
        turns=turns,
        index=index,
        **_given(
            category=category,
            tags=tags,
            metadata=metadata,
            description=description,
            tool_mocks=tool_mocks,
            desired_num_turns=desired,
            persona=persona,
            goal=goal,
            stop_when=stop_when,
            line=ctx.line,
            evaluators=evaluators,
            evaluators_mode=None if mode == "extend" else mode,
            extra=extra,
        ),
    )


_EMPTY_BY_DEFAULT = frozenset({"tags", "metadata", "extra", "criteria"})


def _given(**values: Any) -> dict[str, Any]:
    """The fields a record gave: what equals the field's default (None; an empty list or
    mapping where the default is one) is left unset, so a task held packed (`PackedTasks`,
    its set fields as JSON) takes ~100 bytes, not ~350 (every default written out)."""
    return {k: v for k, v in values.items() if v is not None and (v or k not in _EMPTY_BY_DEFAULT)}


def _pick_alias(record: dict[str, Any], keys: tuple[str, ...], ctx: RecordContext) -> str | None:
    present = [k for k in keys if k in record]
    if len(present) > 1:
        names = " and ".join(f'"{k}"' for k in present)
        ctx.error(present[1], f"{names} are the same field (aliases); keep only one")
    return present[0] if present else None


def _text(
    record: dict[str, Any],
    keys: tuple[str, ...],
    ctx: RecordContext,
    *,
    required: bool = False,
    numbers: bool = False,
) -> str | None:
    key = keys[0]
    value = record.get(key)
    if value is None:
        if required:
            ctx.error(key, "expected text, found null")
        return None
    if numbers and isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    if not isinstance(value, str):
        ctx.error(key, f"expected text, found {describe(value)}")
        return None
    if required and not value.strip():
        ctx.error(key, f"expected non-empty text, found {describe(value)}")
        return None
    return value


def _criteria(value: Any, path: str, ctx: RecordContext) -> list[Criterion]:
    if value is None:
        return []
    if not isinstance(value, list):
        ctx.error(
            path,
            'expected a list of {"name": ..., "instruction": ...} objects or strings, '
            f"found {describe(value)}",
        )
        return []
    out: list[Criterion] = []
    for k, item in enumerate(value):
        here = join_path(path, k)
        default_name = f"criterion_{k + 1}"
        if isinstance(item, str) and item.strip():
            out.append(ctx.models.Criterion(name=default_name, instruction=item))
            continue
        if not isinstance(item, dict):
            ctx.error(
                here,
                'expected a {"name": ..., "instruction": ...} object or a non-empty string, '
                f"found {describe(item)}",
            )
            continue
        name = item.get("name", default_name)
        instruction = item.get("instruction")
        ok = True
        if not isinstance(name, str) or not name.strip():
            ctx.error(join_path(here, "name"), f"expected non-empty text, found {describe(name)}")
            ok = False
        if not isinstance(instruction, str) or not instruction.strip():
            found = "nothing" if "instruction" not in item else describe(instruction)
            ctx.error(
                join_path(here, "instruction"),
                f"expected the check's instruction as non-empty text, found {found}",
            )
            ok = False
        for key in item:
            if key not in ("name", "instruction"):
                hint = did_you_mean(key, ("name", "instruction"))
                ctx.warn(join_path(here, key), f"unknown key ignored{hint}")
        if ok:
            out.append(
                ctx.models.Criterion(name=cast(str, name), instruction=cast(str, instruction))
            )
    names = [c.name for c in out]
    for dup in sorted({n for n in names if names.count(n) > 1}):
        ctx.error(path, f'duplicate criterion name "{dup}": expected unique names')
    return out


def _turns(value: Any, ctx: RecordContext) -> list[Turn]:
    if not isinstance(value, list) or not value:
        ctx.error("turns", f"expected a non-empty list of turn objects, found {describe(value)}")
        return []
    if len(value) > MAX_TURNS:
        ctx.error("turns", f"expected at most {MAX_TURNS} turns, found {len(value)}")
    turns: list[Turn] = []
    for k, raw in enumerate(value):
        here = join_path("turns", k)
        if not isinstance(raw, dict):
            ctx.error(here, f'expected a turn object like {{"prompt": ...}}, found {describe(raw)}')
            continue
        query_key = _pick_alias_at(raw, QUERY_KEYS, here, ctx)
        truth_key = _pick_alias_at(raw, TRUTH_KEYS, here, ctx)
        if query_key is None:
            ctx.error(here, f'expected a "prompt" (the user message), found {describe(raw)}')
            continue
        sub = RecordContext(ctx.log, ctx.line, _nested(ctx.locate, here), ctx.unknown, ctx.models)
        query = _text(raw, (query_key,), sub, required=True)
        truth = _text(raw, (truth_key,), sub, numbers=True) if truth_key else None
        context = _text(raw, ("context",), sub)
        criteria = _criteria(raw.get("criteria"), join_path(here, "criteria"), ctx)
        evaluators = _evaluators(raw.get("evaluators"), join_path(here, "evaluators"), ctx)
        mode = _mode(raw.get("evaluators_mode"), join_path(here, "evaluators_mode"), ctx)
        extra = {key: v for key, v in raw.items() if key not in TURN_KEYS}
        for key in extra:
            ctx.unknown.add("turn", key, ctx.line)
        if query is not None:
            turns.append(
                ctx.models.Turn(
                    query=query,
                    ground_truth=truth,
                    context=context,
                    criteria=criteria,
                    evaluators=evaluators,
                    evaluators_mode=mode,
                    extra=extra,
                )
            )
    return turns


def _pick_alias_at(
    raw: dict[str, Any], keys: tuple[str, ...], here: str, ctx: RecordContext
) -> str | None:
    sub = RecordContext(ctx.log, ctx.line, _nested(ctx.locate, here), ctx.unknown, ctx.models)
    return _pick_alias(raw, keys, sub)


def _nested(locate: Locate, base: str) -> Locate:
    return lambda path: locate(join_path(base, path) if path else base)


def _evaluators(value: Any, path: str, ctx: RecordContext) -> list[EvaluatorRef] | None:
    """M365-style map `{"Relevance": {...}}` or a plain list of evaluator names."""
    if value is None:
        return None
    if isinstance(value, list) and all(isinstance(v, str) and v.strip() for v in value):
        return [ctx.models.EvaluatorRef(name=v) for v in value]
    if isinstance(value, dict):
        refs: list[EvaluatorRef] = []
        for name, options in value.items():
            if options is None:
                options = {}
            if not isinstance(options, dict):
                ctx.error(
                    join_path(path, name),
                    "expected an options object (use {} for defaults), "
                    f"found {describe(options)}",
                )
                continue
            refs.append(ctx.models.EvaluatorRef(name=name, options=options))
        return refs
    ctx.error(
        path,
        'expected an object like {"Relevance": {}} or a list of evaluator names, '
        f"found {describe(value)}",
    )
    return None


def _mode(value: Any, path: str, ctx: RecordContext) -> Any:
    if value is None:
        return "extend"
    if value not in ("extend", "replace"):
        ctx.error(path, f'expected "extend" or "replace", found {describe(value)}')
        return "extend"
    return value


def _tags(value: Any, ctx: RecordContext) -> list[str]:
    if value is None:
        return []
    if isinstance(value, list) and all(isinstance(t, str) for t in value):
        return list(value)
    ctx.error("tags", f"expected a list of strings, found {describe(value)}")
    return []


def _object(value: Any, path: str, ctx: RecordContext) -> dict[str, Any] | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        ctx.error(path, f"expected an object, found {describe(value)}")
        return None
    return value
