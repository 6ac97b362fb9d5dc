"""De-duplication of generated tasks: exact (normalized text) and near duplicates.

Generators repeat themselves, most of all across top-up batches. A task is a duplicate when
its normalized text equals an accepted one's, or when the two share most of their words
(Jaccard similarity of word sets ≥ 0.8) — "How do I reset my password?" and "how can I reset
my password" are one test, not two. Word overlap needs no model and is deterministic, so a
rerun drops exactly the same tasks.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

NEAR_DUPLICATE_JACCARD = 0.8
_WORD = re.compile(r"\w+")
# Words that carry no meaning of their own; dropping them makes rephrasings collide.
_STOPWORDS_TEXT = """a an the i me my we our you your is are was be do does can could would
should please to of for in on at and or it this that with"""
_STOPWORDS = frozenset(_STOPWORDS_TEXT.split())


def normalize_text(text: str) -> str:
    """Lower case, accents and punctuation dropped, white space collapsed."""
    folded = unicodedata.normalize("NFKD", text.casefold())
    folded = "".join(ch for ch in folded if not unicodedata.combining(ch))
    return " ".join(_WORD.findall(folded))


def word_set(text: str) -> frozenset[str]:
    """The meaningful words of a text (stop words dropped unless nothing else is left)."""
    words = normalize_text(text).split()
    meaningful = frozenset(w for w in words if w not in _STOPWORDS)
    return meaningful or frozenset(words)


def key_words(text: str) -> list[str]:
    """The meaningful words of a text, in order, for a name made from it: alphabetic, three
    letters or more ("I've" leaves no "ve"), stop words dropped."""
    words = normalize_text(text).split()
    return [w for w in words if w.isalpha() and len(w) >= 3 and w not in _STOPWORDS]


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    """|a ∩ b| / |a ∪ b| (1.0 for two empty sets)."""
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


@dataclass
class Deduper:
    """Remembers accepted texts; `check` says whether a new one repeats any of them."""

    threshold: float = NEAR_DUPLICATE_JACCARD
    _exact: dict[str, str] = field(default_factory=dict)
    _words: list[tuple[frozenset[str], str]] = field(default_factory=list)

    def check(self, text: str) -> str | None:
        """The label of the accepted task `text` duplicates, or None when it is new."""
        key = normalize_text(text)
        if key in self._exact:
            return self._exact[key]
        words = word_set(text)
        for other, label in self._words:
            if jaccard(words, other) >= self.threshold:
                return label
        return None

    def add(self, text: str, label: str) -> None:
        """Accept `text` (known to later checks under `label`)."""
        self._exact.setdefault(normalize_text(text), label)
        self._words.append((word_set(text), label))
