"""`eval calibrate`: how often a criterion check agrees with a person's labels.

The check is `builtin.task_adherence` as a run uses it, on one criterion per labelled pair
(`datasets.labelled`): the model-free check (`facts`: facts, negation, then similarity), the
similarity-only check it replaced (`similarity`), or an LLM judge (`judge`, with any model).
The report counts agreement over the pairs that got a verdict, the answers passed against a
"fail" label (and, of those, the contradictions and negations), the ones failed against a
"pass" label, and errors apart — an error is never a verdict. `sweep` re-scores the pairs at
each similarity threshold of a grid: how the shipped threshold was chosen, and how a user
picks one for their own criteria.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentopt.contracts.task import Criterion
from agentopt.core.aio import run_loop
from agentopt.datasets.labelled import LabelledPair, load_labelled
from agentopt.evaluators.base import EvalSample
from agentopt.evaluators.build import build_evaluator
from agentopt.models.call import CallLayer
from agentopt.models.settings import CallSettings

METHODS = ("facts", "similarity", "judge")
CONTRADICTING = frozenset({"contradiction", "negation"})
"""Pair kinds whose answer contradicts the criterion through a checkable fact or a negation."""
SWEEP = tuple(round(0.30 + 0.05 * i, 2) for i in range(9))
"""Similarity thresholds `sweep` tries (0.30 … 0.70)."""
PLACEHOLDER_JUDGE = "local:smollm2-135m"
"""The model-free checks call no judge; the evaluator still wants a name."""


@dataclass
class CalibrationRow:
    """One pair and the check's verdict on it (pass | fail | error)."""

    pair: LabelledPair
    verdict: str
    rule: str = ""
    reason: str = ""

    @property
    def agrees(self) -> bool:
        return self.verdict == self.pair.label


@dataclass
class CalibrationReport:
    """Agreement of one check with the labels."""

    method: str
    judge_model: str | None
    threshold: float | None
    rows: list[CalibrationRow]
    sweep: list[tuple[float, float]] = field(default_factory=list)
    """(threshold, agreement) for each threshold tried (`sweep`)."""

    @property
    def decided(self) -> list[CalibrationRow]:
        return [r for r in self.rows if r.verdict != "error"]

    @property
    def agreement(self) -> float:
        decided = self.decided
        return sum(r.agrees for r in decided) / len(decided) if decided else 0.0

    @property
    def false_passes(self) -> list[CalibrationRow]:
        return [r for r in self.decided if r.verdict == "pass" and r.pair.label == "fail"]

    @property
    def false_fails(self) -> list[CalibrationRow]:
        return [r for r in self.decided if r.verdict == "fail" and r.pair.label == "pass"]

    @property
    def passed_contradictions(self) -> list[CalibrationRow]:
        return [r for r in self.false_passes if r.pair.kind in CONTRADICTING]

    @property
    def errors(self) -> list[CalibrationRow]:
        return [r for r in self.rows if r.verdict == "error"]

    def groups(self, key: Callable[[CalibrationRow], str]) -> dict[str, tuple[int, int]]:
        """(agreeing, decided) per group."""
        out: dict[str, tuple[int, int]] = {}
        for row in self.decided:
            agree, total = out.get(key(row) or "-", (0, 0))
            out[key(row) or "-"] = (agree + row.agrees, total + 1)
        return dict(sorted(out.items()))

    def to_json(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "judge_model": self.judge_model,
            "threshold": self.threshold,
            "pairs": len(self.rows),
            "decided": len(self.decided),
            "agreement": round(self.agreement, 4),
            "false_passes": len(self.false_passes),
            "passed_contradictions": len(self.passed_contradictions),
            "false_fails": len(self.false_fails),
            "errors": len(self.errors),
            "by_kind": {k: list(v) for k, v in self.groups(lambda r: r.pair.kind).items()},
            "by_rule": {k: list(v) for k, v in self.groups(lambda r: r.rule).items()},
            "sweep": [list(s) for s in self.sweep],
            "rows": [
                {
                    "line": r.pair.line,
                    "label": r.pair.label,
                    "verdict": r.verdict,
                    "rule": r.rule,
                    "reason": r.reason,
                    "kind": r.pair.kind,
                }
                for r in self.rows
            ],
        }


