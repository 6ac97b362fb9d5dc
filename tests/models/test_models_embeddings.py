"""The embedded sentence embeddings `local:minilm` (models.md §4), run for real."""

from __future__ import annotations

import asyncio
import math
import sys
from pathlib import Path

import pytest

from agentopt.core.errors import ConfigError
from agentopt.models import CallLayer
from agentopt.models.embeddings import DIMENSIONS, MiniLM, _verified
from tests.models.helpers import fast_settings

TRIPLES = [
    (
        "A man is playing a guitar.",
        "Someone plays an instrument.",
        "The stock market fell sharply today.",
    ),
    (
        "How do I get a refund?",
        "I want my money back for this order.",
        "What is the weather in Oslo?",
    ),
    (
        "The agent apologised to the customer.",
        "The assistant said sorry to the user.",
        "Photosynthesis happens in chloroplasts.",
    ),
]


def cosine(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


@pytest.mark.local
def test_paraphrases_are_closer_than_unrelated_sentences(project: Path) -> None:
    texts = [t for triple in TRIPLES for t in triple]

    async def main() -> tuple[list[list[float]], list[list[float]], int]:
        async with CallLayer(project, fast_settings()) as layer:
            first = await layer.embed(texts)  # default model: local:minilm
            again = await layer.embed(texts)
            return first, again, layer.stats().total.cache_hits

    vectors, again, hits = asyncio.run(main())
    assert len(vectors) == 9 and all(len(v) == DIMENSIONS for v in vectors)
    assert all(math.isclose(math.sqrt(sum(x * x for x in v)), 1.0, abs_tol=1e-5) for v in vectors)
    for i in range(0, 9, 3):
        anchor, paraphrase, unrelated = vectors[i : i + 3]
        assert cosine(anchor, paraphrase) > cosine(anchor, unrelated) + 0.3
    assert again == vectors and hits == 1


def test_a_swapped_model_file_is_refused(tmp_path: Path) -> None:
    fake = tmp_path / "model.onnx"
    fake.write_bytes(b"not the pinned model")
    with pytest.raises(ConfigError, match="does not match its pinned sha256"):
        _verified(fake, "0" * 64)


@pytest.mark.parametrize("module", ["numpy", "onnxruntime", "tokenizers"])
def test_a_missing_runtime_module_names_the_extra(
    module: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, module, None)  # as if it were not installed
    with pytest.raises(ConfigError) as info:
        MiniLM().embed(["hello"])
    assert "[local] extra" in str(info.value) and "pip install 'agentopt[local]'" in str(info.value)
