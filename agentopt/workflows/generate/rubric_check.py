"""Rubric self-check: does the generated rubric tell a good answer from a bad one?

A rubric whose dimensions miss what matters scores a fluent wrong answer as high as a right
one, and nobody notices until the optimizer chases noise. So after generation we ask the
generator for one clearly good and one clearly bad answer to two of the tasks, score both
with the rubric evaluator exactly as `eval run` would (built through the evaluator registry,
judged by the eval model), and require good > bad on both. A failure is a warning in the
summary, never a reason to stop: the person can edit the rubric and run `eval update`.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Literal

from pydantic import ConfigDict, Field

from agentopt.contracts.task import Task
from agentopt.core.errors import AgentoptError
from agentopt.core.lazy_model import LazyModel
from agentopt.evaluators.base import EvalSample, EvaluatorUse
from agentopt.evaluators.build import build_evaluator
from agentopt.evaluators.judges.parsing import JudgeParseError, parse_reply
from agentopt.models.types import ChatRequest
from agentopt.workflows.events import PhaseSink
from agentopt.workflows.generate.prompts import AgentContext, render_messages
from agentopt.workflows.generate.schemas import answers_schema, grammar_decoded

if TYPE_CHECKING:
    from agentopt.models.call import CallLayer

CHECK_TASKS = 2
TEMPERATURE = 0.3
ANSWERS_SCHEMA: dict[str, Any] = answers_schema()
"""The portable schema (the embedded model gets `answers_schema(bounded=True)`)."""


class AnswerPair(LazyModel):
    """A clearly good and a clearly bad answer to one task."""

    model_config = ConfigDict(extra="ignore")

    good: str = Field(min_length=1)
    bad: str = Field(min_length=1)


class CheckRow(LazyModel):
    """One task of the self-check."""

    model_config = ConfigDict(extra="forbid")

    task: str
    good_score: float
    bad_score: float

    @property
    def ok(self) -> bool:
        return self.good_score > self.bad_score


class RubricCheck(LazyModel):
    """The outcome: passed (good > bad on every task), failed, skipped or error."""

    model_config = ConfigDict(extra="forbid")

    status: Literal["passed", "failed", "skipped", "error"]
    rows: list[CheckRow] = Field(default_factory=list)
    message: str = ""
    """Why it was skipped or could not run."""

    def summary(self) -> str:
        """One line for the "Eval suite created" block."""
        pairs = ", ".join(f"{r.good_score:.2f} vs {r.bad_score:.2f}" for r in self.rows)
        n = len(self.rows)
        if self.status == "passed":
            return f"✓ good answers outscore poor ones on {n}/{n} tasks ({pairs})"
        if self.status == "failed":
            bad = [r.task for r in self.rows if not r.ok]
            return (
                f"⚠ the rubric did not score a good answer above a poor one on "
                f"{', '.join(bad)} ({pairs}); review the dimensions before relying on it"
            )
        return f"- skipped: {self.message}" if self.status == "skipped" else f"⚠ {self.message}"


def pick_tasks(tasks: list[Task], n: int = CHECK_TASKS) -> list[Task]:
    """The first `n` single-turn tasks, core ones first (they have the clearest right answer)."""
    single = [t for t in tasks if not t.is_multi_turn]
    ranked = sorted(single, key=lambda t: (t.category != "core", t.index))
    return ranked[:n]


async def check_rubric(
    layer: CallLayer,
    model: str,
    evaluator: EvaluatorUse | dict[str, Any] | str,
    tasks: list[Task],
    agent: AgentContext,
    *,
    project_dir: Any = ".",
    seed: int = 0,
    progress: PhaseSink | None = None,
) -> RubricCheck:
    """Score a good and a bad answer to two tasks with the rubric; good must win on both.

    Args:
        layer: the call layer; answers use pool "generator", scoring pool "judge".
        model: the eval model (generator and judge).
        evaluator: the rubric evaluator as configured (name + version, or a local_uri).
        tasks: the suite's tasks; two single-turn ones are used.
        agent: what the generator knows about the agent.
        project_dir: where registered evaluators and working copies are found.
        seed: sent with the answer requests.
        progress: told the steps done (a good and a bad answer written, then each scored).
    """
    chosen = pick_tasks(tasks)
    steps = [0]

    def step() -> None:
        steps[0] += 1
        if progress is not None:
            progress.advance(steps[0])

    if progress is not None and chosen:
        progress.phase("rubric self-check", 3 * len(chosen), "steps")
    if not chosen:
        return RubricCheck(status="skipped", message="no single-turn task to check the rubric on")
    try:
        rubric = build_evaluator(evaluator, judge_model=model, layer=layer, project_dir=project_dir)

        async def answers(task: Task) -> AnswerPair | None:
            pair = await _answers(layer, model, agent, task, seed)
            step()
            return pair

        pairs = await asyncio.gather(*(answers(t) for t in chosen))
        rows: list[CheckRow] = []
        for task, pair in zip(chosen, pairs, strict=True):
            if pair is None:
                return RubricCheck(
                    status="error",
                    message=f"self-check skipped: no usable good/bad answers for {task.name}",
                )
            scores = []
            for answer in (pair.good, pair.bad):
                sample = EvalSample(
                    query=task.query,
                    response=answer,
                    ground_truth=task.ground_truth,
                    criteria=task.criteria,
                    task_name=task.name,
                )
                result = await rubric.evaluate(sample)
                step()
                if result.status == "error" or result.normalized is None:
                    why = result.error.message if result.error else "no score"
                    return RubricCheck(status="error", message=f"self-check could not run: {why}")
                scores.append(float(result.normalized))
            rows.append(CheckRow(task=task.name, good_score=scores[0], bad_score=scores[1]))
    except AgentoptError as exc:
        return RubricCheck(status="error", message=f"self-check could not run: {exc.message}")
    status: Literal["passed", "failed"] = "passed" if all(r.ok for r in rows) else "failed"
    return RubricCheck(status=status, rows=rows)


async def _answers(
    layer: CallLayer, model: str, agent: AgentContext, task: Task, seed: int
) -> AnswerPair | None:
    schema = answers_schema(bounded=grammar_decoded(layer, model))
    request = ChatRequest(
        messages=render_messages(
            "answers.j2", agent, query=task.query, ground_truth=task.ground_truth
        ),
        temperature=TEMPERATURE,
        seed=seed,
        max_tokens=1500,
        response_format={
            "type": "json_schema",
            "json_schema": {"name": "answer_pair", "schema": schema, "strict": True},
        },
    )
    response = await layer.complete(model, request, pool="generator")
    try:
        return parse_reply(response.text, AnswerPair)
    except JudgeParseError:
        return None
