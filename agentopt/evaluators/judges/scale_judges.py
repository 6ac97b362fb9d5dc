"""The 1–5 judges: intent resolution, relevance, coherence, fluency, groundedness, similarity
and tool-call accuracy. One class does the work; each judge is a template plus what it needs."""

from __future__ import annotations

from typing import ClassVar

from agentopt.contracts.eval_result import EvalResult
from agentopt.evaluators.base import EvalSample, missing_input
from agentopt.evaluators.judges.foundry_scales import foundry_scale
from agentopt.evaluators.judges.judge_base import (
    SCORE_EXAMPLE,
    SCORE_SCHEMA,
    JudgeEvaluator,
    ScoreReply,
    sample_texts,
    scope_params,
    scoped,
)
from agentopt.evaluators.judges.judge_call import call_judge
from agentopt.evaluators.judges.prompting import render_messages
from agentopt.evaluators.registry import judge
from agentopt.models.types import Message


def normalize_1_to_5(score: float) -> float:
    """1–5 → 0..1: (s − 1) / 4."""
    return (score - 1.0) / 4.0


class ScaleJudge(JudgeEvaluator):
    """A judge that scores one aspect 1–5; passes at `threshold` (default 3)."""

    template: ClassVar[str] = ""
    uses: ClassVar[tuple[str, ...]] = ("query", "response", "history")
    """Which sample texts go into the prompt."""
    requires: ClassVar[tuple[tuple[str, str], ...]] = (("query", "a query"),)
    """Texts that must be present, with how to name them when missing."""
    default_threshold = 3.0

    def data(self, sample: EvalSample) -> dict[str, str | None] | EvalResult:
        """The prompt's data blocks, or a missingInput error."""
        texts = sample_texts(sample)
        for key, what in self.requires:
            if not texts.get(key):
                return missing_input(self.name, what)
        return scoped(sample, {k: texts[k] for k in self.uses})

    def messages(self, sample: EvalSample, data: dict[str, str | None]) -> list[Message]:
        params = {**scope_params(sample), **self.scale_params(data)}
        return render_messages(self.template, data=data, params=params)

    def scale_params(self, data: dict[str, str | None]) -> dict[str, object]:
        """The levels of Foundry's own evaluator of the same name (`foundry_scales`)."""
        scale = foundry_scale(self.name, query=bool(data.get("query")))
        assert scale is not None, f"{self.name} has no Foundry scale"
        title = self.name.removeprefix("builtin.").replace("_", " ").title()
        return {"scale": scale, "scale_name": title}

    async def evaluate(self, sample: EvalSample) -> EvalResult:
        data = self.data(sample)
        if isinstance(data, EvalResult):
            return data
        threshold = self.threshold_for(sample)
        outcome = await call_judge(
            self.layer,
            self.model,
            self.messages(sample, data),
            schema_name=self.name.replace(".", "_"),
            schema=SCORE_SCHEMA,
            reply_model=ScoreReply,
            example=SCORE_EXAMPLE,
            repeat=sample.repeat,
        )
        if outcome.value is None:
            return outcome.error_result(self.name, judge_model=self.model)
        score = float(outcome.value.score)
        return self.judged(
            outcome,
            score,
            threshold,
            normalized=normalize_1_to_5(score),
            reason=outcome.value.reason.strip(),
        )


@judge("builtin.relevance", m365=True, needs=("query", "response"))
class Relevance(ScaleJudge):
    """How well the response addresses the query (1–5)."""

    template = "relevance.j2"


@judge("builtin.coherence", m365=True, needs=("query", "response"))
class Coherence(ScaleJudge):
    """How logically organised and consistent the response is (1–5)."""

    template = "coherence.j2"


@judge("builtin.fluency", needs=("response",))
class Fluency(ScaleJudge):
    """Language quality of the response: grammar, spelling, flow (1–5)."""

    template = "fluency.j2"
    uses = ("response",)
    requires = ()


@judge("builtin.intent_resolution", needs=("query", "response"))
class IntentResolution(ScaleJudge):
    """Whether the agent understood and achieved the user's goal (1–5)."""

    template = "intent_resolution.j2"
    uses = ("query", "response", "history", "tool_calls")


@judge("builtin.similarity", m365=True, needs=("query", "response", "ground_truth"))
class Similarity(ScaleJudge):
    """How closely the response matches the expected response in meaning (1–5)."""

    template = "similarity.j2"
    uses = ("query", "response", "ground_truth")
    requires = (("query", "a query"), ("ground_truth", "a ground truth (expected_response)"))


@judge("builtin.groundedness", m365=True, needs=("response", "context"))
class Groundedness(ScaleJudge):
    """Whether the response's claims are supported by the context (1–5).

    Context = the item's `context`; without one, what the run's tools answered.
    """

    template = "groundedness.j2"
    requires = ()

    def data(self, sample: EvalSample) -> dict[str, str | None] | EvalResult:
        context = sample.context or sample.tool_outputs
        if not context.strip():
            return missing_input(self.name, "a context (the item's context or tool outputs)")
        data = {"query": sample.query or None, "response": sample.response, "context": context}
        return scoped(sample, data)

    def messages(self, sample: EvalSample, data: dict[str, str | None]) -> list[Message]:
        source = "given with the task" if sample.context else "what the agent's tools returned"
        params = {"context_source": source, **scope_params(sample), **self.scale_params(data)}
        return render_messages(self.template, data=data, params=params)


@judge("builtin.tool_call_accuracy", needs=("query", "tool_calls", "tool_definitions"))
class ToolCallAccuracy(ScaleJudge):
    """Whether the agent called the right tools with the right arguments (1–5).

    Needs tools: offered (definitions) or used (calls). No tools at all = missing input.
    """

    template = "tool_call_accuracy.j2"
    uses = ("query", "history", "tool_calls", "tool_definitions")

    def data(self, sample: EvalSample) -> dict[str, str | None] | EvalResult:
        if not sample.tool_calls and not sample.tool_definitions:
            return missing_input(self.name, "tool calls or tool definitions (no tools in this run)")
        return super().data(sample)
