"""The seed dataset of `eval generate` (cli.md): tasks written by the generator model.

The generator writes tasks in batches, one category per call, with JSON-schema-constrained
output. Every task is repaired where that is safe, validated with the dataset loader's own
rules (`validate`), and de-duplicated (`dedupe`). Categories that come up short are
topped up in further rounds (each call told which tasks exist already) until `count` is
reached; after `max_rounds` the generation stops with a message saying how many tasks were
usable and why the others were not. The embedded model gets smaller batches and a bounded
schema (`schemas`): its grammar then cannot write an empty text, too few criteria or a
reply that runs on until it is cut off.

Requests are deterministic (the prompt, seed and schema depend only on the inputs and on the
earlier replies), so with the call layer's cache a rerun is free and writes the same file.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import ConfigDict, Field

from agentopt.contracts.task import Task
from agentopt.core.errors import ConfigError, ModelCallError
from agentopt.core.lazy_model import LazyModel
from agentopt.datasets.writer import dump_tasks_jsonl
from agentopt.evaluators.judges.parsing import JudgeParseError, extract_json_object
from agentopt.models.structured import cut_off
from agentopt.models.types import ChatRequest
from agentopt.workflows.events import PhaseSink
from agentopt.workflows.generate.dedupe import Deduper
from agentopt.workflows.generate.prompts import AgentContext, category_description, render_messages
from agentopt.workflows.generate.schemas import (
    MAX_BOUNDED_TURNS,
    Kind,
    batch_schema,
    grammar_decoded,
)
from agentopt.workflows.generate.validate import (
    MAX_CRITERIA,
    MAX_THREAD_TURNS,
    Rejected,
    check_task,
    task_record,
)

if TYPE_CHECKING:
    from agentopt.models.call import CallLayer

DEFAULT_CATEGORIES: tuple[str, ...] = (
    "core",
    "edge",
    "out_of_scope",
    "ambiguous",
    "adversarial",
    "multi_step",
)
BATCH_SIZE = 5
EMBEDDED_BATCH_SIZE = 1
"""Tasks per call for the embedded model and other grammar-decoded (small, self-hosted)
models: one task per call, so a reply that runs on costs one task, its deadline fits one
task's tokens, and progress comes task by task."""
TOKENS_PER_TASK = 500
EMBEDDED_TOKENS_PER_TASK = 1200
"""Room for a task at the bounded schema's longest texts: a reply cut off is unreadable."""
MAX_ROUNDS = 4
TEMPERATURE = 0.8
AVOID_LIMIT = 40
MAX_REASONS = 3


class DatasetSpec(LazyModel):
    """What to generate."""

    model_config = ConfigDict(extra="forbid")

    count: int = Field(default=15, ge=1, le=1000)
    """Tasks in total (`--max-samples`), multi-turn threads included."""
    categories: list[str] = Field(default_factory=lambda: list(DEFAULT_CATEGORIES))
    """The mix (`--categories`); the count is spread evenly over them, in order."""
    multi_turn: int = Field(default=0, ge=0)
    """How many of the tasks are multi-turn (`--multi-turn`)."""
    simulated: bool = False
    """The multi-turn tasks are persona/goal tasks a simulated user plays (a conversation-
    level suite), not scripted threads."""
    seed: int = 0
    """Sent with every generator call (`--seed`)."""
    batch_size: int = Field(default=BATCH_SIZE, ge=1, le=20)
    """Tasks asked for per call."""
    max_rounds: int = Field(default=MAX_ROUNDS, ge=1, le=20)
    """The first round plus top-ups, before giving up."""


class GenerationStats(LazyModel):
    """What happened to the generator's output (shown in messages and the summary)."""

    model_config = ConfigDict(extra="forbid")

    rounds: int = 0
    calls: int = 0
    proposed: int = 0
    """Tasks the generator wrote."""
    invalid: int = 0
    duplicates: int = 0
    unreadable: int = 0
    """Replies with no usable JSON."""
    truncated: int = 0
    """Of the unreadable replies, those cut off at max_tokens (`finish_reason: length`)."""
    surplus: int = 0
    """Valid tasks beyond what a category still needed."""
    reasons: list[str] = Field(default_factory=list)
    """The first distinct reasons tasks were rejected."""


class GeneratedDataset(LazyModel):
    """The accepted tasks, in category order (single-turn first, then threads)."""

    model_config = ConfigDict(extra="forbid")

    tasks: list[Task]
    stats: GenerationStats

    def jsonl(self) -> str:
        """The canonical JSONL text (same tasks → same bytes)."""
        return dump_tasks_jsonl(self.tasks)

    def category_counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for task in self.tasks:
            key = task.category or "uncategorized"
            counts[key] = counts.get(key, 0) + 1
        return counts


