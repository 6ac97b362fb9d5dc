"""builtin.task_adherence: one judge call per task turn, one binary verdict per criterion.

Score = fraction of criteria passed; the task passes only when every criterion does (the
default threshold is 1.0). Without criteria the judge checks the response against the agent's
instructions as a single criterion. The per-criterion reasons are what the optimizer reflects on.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import ConfigDict, Field, field_validator

from agentopt.contracts.eval_result import EvalCost, EvalResult
from agentopt.contracts.task import Criterion
from agentopt.core.lazy_model import LazyModel
from agentopt.evaluators.base import (
    EMPTY_RESPONSE,
    EvalSample,
    missing_input,
    option_error,
    verdict,
)
from agentopt.evaluators.judges.criteria_embedding import (
    SIMILARITY_ONLY_THRESHOLD,
    answer_spans,
    cosine,
    similarity_only,
)
from agentopt.evaluators.judges.criteria_facts import DEFAULT_THRESHOLD, decide, negative_criterion
from agentopt.evaluators.judges.judge_base import (
    JudgeEvaluator,
    judge_passes,
    sample_texts,
    scope_params,
    scoped,
    strict_bool,
)
from agentopt.evaluators.judges.judge_call import call_judge, entries_schema, named_entries
from agentopt.evaluators.judges.parsing import entries_problem
from agentopt.evaluators.judges.prompting import render_messages
from agentopt.evaluators.options import JudgeOptions
from agentopt.evaluators.registry import judge

INSTRUCTIONS_CRITERION = Criterion(
    name="follows_instructions",
    instruction="The response follows the agent's instructions (its system prompt), shown above.",
)
EXAMPLE = '{"verdicts": [{"name": "<criterion name>", "passed": true, "reason": "<one sentence>"}]}'
SCHEMA = entries_schema(
    "verdicts",
    {"name": {"type": "string"}, "passed": {"type": "boolean"}, "reason": {"type": "string"}},
)

_SHOWN = ("query", "response", "history", "tool_calls", "instructions")
"""The sample's texts this judge shows."""


def _schema_for(names: list[str], *, exact_count: bool = False) -> dict[str, Any]:
    """SCHEMA with verdict names restricted to these criteria (`named_entries`)."""
    return named_entries(SCHEMA, "verdicts", "name", names, exact_count=exact_count)


class CriterionVerdict(LazyModel):
    """The judge's verdict on one criterion."""

    model_config = ConfigDict(extra="ignore")

    name: str
    """The criterion's name, as given in the prompt."""
    passed: bool
    """True when the response satisfies the criterion."""
    reason: str = ""
    """One sentence of justification."""

    _strict_bool = field_validator("passed", mode="before")(strict_bool)


class VerdictsReply(LazyModel):
    """The task-adherence judge's reply."""

    model_config = ConfigDict(extra="ignore")

    verdicts: list[CriterionVerdict] = Field(min_length=1)
    """One verdict per criterion."""


def unique_criteria(criteria: list[Criterion]) -> list[Criterion]:
    """Criteria with unique names (a repeated name gets `#2`, `#3`), so verdicts map back."""
    seen: dict[str, int] = {}
    out: list[Criterion] = []
    for c in criteria:
        name = c.name.strip() or "criterion"
        seen[name] = seen.get(name, 0) + 1
        out.append(
            Criterion(
                name=name if seen[name] == 1 else f"{name}#{seen[name]}", instruction=c.instruction
            )
        )
    return out


def _checker(criteria: list[Criterion]) -> Callable[[VerdictsReply], str | None]:
    wanted = [c.name for c in criteria]

    def check(reply: VerdictsReply) -> str | None:
        return entries_problem([v.name.strip() for v in reply.verdicts], wanted, "criteria")

    return check


class TaskAdherenceOptions(JudgeOptions):
    method: str = "auto"
    """auto | judge | facts | embedding | similarity (see `TaskAdherence._method`)."""
    similarity_threshold: float | None = None
    """The sentence-similarity bar of the model-free methods."""
    embedding_model: str | None = None
    """The embedding model of the model-free methods."""


