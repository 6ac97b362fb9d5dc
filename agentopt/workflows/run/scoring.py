"""Scoring one played unit: which evaluators see which sample, turn by turn or the whole
conversation at once (eval.yaml `options.evaluation_level`, evaluators.md §5–6).

- item (default): every agent turn is a sample with the turns before it as history. A scripted
  task's turns carry their own ground truths and criteria; a simulated conversation's task
  ground truth and criteria are about where it ends, so they go with its last turn.
- conversation: the whole transcript is one sample (`conversation_sample`), scored once by the
  evaluators of all the task's turns, plus builtin.goal_reached for a simulated user's
  conversation. Its verdicts sit on the last turn's score, so the task's score and status are
  the conversation's.
A turn the agent failed is never scored, and a conversation with a failed turn is not scored
at all: an error is never a score.
"""

from __future__ import annotations

from agentopt.contracts.eval_result import EvalResult
from agentopt.contracts.scores import TaskScore
from agentopt.contracts.task import Dataset, Task
from agentopt.contracts.transcript import Transcript
from agentopt.evaluators.aggregate import score_transcript
from agentopt.evaluators.base import EvalSample, EvaluatorUse
from agentopt.evaluators.build import EvaluatorCache
from agentopt.evaluators.samples import (
    conversation_sample,
    evaluate_sample,
    samples_from_run,
    simulated_samples,
)
from agentopt.evaluators.selection import (
    select_evaluators,
    select_for_conversation,
    select_for_simulated_turns,
)
from agentopt.workflows.run.simulated_user import EvaluationLevel


def unit_evaluators(
    task: Task,
    configured: list[EvaluatorUse],
    dataset: Dataset,
    *,
    level: EvaluationLevel,
    simulated: bool,
    turns: int,
) -> list[list[EvaluatorUse]]:
    """The evaluators of each scored sample of a unit played with `turns` agent turns (one
    list: the conversation, at conversation level)."""
    if level == "conversation":
        uses = select_for_conversation(
            task, configured=configured, dataset=dataset, simulated=simulated
        )
        return [uses]
    if simulated:
        return select_for_simulated_turns(task, turns, configured=configured, dataset=dataset)
    return select_evaluators(task, configured=configured, dataset=dataset)


async def score_unit(
    task: Task,
    transcript: Transcript,
    *,
    repeat: int,
    configured: list[EvaluatorUse],
    dataset: Dataset,
    cache: EvaluatorCache,
    level: EvaluationLevel,
    simulated: bool,
    agent_name: str = "",
) -> TaskScore:
    """Evaluate a played unit and combine the verdicts into its `TaskScore`."""
    turns = len(transcript.turns)
    uses = unit_evaluators(task, configured, dataset, level=level, simulated=simulated, turns=turns)
    samples = _samples(
        task, transcript, repeat, level=level, simulated=simulated, agent_name=agent_name
    )
    results: list[list[EvalResult]] = []
    if level == "conversation":
        results = [[] for _ in range(max(turns - 1, 0))]
        finished = transcript.error is None and samples
        scored = (
            await evaluate_sample([cache.get(u) for u in uses[0]], samples[0]) if finished else []
        )
        results.append(scored)
    else:
        for i, sample in enumerate(samples):
            if transcript.turns[i].error is not None:
                results.append([])
                continue
            results.append(await evaluate_sample([cache.get(u) for u in uses[i]], sample))
    expected = turns if simulated else len(task.turns)
    return score_transcript(task.name, transcript, results, n_turns=expected, repeat=repeat)


def _samples(
    task: Task,
    transcript: Transcript,
    repeat: int,
    *,
    level: EvaluationLevel,
    simulated: bool,
    agent_name: str,
) -> list[EvalSample]:
    if not transcript.turns:
        return []
    if level == "conversation":
        return [conversation_sample(task, transcript, repeat=repeat, agent_name=agent_name)]
    if simulated:
        return simulated_samples(task, transcript, repeat=repeat, agent_name=agent_name)
    return samples_from_run(task, transcript, repeat=repeat, agent_name=agent_name)
