"""From a task and the agent's transcript to one `EvalSample` per turn, and evaluating them.

The glue the run workflow uses: it runs the agent, then for each turn calls the selected
evaluators on the sample built here. Each turn sees the earlier turns as history.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from agentopt.contracts.diagnostics import merge_diagnostics
from agentopt.contracts.eval_result import EvalResult
from agentopt.contracts.task import Task
from agentopt.contracts.transcript import Transcript, TurnResult
from agentopt.core.errors import AgentoptError
from agentopt.core.redaction import redact
from agentopt.evaluators.base import EMPTY_RESPONSE, EvalSample, Evaluator, HistoryTurn
from agentopt.evaluators.registry import reads_answer


def samples_from_run(
    task: Task,
    transcript: Transcript,
    *,
    instructions: str | None = None,
    repeat: int = 0,
    agent_name: str = "",
) -> list[EvalSample]:
    """One sample per turn the agent answered (turns it never reached are left out).

    Args:
        task: the dataset task (queries, ground truths, context, criteria).
        transcript: what the agent did (responses, tool calls, citations, usage, latency).
        instructions: the agent's system prompt; defaults to the transcript's.
        repeat: the repeat index (judge calls are cached per repeat).
        agent_name: the agent's name (the plugin of its own tools, for tool-call evidence).
    """
    samples: list[EvalSample] = []
    history: list[HistoryTurn] = []
    for i, (turn, result) in enumerate(zip(task.turns, transcript.turns, strict=False)):
        samples.append(
            EvalSample(
                query=result.query or turn.query,
                response=result.response,
                ground_truth=turn.ground_truth,
                context=turn.context,
                criteria=list(turn.criteria),
                history=list(history),
                tool_calls=list(result.tool_calls),
                tool_definitions=list(transcript.tool_definitions),
                agent_name=agent_name,
                tool_calls_known=transcript.tool_calls_known,
                citations=list(result.citations),
                diagnostics=result.diagnostics,
                latency_s=result.latency_s,
                tokens=result.usage.total_tokens,
                instructions=instructions if instructions is not None else transcript.system_prompt,
                task_name=task.name,
                turn_index=i,
                repeat=repeat,
            )
        )
        history.append(HistoryTurn(query=result.query or turn.query, response=result.response))
    return samples


def simulated_samples(
    task: Task, transcript: Transcript, *, repeat: int = 0, agent_name: str = ""
) -> list[EvalSample]:
    """One sample per agent turn of a simulated conversation, each with the turns before it
    as history. The task's ground truth and criteria are about where the conversation should
    end, so they go with its last turn only; its context goes with every turn."""
    last = len(transcript.turns) - 1
    turn = task.turns[0]
    samples: list[EvalSample] = []
    history: list[HistoryTurn] = []
    for i, result in enumerate(transcript.turns):
        final = i == last
        samples.append(
            _sample(
                task, transcript, [result], repeat, history=list(history), agent=agent_name
            ).model_copy(
                update={
                    "ground_truth": turn.ground_truth if final else None,
                    "criteria": list(task.criteria) if final else [],
                    "context": turn.context,
                    "turn_index": i,
                }
            )
        )
        history.append(HistoryTurn(query=result.query, response=result.response))
    return samples


def conversation_sample(
    task: Task, transcript: Transcript, *, repeat: int = 0, agent_name: str = ""
) -> EvalSample:
    """The whole conversation as one sample (`evaluation_level: conversation`): the last
    exchange with every earlier turn as history, and the tool calls, citations, latency and
    tokens of all turns, checked against all of the task's criteria."""
    turns = transcript.turns
    history = [HistoryTurn(query=t.query, response=t.response) for t in turns[:-1]]
    return _sample(
        task, transcript, list(turns), repeat, history=history, agent=agent_name
    ).model_copy(
        update={
            "ground_truth": task.ground_truth,
            "context": task.turns[0].context if task.turns else None,
            "criteria": list(task.criteria),
            "scope": "conversation",
            "goal": task.goal,
            "simulation": transcript.simulation,
            "turn_index": max(len(turns) - 1, 0),
        }
    )


def _sample(
    task: Task,
    transcript: Transcript,
    turns: list[TurnResult],
    repeat: int,
    *,
    history: list[HistoryTurn],
    agent: str = "",
) -> EvalSample:
    """The last of `turns` as the exchange, with the measurements of all of them."""
    last = turns[-1]
    return EvalSample(
        query=last.query,
        response=last.response,
        history=history,
        tool_calls=[c for t in turns for c in t.tool_calls],
        tool_definitions=list(transcript.tool_definitions),
        agent_name=agent,
        tool_calls_known=transcript.tool_calls_known,
        citations=[c for t in turns for c in t.citations],
        diagnostics=merge_diagnostics([t.diagnostics for t in turns]),
        latency_s=sum(t.latency_s for t in turns),
        tokens=sum(t.usage.total_tokens for t in turns),
        instructions=transcript.system_prompt,
        task_name=task.name,
        repeat=repeat,
    )


async def evaluate_sample(evaluators: Sequence[Evaluator], sample: EvalSample) -> list[EvalResult]:
    """Run evaluators on one sample concurrently; results in the evaluators' order.

    Every evaluator of eval run, optimize and remote runs passes through here, so this is
    where an empty or whitespace-only answer becomes the `emptyAgentResponse` error (M365
    schema 1.9+) for each evaluator that judges the answer, before any of them (or a judge)
    sees it. Evaluators of what the agent did rather than said (tool calls, retrieval,
    latency) still score the turn. A bug that escapes an evaluator becomes an
    `evaluatorCrashed` error result for that evaluator (a failing task is data); agentopt's
    own systemic errors (budget, config) propagate.
    """
    blank = not sample.response.strip()

    async def one(ev: Evaluator) -> EvalResult:
        if blank and reads_answer(ev):
            return empty_answer(getattr(ev, "name", type(ev).__name__), sample.response)
        try:
            return await ev.evaluate(sample)
        except AgentoptError:
            raise
        except Exception as exc:
            name = getattr(ev, "name", type(ev).__name__)
            return EvalResult.failed_to_evaluate(
                name, "evaluatorCrashed", redact(f"{name} crashed: {type(exc).__name__}: {exc}")
            )

    if len(evaluators) == 1:  # nothing to run beside it: no task group, no task
        return [await one(evaluators[0])]
    try:
        async with asyncio.TaskGroup() as group:
            running = [group.create_task(one(ev)) for ev in evaluators]
    except* AgentoptError as failed:
        # Surface the first systemic error itself (e.g. BudgetExceeded), not a group.
        raise failed.exceptions[0] from None
    return [t.result() for t in running]


def empty_answer(evaluator: str, response: str) -> EvalResult:
    """The error of an evaluator that got no answer to judge (never a score)."""
    what = "whitespace only" if response else "empty"
    return EvalResult.failed_to_evaluate(
        evaluator, EMPTY_RESPONSE, f"the agent's answer is {what}: nothing to judge"
    )