@judge("builtin.task_adherence", needs=("response", "criteria"), options=TaskAdherenceOptions)
class TaskAdherence(JudgeEvaluator):
    """One pass/fail verdict per task criterion (else per the agent's instructions)."""

    default_threshold = 1.0

    def _method(self, sample: EvalSample) -> str:
        """judge | facts | similarity. `auto` (default) checks facts without a model when the
        judge would be the embedded model, which is no better than chance at yes/no verdicts
        (models.md §4); `embedding` is the older name of `facts`; `similarity` is sentence
        similarity alone (kept to compare against: it passes on-topic wrong answers)."""
        method = str(self.options_for(sample).get("method", "auto")).lower()
        if method not in {"auto", "judge", "facts", "embedding", "similarity"}:
            raise option_error(
                self.name, "method", "auto | judge | facts | embedding | similarity", method
            )
        if method == "auto":
            local = self.layer is not None and self.layer.resolve(self.model).type == "local"
            method = "facts" if local else "judge"
        return "facts" if method == "embedding" else method

    async def _model_free(
        self, sample: EvalSample, criteria: list[Criterion], method: str
    ) -> EvalResult:
        """Facts first, then negation, then sentence similarity (`criteria_facts`); or, with
        `method: similarity`, similarity alone."""
        options = self.options_for(sample)
        spans = answer_spans(sample.response)
        if not spans:
            return missing_input(self.name, "a non-empty response", EMPTY_RESPONSE)
        default = DEFAULT_THRESHOLD if method == "facts" else SIMILARITY_ONLY_THRESHOLD
        threshold = float(options.get("similarity_threshold", default))
        positives = [negative_criterion(c.instruction) for c in criteria]
        texts = [c.instruction for c in criteria] + [p for p in positives if p] + spans
        vectors = await self.layer.embed(texts, model=options.get("embedding_model"))
        by_text = dict(zip(texts, vectors, strict=True))
        span_vectors = [by_text[s] for s in spans]
        verdicts = []
        for criterion, positive in zip(criteria, positives, strict=True):
            sims = [cosine(by_text[criterion.instruction], v) for v in span_vectors]
            if method == "similarity":
                verdict = similarity_only(spans, sims, threshold)
            else:
                verdict = decide(
                    criterion.instruction,
                    sample.response,
                    spans,
                    sims,
                    positive_similarities=(
                        [cosine(by_text[positive], v) for v in span_vectors] if positive else None
                    ),
                    threshold=threshold,
                )
            verdicts.append(
                {
                    "name": criterion.name,
                    "instruction": criterion.instruction,
                    "passed": verdict.passed,
                    "reason": f"{verdict.rule}: {verdict.reason}",
                    "rule": verdict.rule,
                    "similarity": None
                    if verdict.similarity is None
                    else round(verdict.similarity, 4),
                    **({"facts": verdict.facts} if verdict.facts else {}),
                }
            )
        return self._result(sample, verdicts, {"method": method}, EvalCost())

    def _result(
        self, sample: EvalSample, verdicts: list[dict[str, Any]], details: dict[str, Any],
        cost: EvalCost,
    ) -> EvalResult:  # fmt: skip
        n_passed = sum(1 for v in verdicts if v["passed"])
        fraction = n_passed / len(verdicts)
        threshold = self.threshold_for(sample)
        failed = [v for v in verdicts if not v["passed"]]
        reason = f"{n_passed}/{len(verdicts)} criteria passed."
        if failed:
            reason += " Failed: " + "; ".join(f"{v['name']} — {v['reason']}" for v in failed)
        return verdict(
            self.name,
            score=fraction,
            normalized=fraction,
            threshold=threshold,
            reason=reason,
            details={"verdicts": verdicts, **details},
            is_pass=judge_passes(fraction, threshold),
            cost=cost,
        )

    async def evaluate(self, sample: EvalSample) -> EvalResult:
        criteria = unique_criteria(sample.criteria)
        method = self._method(sample) if criteria else "judge"
        if method != "judge":
            return await self._model_free(sample, criteria, method)
        texts = sample_texts(sample, _SHOWN)
        if not criteria:
            if not sample.instructions:
                return missing_input(self.name, "criteria or the agent's instructions")
            criteria = [INSTRUCTIONS_CRITERION]
        else:
            texts["instructions"] = None
        data = {k: texts[k] for k in _SHOWN}
        if not data["query"]:
            data["query"] = "(no query)"
        outcome = await call_judge(
            self.layer,
            self.model,
            render_messages(
                "task_adherence.j2",
                data=scoped(sample, data),
                params={"criteria": criteria, **scope_params(sample)},
            ),
            schema_name="task_adherence",
            schema=_schema_for([c.name for c in criteria], exact_count=self.grammar_decoded),
            reply_model=VerdictsReply,
            example=EXAMPLE,
            check=_checker(criteria),
            repeat=sample.repeat,
        )
        if outcome.value is None:
            return outcome.error_result(self.name, judge_model=self.model)
        by_name = {v.name.strip(): v for v in outcome.value.verdicts}
        verdicts = [
            {
                "name": c.name,
                "instruction": c.instruction,
                "passed": by_name[c.name].passed,
                "reason": by_name[c.name].reason.strip(),
            }
            for c in criteria
        ]
        return self._result(
            sample,
            verdicts,
            {"method": "judge", "judge_model": self.model, "attempts": outcome.attempts},
            outcome.cost,
        )
