"""builtin.retrieval_result (M365 `RetrievalResult`): did the agent's search bring back the
content it needed?

The hits considered are those ranked `max_rank` or better in the agent's executions of the
capability (its reported diagnostics, else its tool calls: see `retrieval_executions`). An
expected item matches when its text
occurs in a hit (case- and whitespace-insensitive, typographic dashes and quotes folded); an
item not found verbatim goes, when a judge model is configured, to the entailment judge, which
decides whether the hits support it in other words. Without a judge such an item is missing.
Score = the proportion of expected items matched (a count-only check scores 1 or 0); the
threshold is pinned at 1.0 and `min_expected_count` must also hold. The diagnostic codes are
the M365 schema's (`RETRIEVAL_CODES` of `reports/m365_output.py`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agentopt.contracts.eval_result import EvalCost, EvalResult
from agentopt.evaluators.base import EvalSample, verdict
from agentopt.evaluators.deterministic.retrieval_executions import (
    Execution,
    Hit,
    contains,
    within_rank,
)
from agentopt.evaluators.deterministic.retrieval_options import (
    PINNED_THRESHOLD,
    ResultOptions,
    RetrievalCheck,
    RetrievalResultOptions,
    result_options,
)
from agentopt.evaluators.judges.entailment import Claim, judge_entailment
from agentopt.evaluators.registry import evaluator


def matched_item(text: str, hit: Hit | None, reason: str) -> dict[str, Any]:
    """A `RetrievalMatchedItem` (M365 schema): the item, where it was found, and why."""
    item: dict[str, Any] = {"extractMatch": text}
    if hit is not None:
        if hit.url:
            item["matchedHitUrl"] = hit.url
        item["matchedHitRank"] = hit.rank
    if reason:
        item["reason"] = reason
    return item


@dataclass
class Matching:
    """Where the expected items stand: matched ones (by index), why the others are missing,
    and what the judge cost, if it was asked."""

    matched: dict[int, dict[str, Any]] = field(default_factory=dict)
    why_missing: dict[int, str] = field(default_factory=dict)
    cost: EvalCost = field(default_factory=EvalCost)
    judged: dict[str, Any] = field(default_factory=dict)


@evaluator(
    "builtin.retrieval_result",
    m365=True,
    description="The agent's retrieval for a capability returned the expected content within "
    "max_rank (verbatim, else judged by an entailment judge when a judge model is set).",
    needs=("tool_calls",),
    options=RetrievalResultOptions,
)
class RetrievalResult(RetrievalCheck):
    """Passes when every expected item is matched and at least `min_expected_count` hits were
    returned within `max_rank`."""

    def check_options(self, options: dict[str, Any]) -> None:
        result_options(self.name, options)

    def _judge_model(self, opts: ResultOptions) -> str | None:
        if self.context.layer is None:
            return None
        return opts.model or self.context.judge_model

    async def evaluate(self, sample: EvalSample) -> EvalResult:
        opts = result_options(self.name, self.options_for(sample))
        evidence = self.executions(sample, opts.capability)
        if isinstance(evidence, EvalResult):
            return evidence
        executions, source = evidence
        hits = within_rank(executions, opts.max_rank)
        items = opts.expected_items
        matching = Matching(
            why_missing={i: _missing_reason(opts, executions, hits) for i in range(len(items))}
        )
        for i, text in enumerate(items):
            hit = next((h for h in hits if contains(h.text, text)), None)
            if hit is not None:
                reason = f"Found verbatim in the hit at rank {hit.rank}."
                matching.matched[i] = matched_item(text, hit, reason)
        undecided = [i for i in range(len(items)) if i not in matching.matched]
        model = self._judge_model(opts)
        if undecided and hits and model:
            failed = await self._judge(sample, opts, model, hits, undecided, matching)
            if failed is not None:
                return failed
        result = self._verdict(opts, executions, hits, matching)
        return result.model_copy(update={"details": {**result.details, "source": source}})

    async def _judge(
        self,
        sample: EvalSample,
        opts: ResultOptions,
        model: str,
        hits: list[Hit],
        undecided: list[int],
        matching: Matching,
    ) -> EvalResult | None:
        """Let the entailment judge decide the items not found verbatim (an error result when
        it gives no usable verdict)."""
        items = opts.expected_items
        claims = [Claim(id=f"item_{i + 1}", text=items[i]) for i in undecided]
        layer = self.context.layer
        assert layer is not None  # no judge model without a layer (`_judge_model`)
        outcome = await judge_entailment(layer, model, claims, hits, repeat=sample.repeat)
        if outcome.value is None:
            return outcome.error_result(self.name, judge_model=model)
        matching.cost = outcome.cost
        matching.judged = {"judge_model": model, "attempts": outcome.attempts}
        by_id = {v.id.strip(): v for v in outcome.value.verdicts}
        for i in undecided:
            v = by_id[f"item_{i + 1}"]
            if v.supported:
                hit = hits[v.hit - 1] if v.hit else None
                matching.matched[i] = matched_item(items[i], hit, v.reason.strip())
            else:
                matching.why_missing[i] = v.reason.strip() or "The judge found it not supported."
        return None

    def _verdict(
        self,
        opts: ResultOptions,
        executions: list[Execution],
        hits: list[Hit],
        matching: Matching,
    ) -> EvalResult:
        items, matched = opts.expected_items, matching.matched
        missing = [
            {"extractMatch": text, "reason": matching.why_missing[i]}
            for i, text in enumerate(items)
            if i not in matched
        ]
        count_ok = opts.min_expected_count is None or len(hits) >= opts.min_expected_count
        score = len(matched) / len(items) if items else float(count_ok)
        ok = not missing and count_ok
        if ok:
            code = "pass"
        elif executions and all(e.error for e in executions):
            code = "error"
        elif missing:
            code = "not_retrieved"
        else:
            code = "count_below_minimum"
        details: dict[str, Any] = {
            "diagnostic_code": code,
            "result": "pass" if ok else "fail",
            "results_evaluated": len(hits),
            "matched_items": [matched[i] for i in sorted(matched)],
            "missing_items": missing,
            "extract_failures": missing if hits else [],
            "capability": opts.capability,
            "max_rank": opts.max_rank,
            "min_expected_count": opts.min_expected_count,
            "executions": [e.summary() for e in executions],
            **matching.judged,
        }
        result = verdict(
            self.name,
            score=score,
            normalized=score,
            threshold=PINNED_THRESHOLD,
            reason=_reason(opts, executions, hits, len(matched), missing, count_ok),
            details=details,
            is_pass=ok,
        )
        return result.model_copy(update={"cost": matching.cost})


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def _missing_reason(opts: ResultOptions, executions: list[Execution], hits: list[Hit]) -> str:
    """Why an item is missing before any judge has looked (the judge's reason replaces it)."""
    cap = opts.capability
    if not executions:
        return f"The agent made no {cap} retrieval."
    if all(e.error for e in executions):
        return f"Every {cap} retrieval failed."
    if not hits:
        beyond = sum(len(e.hits) for e in executions)
        extra = f" ({beyond} beyond it)" if beyond else ""
        return f"The {cap} retrieval returned no hit within rank {opts.max_rank}{extra}."
    return (
        f"Not found in the {_n(len(hits), 'hit')} within rank {opts.max_rank} "
        "(no judge model is configured to recognise it in other words)."
    )


def _reason(
    opts: ResultOptions,
    executions: list[Execution],
    hits: list[Hit],
    n_matched: int,
    missing: list[dict[str, Any]],
    count_ok: bool,
) -> str:
    cap = opts.capability
    if not executions:
        parts = [f"The agent made no {cap} retrieval."]
    elif all(e.error for e in executions):
        errors = "; ".join(sorted({e.error or "" for e in executions}))
        parts = [f"Every {cap} retrieval failed: {errors}."]
    else:
        parts = [f"{_n(len(hits), cap + ' hit')} within rank {opts.max_rank}."]
    if opts.expected_items:
        parts.append(f"{n_matched} of {len(opts.expected_items)} expected items retrieved.")
        if missing and hits:
            parts.append(
                "Missing: " + "; ".join(f"'{m['extractMatch']}' — {m['reason']}" for m in missing)
            )
        elif missing:
            parts.append("Missing: " + ", ".join(f"'{m['extractMatch']}'" for m in missing) + ".")
    if opts.min_expected_count is not None:
        verb = "meets" if count_ok else "is below"
        parts.append(f"The hit count {verb} the minimum of {opts.min_expected_count}.")
    return " ".join(parts)