class GenerationShortfall(ModelCallError):
    """The generator could not produce enough distinct valid tasks (exit 3)."""


@dataclass(frozen=True)
class _Job:
    kind: Kind
    category: str
    count: int
    batch: int
    batches: int
    attempt: int


def spread(count: int, categories: list[str]) -> dict[str, int]:
    """`count` over `categories` as evenly as possible, earlier categories first."""
    base, extra = divmod(count, len(categories))
    return {c: base + (1 if i < extra else 0) for i, c in enumerate(categories)}


def parse_categories(text: str | None) -> list[str]:
    """`--categories core,edge` → ["core", "edge"] (lower case, duplicates dropped)."""
    if text is None:
        return list(DEFAULT_CATEGORIES)
    names = [p.strip().lower().replace("-", "_").replace(" ", "_") for p in text.split(",")]
    names = list(dict.fromkeys(n for n in names if n))
    bad = [n for n in names if not n.replace("_", "").isalnum() or not n[0].isalpha()]
    if not names or bad:
        found = ", ".join(bad) if bad else repr(text)
        raise ConfigError.at(
            "",
            "--categories",
            f"expected a comma-separated list of names like core,edge,adversarial, found {found}",
        )
    return names


async def generate_dataset(
    layer: CallLayer,
    model: str,
    agent: AgentContext,
    spec: DatasetSpec,
    progress: PhaseSink | None = None,
) -> GeneratedDataset:
    """Generate `spec.count` distinct valid tasks, or raise GenerationShortfall saying why not.

    Args:
        layer: the call layer (`agentopt.models.call.CallLayer`); calls use pool "generator".
        model: the generator model (`--eval-model`).
        agent: what the generator is told about the agent.
        spec: counts, categories, seed and batching.
        progress: told how many tasks are written so far (valid or not yet checked).
    """
    bounded = grammar_decoded(layer, model)
    if bounded:
        spec = spec.model_copy(update={"batch_size": min(spec.batch_size, EMBEDDED_BATCH_SIZE)})
    if spec.multi_turn > spec.count:
        raise ConfigError.at(
            "",
            "--multi-turn",
            f"expected at most --max-samples ({spec.count}) multi-turn tasks, "
            f"found {spec.multi_turn}",
        )
    plan: dict[tuple[Kind, str], int] = {}
    multi: Kind = "simulated" if spec.simulated else "thread"
    for kind, n in (("task", spec.count - spec.multi_turn), (multi, spec.multi_turn)):
        for category, quota in spread(n, spec.categories).items():
            if quota:
                plan[(kind, category)] = quota  # type: ignore[index]
    state = _State(plan)
    state.progress = progress
    for attempt in range(1, spec.max_rounds + 1):
        jobs = _jobs(state, spec, attempt)
        if not jobs:
            break
        state.stats.rounds = attempt
        replies = await asyncio.gather(
            *(_ask(layer, model, agent, spec, job, state, bounded) for job in jobs)
        )
        for job, reply in zip(jobs, replies, strict=True):
            state.take(job, reply)
    if state.missing():
        raise _shortfall(state, spec)
    return GeneratedDataset(tasks=state.ordered(spec.categories), stats=state.stats)


class _State:
    """Accepted tasks per (kind, category), the de-duplicator and the counters."""

    def __init__(self, plan: dict[tuple[Kind, str], int]) -> None:
        self.plan = plan
        self.accepted: dict[tuple[Kind, str], list[Task]] = {key: [] for key in plan}
        self.deduper = Deduper()
        self.names: set[str] = set()
        self.stats = GenerationStats()
        self.progress: PhaseSink | None = None
        self.written = 0
        """Tasks in the replies so far, checked or not (what progress lines show)."""

    def need(self, key: tuple[Kind, str]) -> int:
        return self.plan[key] - len(self.accepted[key])

    def missing(self) -> dict[tuple[Kind, str], int]:
        return {k: self.need(k) for k in self.plan if self.need(k) > 0}

    def take(self, job: _Job, items: list[Any] | None) -> None:
        key = (job.kind, job.category)
        if items is None:
            self.stats.unreadable += 1
            return
        for raw in items:
            self.stats.proposed += 1
            if self.need(key) <= 0:
                self.stats.surplus += 1
                continue
            try:
                record = task_record(
                    raw,
                    job.category,
                    thread=job.kind == "thread",
                    simulated=job.kind == "simulated",
                )
                task = check_task(record, index=0)
            except Rejected as exc:
                self._reject(str(exc))
                continue
            text = " ".join([task.goal or "", *(t.query for t in task.turns)]).strip()
            if self.deduper.check(text) is not None:
                self.stats.duplicates += 1
                continue
            task.name = self._unique(task.name)
            self.deduper.add(text, task.name)
            self.accepted[key].append(task)

    def ordered(self, categories: list[str]) -> list[Task]:
        out = [
            task
            for kind in ("task", "thread", "simulated")
            for category in categories
            for task in self.accepted.get((kind, category), [])  # type: ignore[arg-type]
        ]
        return [t.model_copy(update={"index": i}) for i, t in enumerate(out)]

    def _unique(self, name: str) -> str:
        candidate, n = name, 2
        while candidate in self.names:
            candidate, n = f"{name}_{n}", n + 1
        self.names.add(candidate)
        return candidate

    def _reject(self, reason: str) -> None:
        self.stats.invalid += 1
        if reason not in self.stats.reasons and len(self.stats.reasons) < MAX_REASONS:
            self.stats.reasons.append(reason)