async def calibrate(
    pairs: list[LabelledPair],
    layer: CallLayer,
    *,
    method: str = "facts",
    judge_model: str | None = None,
    threshold: float | None = None,
    sweep: bool = False,
    on_progress: Callable[[int, int], None] | None = None,
) -> CalibrationReport:
    """Score every pair with the check and compare with its label.

    Args:
        pairs: the labelled pairs.
        layer: the call layer (embeddings; the judge's calls for `method="judge"`).
        method: facts | similarity | judge.
        judge_model: the judge (method judge only).
        threshold: similarity threshold (None: the check's calibrated default).
        sweep: also re-score at every threshold of `SWEEP` (facts and similarity only).
        on_progress: called with (pairs done, pairs) as verdicts come in.
    """
    if method not in METHODS:
        raise ValueError(f"unknown calibration method {method!r} (known: {', '.join(METHODS)})")
    rows = await _score(pairs, layer, method, judge_model, threshold, on_progress)
    report = CalibrationReport(method, judge_model if method == "judge" else None, threshold, rows)
    if sweep and method != "judge":
        for value in SWEEP:
            tried = await _score(pairs, layer, method, judge_model, value, None)
            report.sweep.append((value, CalibrationReport(method, None, value, tried).agreement))
    return report


async def _score(
    pairs: list[LabelledPair],
    layer: CallLayer,
    method: str,
    judge_model: str | None,
    threshold: float | None,
    on_progress: Callable[[int, int], None] | None,
) -> list[CalibrationRow]:
    options: dict[str, Any] = {"method": method}
    if threshold is not None:
        options["similarity_threshold"] = threshold
    evaluator = build_evaluator(
        {"name": "builtin.task_adherence", "initialization_parameters": options},
        judge_model=judge_model or PLACEHOLDER_JUDGE,
        layer=layer,
    )
    done = 0

    async def one(pair: LabelledPair) -> CalibrationRow:
        nonlocal done
        sample = EvalSample(
            query=pair.query,
            response=pair.response,
            criteria=[Criterion(name="criterion", instruction=pair.criterion)],
            task_name=f"line {pair.line}",
        )
        result = await evaluator.evaluate(sample)
        done += 1
        if on_progress is not None:
            on_progress(done, len(pairs))
        if result.status == "error" or not (result.details or {}).get("verdicts"):
            message = result.error.message if result.error else "no verdict"
            return CalibrationRow(pair, "error", reason=message)
        verdict = result.details["verdicts"][0]
        rule = str(verdict.get("rule") or result.details.get("method") or "")
        return CalibrationRow(
            pair, "pass" if verdict["passed"] else "fail", rule, str(verdict.get("reason", ""))
        )

    return list(await asyncio.gather(*(one(p) for p in pairs)))


def run_calibration(
    path: Path,
    project_dir: Path,
    settings: CallSettings,
    *,
    method: str,
    judge_model: str | None,
    threshold: float | None = None,
    sweep: bool = False,
    on_notice: Callable[[str], None] | None = None,
    on_progress: Callable[[int, int], None] | None = None,
) -> CalibrationReport:
    """`calibrate` on a labelled file, in its own event loop and call layer."""
    pairs = load_labelled(path)

    async def main() -> CalibrationReport:
        async with CallLayer(project_dir, settings, on_notice=on_notice) as layer:
            return await calibrate(
                pairs,
                layer,
                method=method,
                judge_model=judge_model,
                threshold=threshold,
                sweep=sweep,
                on_progress=on_progress,
            )

    return run_loop(main())
