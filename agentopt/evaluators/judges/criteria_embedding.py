"""Criteria checked by sentence embeddings instead of a judge model (models.md §4).

The embedded 135M model is at chance as a yes/no judge, while all-MiniLM cosine between a
criterion sentence and the closest part of the answer separated all 8 "does it mention X"
probes we measured (passing pairs 0.57–0.87, failing 0.05–0.29). So when the judge would be
the embedded model, task_adherence checks each criterion this way: the answer is split into
sentences (and pairs of neighbouring sentences, for claims that span two), and a criterion
passes when its best cosine reaches the threshold.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

from agentopt.contracts.task import Criterion

DEFAULT_THRESHOLD = 0.45
_SPLIT = re.compile(r"(?<=[.!?])\s+|\n+")


def answer_spans(response: str) -> list[str]:
    """Sentences, neighbouring pairs, and the whole answer (deduplicated, order kept)."""
    sentences = [s.strip() for s in _SPLIT.split(response) if s and s.strip()]
    pairs = [f"{a} {b}" for a, b in itertools.pairwise(sentences)]
    spans: list[str] = []
    for span in [*sentences, *pairs, response.strip()]:
        if span and span not in spans:
            spans.append(span)
    return spans


@dataclass(frozen=True)
class EmbeddingVerdict:
    name: str
    instruction: str
    passed: bool
    similarity: float
    best_span: str


def cosine(a: list[float], b: list[float]) -> float:
    num = sum(x * y for x, y in zip(a, b, strict=True))
    den = (sum(x * x for x in a) ** 0.5) * (sum(y * y for y in b) ** 0.5)
    return num / den if den else 0.0


def verdicts_from_vectors(
    criteria: list[Criterion],
    criterion_vectors: list[list[float]],
    spans: list[str],
    span_vectors: list[list[float]],
    threshold: float,
) -> list[EmbeddingVerdict]:
    """Best-matching span per criterion and its verdict."""
    out = []
    for criterion, cvec in zip(criteria, criterion_vectors, strict=True):
        scored = [
            (cosine(cvec, svec), span) for span, svec in zip(spans, span_vectors, strict=True)
        ]
        best, span = max(scored) if scored else (0.0, "")
        out.append(
            EmbeddingVerdict(criterion.name, criterion.instruction, best >= threshold, best, span)
        )
    return out