def _jobs(state: _State, spec: DatasetSpec, attempt: int) -> list[_Job]:
    jobs: list[_Job] = []
    for (kind, category), _quota in state.plan.items():
        need = state.need((kind, category))
        if need <= 0:
            continue
        batches = -(-need // spec.batch_size)
        sizes = spread(need, [str(i) for i in range(batches)])
        for b in range(batches):
            jobs.append(_Job(kind, category, sizes[str(b)], b + 1, batches, attempt))
    return jobs


async def _ask(
    layer: CallLayer,
    model: str,
    agent: AgentContext,
    spec: DatasetSpec,
    job: _Job,
    state: _State,
    bounded: bool,
) -> list[Any] | None:
    """One generator call; the list of generated items, or None when the reply is unusable.
    `bounded`: the schema carries the grammar bounds (the embedded model)."""
    avoid = [t.query for t in state.accepted[(job.kind, job.category)]][-AVOID_LIMIT:]
    template = {"thread": "threads.j2", "simulated": "simulated.j2"}.get(job.kind, "tasks.j2")
    messages = render_messages(
        template,
        agent,
        count=job.count,
        category=job.category,
        category_description=category_description(job.category),
        batch=job.batch,
        batches=job.batches,
        attempt=job.attempt,
        avoid=avoid if job.attempt > 1 else [],
        max_turns=MAX_BOUNDED_TURNS if bounded else MAX_THREAD_TURNS,
    )
    key = {"thread": "threads", "simulated": "conversations"}.get(job.kind, "tasks")
    request = ChatRequest(
        messages=messages,
        temperature=TEMPERATURE,
        seed=spec.seed + 1000 * (job.attempt - 1) + job.batch,
        max_tokens=min(
            16000, 600 + (EMBEDDED_TOKENS_PER_TASK if bounded else TOKENS_PER_TASK) * job.count
        ),
        response_format={
            "type": "json_schema",
            "json_schema": {
                "name": f"generated_{key}",
                "schema": batch_schema(
                    job.kind,
                    [job.category] if bounded else spec.categories,
                    count=job.count,
                    bounded=bounded,
                ),
                "strict": True,
            },
        },
    )
    state.stats.calls += 1
    response = await layer.complete(model, request, pool="generator")
    if cut_off(response, request.max_tokens):
        state.stats.truncated += 1
        return None
    try:
        data = extract_json_object(response.text)
    except JudgeParseError:
        return None
    items = data.get(key)
    if items is None and ("query" in data or "turns" in data):
        items = [data]  # a single task object instead of the wrapper
    if not isinstance(items, list):
        return None
    state.written += len(items)
    if state.progress is not None:
        accepted = sum(len(v) for v in state.accepted.values())
        state.progress.advance(min(spec.count, accepted + state.written))
    return items


def _shortfall(state: _State, spec: DatasetSpec) -> GenerationShortfall:
    s = state.stats
    got = sum(len(v) for v in state.accepted.values())
    parts = []
    if s.invalid:
        example = f" (e.g. {s.reasons[0]})" if s.reasons else ""
        parts.append(f"{s.invalid} were invalid{example}")
    if s.duplicates:
        parts.append(f"{s.duplicates} repeated earlier tasks")
    if s.unreadable:
        cut = f", {s.truncated} of them cut off at max_tokens" if s.truncated else ""
        parts.append(f"{s.unreadable} replies held no readable JSON{cut}")
    why = f": {'; '.join(parts)}" if parts else ""
    short = ", ".join(
        f"{category}{' (multi-turn)' if kind != 'task' else ''} {n}"
        for (kind, category), n in state.missing().items()
    )
    return GenerationShortfall(
        f"the generator returned only {got} distinct valid tasks of the {spec.count} asked for "
        f"after {s.rounds} rounds ({s.calls} calls){why}; still missing: {short}",
        kind="parse",
        hint="lower --max-samples, give a broader generation instruction, or use a stronger "
        "--eval-model (the calls made so far are cached: a rerun with the same inputs is free). "
        f"Each task needs a query and 2–{MAX_CRITERIA} specific criteria.",
    )
