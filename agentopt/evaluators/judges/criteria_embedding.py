"""Sentence similarity between a criterion and the parts of an answer (models.md §4).

The embedded 135M model is at chance as a yes/no judge, while all-MiniLM cosine between a
criterion sentence and the closest part of the answer separated all 8 "does it mention X"
probes we measured (passing pairs 0.57–0.87, failing 0.05–0.29). But similarity alone rewards
talking about the topic: on the labelled calibration set (tests/fixtures/calibration) it agreed
with the labels on 49 of 99 pairs and passed 39 of 40 on-topic contradictions and negations.
So it is the last rule of the model-free check (`criteria_facts`), deciding only criteria
without checkable facts; `similarity_only` (task_adherence `method: similarity`) remains to
compare against. The answer is split into sentences (and pairs of neighbouring sentences, for
claims that span two), and the best cosine counts.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from typing import Any

from agentopt.contracts.task import Criterion

SIMILARITY_ONLY_THRESHOLD = 0.45
"""The threshold of the similarity-only check (the earlier default)."""
_SPLIT = re.compile(r"(?<=[.!?])\s+|\n+")
_CLAUSE = re.compile(r"[:;]\s+")


def answer_spans(response: str) -> list[str]:
    """Sentences, their clauses (split at ": " and "; ", so prose is not drowned by the code
    that follows it), neighbouring pairs, and the whole answer (deduplicated, order kept)."""
    sentences = [s.strip() for s in _SPLIT.split(response) if s and s.strip()]
    clauses = [c.strip() for s in sentences for c in _CLAUSE.split(s) if c.strip() != s]
    pairs = [f"{a} {b}" for a, b in itertools.pairwise(sentences)]
    spans: list[str] = []
    for span in [*sentences, *clauses, *pairs, response.strip()]:
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


def similarity_only(spans: list[str], similarities: list[float], threshold: float) -> Any:
    """The similarity-only verdict on one criterion (a `criteria_facts.FactVerdict`)."""
    from agentopt.evaluators.judges.criteria_facts import FactVerdict

    best = max(range(len(spans)), key=lambda i: similarities[i])
    sim, span = similarities[best], spans[best]
    passed = sim >= threshold
    return FactVerdict(
        passed,
        "similarity",
        f"closest part of the answer has similarity {sim:.2f} "
        f"({'≥' if passed else '<'} {threshold:.2f}): {span[:120]!r}",
        sim,
    )


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
