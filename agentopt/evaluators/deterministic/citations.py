"""builtin.citations (M365 `Citations`): how many distinct sources the response cites."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from agentopt.contracts.eval_result import EvalResult
from agentopt.evaluators.base import (
    EvalSample,
    EvaluatorBase,
    option_error,
    verdict,
)
from agentopt.evaluators.options import EvaluatorOptions
from agentopt.evaluators.registry import evaluator

# 【3†source】 and the Assistants-API variant 【4:0†source】.
OAI_UNICODE = re.compile(r"【(\d+)(?::\d+)?(?:†([^】]*))?】")
# [3] or [1, 2] — but not the text part of a markdown link [3](url).
BRACKET = re.compile(r"\[(\d+(?:\s*,\s*\d+)*)\](?!\()")
# [text](url), not an image ![alt](src). Copilot's numbered form `[3](url#suffix)` (M365
# schema 1.8) is citation 3, however many fragments of the source it links.
MARKDOWN = re.compile(r"(?<!!)\[([^\]\n]+)\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
NUMBERED = re.compile(r"^\s*(\d+)\s*$")

FORMATS = ("oai_unicode", "bracket", "markdown", "mixed")


@dataclass(frozen=True)
class Found:
    """One distinct citation: by index, or by URL."""

    index: int | None = None
    url: str | None = None
    text: str | None = None
    by_index: bool = False
    """A numbered link `[N](url)`: counted by N, its URL kept for the report."""

    @property
    def key(self) -> tuple[str, str]:
        if self.url and not self.by_index:
            return ("url", self.url)
        return ("index", str(self.index))


def find_citations(text: str, citation_format: str = "oai_unicode") -> list[Found]:
    """Citations in `text` in the given format, first occurrence order, counted once each."""
    found: list[Found] = []
    kinds = FORMATS[:3] if citation_format == "mixed" else (citation_format,)
    if "oai_unicode" in kinds:
        found += [Found(index=int(m.group(1)), text=m.group(2)) for m in OAI_UNICODE.finditer(text)]
    if "bracket" in kinds:
        for m in BRACKET.finditer(text):
            found += [Found(index=int(n)) for n in re.split(r"\s*,\s*", m.group(1))]
    if "markdown" in kinds:
        found += [_markdown(m) for m in MARKDOWN.finditer(text)]
    return _dedupe(found)


def _markdown(match: re.Match[str]) -> Found:
    number = NUMBERED.match(match.group(1))
    if number:
        return Found(index=int(number.group(1)), url=match.group(2), by_index=True)
    return Found(url=match.group(2), text=match.group(1))


def detected_format(text: str) -> str | None:
    """Which format the citations in `text` use: one name, "mixed" for several, None."""
    seen = [k for k in FORMATS[:3] if find_citations(text, k)]
    return seen[0] if len(seen) == 1 else ("mixed" if seen else None)


def _dedupe(found: list[Found]) -> list[Found]:
    seen: dict[tuple[str, str], Found] = {}
    for f in found:
        seen.setdefault(f.key, f)
    return list(seen.values())


class CitationsOptions(EvaluatorOptions):
    citation_format: str = "oai_unicode"
    """One of `FORMATS` (checked when built)."""


@evaluator("builtin.citations", m365=True, needs=("response",), options=CitationsOptions)
class Citations(EvaluatorBase):
    """Counts distinct citations (citation_format: oai_unicode|bracket|markdown|mixed).

    Passes when the response cites at least `threshold` (default 1) distinct sources.

    Citations the agent returned beside its text (hosted agents) count too; a source counts
    once per index or URL, however often it is cited.
    """

    default_threshold = 1

    def check_options(self, options: dict[str, Any]) -> None:
        self._format(options)

    def _format(self, opts: dict[str, Any]) -> str:
        """The detection format. The M365 schema leaves `citation_format` open (its own
        samples use "inline"), so an unknown string counts every known format ("mixed");
        a non-string is a configuration error."""
        raw = opts.get("citation_format", "oai_unicode")
        if not isinstance(raw, str):
            raise option_error(self.name, "citation_format", " | ".join(FORMATS), raw)
        fmt = raw.lower()
        return fmt if fmt in FORMATS else "mixed"

    async def evaluate(self, sample: EvalSample) -> EvalResult:
        fmt = self._format(self.options_for(sample))
        found = find_citations(sample.response, fmt)
        found += [
            Found(index=c.index, url=c.url, text=c.title)
            for c in sample.citations
            if c.index is not None or c.url
        ]
        found = _dedupe(found)
        count = len(found)
        threshold = self.threshold_for(sample) or 0.0
        normalized = 1.0 if threshold <= 0 else min(count / threshold, 1.0)
        listed = [
            {
                "index": f.index if f.index is not None else i,
                **({"source": f.url} if f.url else {}),
                **({"text": f.text} if f.text else {}),
            }
            for i, f in enumerate(found, start=1)
        ]
        return verdict(
            self.name,
            score=float(count),
            normalized=normalized,
            threshold=threshold,
            reason=f"Found {count} citation{'s' if count != 1 else ''} ({fmt}); "
            f"at least {threshold:g} required.",
            details={
                "count": count,
                "format": detected_format(sample.response) or fmt,
                "citations": listed,
            },
        )
