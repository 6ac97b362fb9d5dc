"""The scoring rubrics of Foundry's builtin judges, read from the installed `azure-ai-evaluation`
package (PyPI; installed `--no-deps` by the Makefile: only its `.prompty` files and evaluator
sources are read, the package is never imported).

Each judge's prompty states its scale level by level in its own layout; `levels(judge)` returns
`[(score, title, definition), ...]` with white space collapsed, and `default_threshold(judge)`
the `threshold=` default of the evaluator class."""

from __future__ import annotations

import importlib.metadata
import re
from pathlib import Path

DISTRIBUTION = "azure-ai-evaluation"
ROOT = "azure/ai/evaluation/_evaluators"
PROMPTY = {
    "builtin.relevance": "_relevance/relevance.prompty",
    "builtin.coherence": "_coherence/coherence.prompty",
    "builtin.fluency": "_fluency/fluency.prompty",
    "builtin.groundedness": "_groundedness/groundedness_with_query.prompty",
    "builtin.groundedness#without_query": "_groundedness/groundedness_without_query.prompty",
    "builtin.similarity": "_similarity/similarity.prompty",
    "builtin.intent_resolution": "_intent_resolution/intent_resolution.prompty",
    "builtin.tool_call_accuracy": "_tool_call_accuracy/tool_call_accuracy.prompty",
}
SOURCES = {
    "builtin.relevance": "_relevance/_relevance.py",
    "builtin.coherence": "_coherence/_coherence.py",
    "builtin.fluency": "_fluency/_fluency.py",
    "builtin.groundedness": "_groundedness/_groundedness.py",
    "builtin.similarity": "_similarity/_similarity.py",
    "builtin.intent_resolution": "_intent_resolution/_intent_resolution.py",
    "builtin.tool_call_accuracy": "_tool_call_accuracy/_tool_call_accuracy.py",
}
STARS = {"One": 1, "Two": 2, "Three": 3, "Four": 4, "Five": 5}

Level = tuple[int, str, str]


def installed() -> str | None:
    """The installed version, or None."""
    try:
        return importlib.metadata.version(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        return None


def _file(rel: str) -> str:
    path = Path(str(importlib.metadata.distribution(DISTRIBUTION).locate_file(f"{ROOT}/{rel}")))
    return path.read_text(encoding="utf-8")


def _flat(text: str) -> str:
    return re.sub(r"\s+", " ", text.replace("•", " ")).strip()


def levels(judge: str) -> list[Level]:
    """The judge's scale as its prompty states it, lowest score first."""
    text = _file(PROMPTY[judge])
    found: list[Level] = []
    # "## [Coherence: 1] (Incoherent Response)\n**Definition:** ..." up to an example or next.
    for m in re.finditer(
        r"^## \[[^:\]]+: (\d)\] \(([^)]*)\)\s*\n(?:\*\*)?Definition:(?:\*\*)?\s*(.*?)"
        r"(?=\n\s*\*\*Examples?|\n\s*\*\*Important|\n## |\n# |\Z)",
        text,
        re.S | re.M,
    ):
        found.append((int(m[1]), _flat(m[2]), _flat(m[3])))
    if not found:  # "### Score 1 - Irrelevant Response\nDefinition: ..."
        for m in re.finditer(r"^### Score (\d) [-–] ([^\n]*)\nDefinition: ([^\n]*)", text, re.M):
            found.append((int(m[1]), _flat(m[2]), _flat(m[3])))
    if not found:  # "   5 - Excellent: Agent fully fulfills ..." under SCORING RUBRIC
        rubric = text.split("SCORING RUBRIC", 1)[-1].split("EXAMPLES", 1)[0]
        for m in re.finditer(r"^\s*(\d) - ([^:\n]+): ([^\n]*)", rubric, re.M):
            found.append((int(m[1]), _flat(m[2]), _flat(m[3])))
    if not found:  # "One star: the predicted answer is ..."
        for m in re.finditer(r"^(One|Two|Three|Four|Five) stars?: ([^\n]*)", text, re.M):
            found.append((STARS[m[1]], f"{m[1]} star{'s' if m[1] != 'One' else ''}", _flat(m[2])))
    return sorted(found)


def default_threshold(judge: str) -> int:
    """The evaluator class's default `threshold` (a literal or a class constant)."""
    source = _file(SOURCES[judge])
    m = re.search(r"def __init__\([^)]*?threshold=([A-Za-z_0-9.]+)", source, re.S)
    assert m, f"no threshold default in {SOURCES[judge]}"
    value = m[1]
    if not value[0].isdigit():
        c = re.search(rf"{re.escape(value)}\s*=\s*([0-9.]+)", source)
        assert c, f"no value for {value} in {SOURCES[judge]}"
        value = c[1]
    return int(float(value))
