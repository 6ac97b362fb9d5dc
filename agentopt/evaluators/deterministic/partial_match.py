"""builtin.partial_match (M365 `PartialMatch`): token F1 against the expected answer."""

from __future__ import annotations

import re
import string
import unicodedata
from collections import Counter

from agentopt.contracts.eval_result import EvalResult
from agentopt.evaluators.base import EvalSample, EvaluatorBase, missing_input, verdict
from agentopt.evaluators.options import EvaluatorOptions
from agentopt.evaluators.registry import evaluator

ARTICLES = frozenset({"a", "an", "the"})


def tokens(text: str, *, case_sensitive: bool = False) -> list[str]:
    """Normalized tokens: optional lower-casing, punctuation and articles a/an/the dropped.

    Punctuation is every Unicode punctuation character (so `¿`, `—` and `«` go too), replaced
    by nothing, SQuAD-style, so "don't" stays one token.
    """
    if not case_sensitive:
        text = text.lower()
    text = "".join(
        ch
        for ch in text
        if ch not in string.punctuation and not unicodedata.category(ch).startswith("P")
    )
    words = re.split(r"\s+", text.strip())
    return [w for w in words if w and w.lower() not in ARTICLES]


def token_f1(response: str, expected: str, *, case_sensitive: bool = False) -> float:
    """F1 over the multisets of tokens; 0 when only one side has tokens left."""
    got = Counter(tokens(response, case_sensitive=case_sensitive))
    want = Counter(tokens(expected, case_sensitive=case_sensitive))
    if not got or not want:
        return 1.0 if got == want else 0.0
    common = sum((got & want).values())
    if common == 0:
        return 0.0
    precision = common / sum(got.values())
    recall = common / sum(want.values())
    return 2 * precision * recall / (precision + recall)


class PartialMatchOptions(EvaluatorOptions):
    case_sensitive: bool = False


@evaluator(
    "builtin.partial_match",
    m365=True,
    needs=("response", "ground_truth"),
    options=PartialMatchOptions,
)
class PartialMatch(EvaluatorBase):
    """Token F1 between response and ground truth (0..1).

    A token-overlap score, forgiving word order, punctuation, articles and (by default) case.
    """

    default_threshold = 0.5

    async def evaluate(self, sample: EvalSample) -> EvalResult:
        opts = self.options_for(sample)
        if not (sample.ground_truth or "").strip():
            return missing_input(self.name, "a ground truth (expected_response)")
        score = token_f1(
            sample.response,
            sample.ground_truth or "",
            case_sensitive=bool(opts.get("case_sensitive", False)),
        )
        threshold = self.threshold_for(sample)
        return verdict(
            self.name,
            score=score,
            normalized=score,
            threshold=threshold,
            reason=f"Match score: {score:.3f}",
        )
