"""builtin.semantic_similarity: cosine of sentence embeddings of response and ground truth.

Uses the call layer's embeddings (default: the local MiniLM, models.md §4), so it needs no judge
and works offline — the evaluator to use where a small local judge would be at chance.
"""

from __future__ import annotations

import math

from agentopt.contracts.eval_result import EvalResult
from agentopt.core.errors import ModelCallError
from agentopt.core.redaction import redact
from agentopt.evaluators.base import EvalSample, EvaluatorBase, missing_input, verdict
from agentopt.evaluators.options import EvaluatorOptions
from agentopt.evaluators.registry import evaluator


def cosine(a: list[float], b: list[float]) -> float:
    """Cosine similarity; 0 for a zero vector (an empty text embeds to nothing)."""
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    na = math.sqrt(sum(x * x for x in a))
    nb = math.sqrt(sum(y * y for y in b))
    if na == 0 or nb == 0:
        return 0.0
    return dot / (na * nb)


class SemanticSimilarityOptions(EvaluatorOptions):
    model: str | None = None
    """The embedding model (default: the call layer's)."""


@evaluator(
    "builtin.semantic_similarity",
    kind="embedding",
    needs=("response", "ground_truth"),
    options=SemanticSimilarityOptions,
)
class SemanticSimilarity(EvaluatorBase):
    """Cosine similarity of response and ground-truth embeddings (0..1).

    Option `model` picks the embedding model (default: the call layer's default).
    """

    default_threshold = 0.7

    async def evaluate(self, sample: EvalSample) -> EvalResult:
        if not (sample.ground_truth or "").strip():
            return missing_input(self.name, "a ground truth (expected_response)")
        layer = self.context.layer
        if layer is None:
            return EvalResult.failed_to_evaluate(
                self.name, "embeddingUnavailable", "no call layer was given to compute embeddings"
            )
        model = self.options_for(sample).get("model")
        try:
            vectors = await layer.embed(
                [sample.response, sample.ground_truth or ""], model=model, pool="judge"
            )
        except ModelCallError as exc:
            return EvalResult.failed_to_evaluate(
                self.name, "embeddingUnavailable", redact(f"embedding call failed: {exc.message}")
            )
        similarity = cosine(vectors[0], vectors[1])
        return verdict(
            self.name,
            score=round(similarity, 4),
            normalized=max(0.0, similarity),
            threshold=self.threshold_for(sample),
            reason=f"Cosine similarity to the expected response: {similarity:.3f}",
            details={"model": model or "default"},
        )
