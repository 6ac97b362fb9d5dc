"""The model-free criterion check: facts first, negation next, sentence similarity last.

Sentence-embedding similarity alone rewards talking about the topic: on the bundled example it
passed "You can return an item within 30 days" against a 45-day policy, "a minimum order of
$100" against $35 and "I do not currently offer free shipping". So a criterion is decided by
the first rule that applies:

1. **facts** — the criterion's checkable facts (`facts_extract`: amounts, percentages,
   durations, counts, times, dates, versions, numbers, names) must be in the answer,
   normalised ("forty-five days" = "45 days"). The answer stating the same kind of fact with
   another value ("30 days") contradicts it; a fact it does not state at all is missing.
   Either fails, saying which.
2. **negation** — the answer sentence that carries the criterion's facts (or, without facts,
   the closest one) negates a word the criterion asserts ("we do not offer free shipping").
   A criterion that itself forbids something ("does not ask for the password") fails when
   the closest sentence does it without a negation.
3. **similarity** — a criterion without checkable facts passes when some part of the answer
   is at least `threshold` similar to it (calibrated on the labelled set in
   `tests/fixtures/calibration`); one with facts, all present, still needs the answer to be
   about it (`topic_floor`).

The verdict names the rule that decided (`rule`), so a reader knows how far to trust it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from agentopt.evaluators.judges.facts_extract import Fact, extract_facts, words

DEFAULT_THRESHOLD = 0.325
"""Similarity a criterion without facts needs: the middle of the best band (0.30–0.35, 96% of
the tuning half) of a sweep over half of the labelled set; the other half agrees on 98% at
any threshold from 0.30 to 0.70 (`tests/evaluators/test_criteria_calibration.py`). Few of the
pairs are decided by similarity (14 of 99), so `eval calibrate --sweep` on a user's own labels
is the way to move it (task_adherence `similarity_threshold`)."""
TOPIC_FLOOR = 0.3
"""Similarity an answer carrying the criterion's facts needs to count as being about it."""
NEGATIONS = frozenset(
    words(
        "not no never without none nor neither unable refuse refuses decline declines avoid avoids"
    )
)
_BREAKS = frozenset({"but", "unless", "however", "instead", "except", "although", "though"})
FORBIDDEN_SIMILARITY = 0.7
"""Similarity at which a part of the answer does what a criterion forbids even without naming
it (a closer paraphrase than a passing criterion needs: "send me your login secret")."""
WINDOW = 5
"""Words after a negation that it governs (up to the end of the clause)."""
STOP = frozenset(
    words(
        "a an the and or of to in on at by for from with as is are was were be been being it its "
        "this that these those their them they you your we our us i me my he she his her there "
        "can could will would shall should may might must do does did has have had so if then "
        "than any all some each every which who whom what when where how why also just only "
        "very more most over under up about into out within after before"
    )
)
GENERIC = frozenset(
    words(
        "answer answers response reply replies says say said states state stated tells tell "
        "explains explain mentions mention notes note customer customers user users agent "
        "assistant clearly correctly"
    )
)
_NEGATIVE_CRITERION = re.compile(
    r"^\s*(?:the\s+)?(?:answer|response|reply|agent|assistant|model|output|it)?\s*"
    r"(?:does|do|should|must|will|may|can)?\s*(?:not|never)\b\s*",
    re.IGNORECASE,
)
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")


@dataclass(frozen=True)
class FactVerdict:
    """The check's verdict on one criterion.

    Attributes:
        passed: the criterion holds.
        rule: facts | negation | similarity — which rule decided.
        reason: one sentence saying why.
        similarity: the best similarity of an answer span (None when not needed).
        facts: the criterion's checkable facts, as written.
    """

    passed: bool
    rule: str
    reason: str
    similarity: float | None = None
    facts: list[str] = field(default_factory=list)


def contractions(text: str) -> str:
    text = re.sub(r"\b(can)not\b", r"\1 not", text, flags=re.IGNORECASE)
    text = re.sub(r"\bwon['’]t\b", "will not", text, flags=re.IGNORECASE)
    text = re.sub(r"\bcan['’]t\b", "can not", text, flags=re.IGNORECASE)
    return re.sub(r"n['’]t\b", " not", text, flags=re.IGNORECASE)


def stem(word: str) -> str:
    """A crude stem, enough to match "returns"/"returned", "retries"/"retry", "shipping"/"ship"."""
    w = word.lower()
    if w.endswith("ies") and len(w) > 4:
        w = w[:-3] + "y"
    elif w.endswith(("sses", "shes", "ches", "xes")):
        w = w[:-2]
    elif w.endswith("s") and not w.endswith("ss") and len(w) > 3:
        w = w[:-1]
    for suffix in ("ing", "ed"):
        if w.endswith(suffix) and len(w) - len(suffix) >= 3:
            w = w[: -len(suffix)]
            if len(w) > 3 and w[-1] == w[-2] and w[-1] not in "ls":
                w = w[:-1]
            break
    return w[:6]


def _tokens(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+|[,;:.!?]", contractions(text).lower())


def topic_stems(text: str) -> set[str]:
    """The content words of a criterion, stemmed (no stop words, no "the answer says")."""
    return {stem(t) for t in _tokens(text) if t.isalpha() and t not in STOP | GENERIC}


def negated_stems(text: str, *, shared: set[str] | None = None) -> set[str]:
    """Stems of the words a negation governs in `text` ("do not offer free shipping"): up to
    `WINDOW` words, to the end of the clause. A negation whose first word is in `shared` (the
    criterion negates the same thing: "when the order does not exist") is left out, and so
    is the status phrase "404 Not Found"."""
    tokens = _tokens(text)
    out: set[str] = set()
    for i, token in enumerate(tokens):
        if token not in NEGATIONS:
            continue
        after = tokens[i + 1 : i + 1 + WINDOW]
        if token == "not" and after[:1] == ["found"] and i and tokens[i - 1].isdigit():
            continue
        governed: list[str] = []
        for word in after:
            if not word.isalnum() or word in _BREAKS:
                break
            if word not in STOP and word not in NEGATIONS:
                governed.append(stem(word))
        if governed and shared and governed[0] in shared:
            continue
        out.update(governed)
    return out


def negative_criterion(instruction: str) -> str | None:
    """The criterion with its main negation removed when it forbids something ("The answer
    does not ask for the password" → "The answer ask for the password"), else None."""
    text = contractions(instruction)
    m = _NEGATIVE_CRITERION.match(text)
    if m is None or not re.search(r"\b(?:not|never)\b", m.group(0), re.IGNORECASE):
        return None
    head = re.sub(r"\b(?:not|never)\b\s*", "", m.group(0), flags=re.IGNORECASE)
    return (head + text[m.end() :]).strip()


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.split(text) if s and s.strip()]


def _compare(fact: Fact, found: Sequence[Fact], answer_lower: str) -> tuple[str, Fact | None]:
    """supported | contradicted (with the answer's fact) | missing."""
    if fact.kind == "name":
        name = str(fact.value[0])
        return ("supported", None) if name in answer_lower else ("missing", None)
    same_kind = [f for f in found if f.kind == fact.kind]
    if fact.kind == "number":
        if any(f.value[0] == fact.value[0] for f in found if f.kind in ("number", "count")):
            return "supported", None
        rivals = [f for f in same_kind if f.unit == fact.unit and fact.unit]
        return ("contradicted", rivals[0]) if rivals else ("missing", None)
    if fact.kind == "date":
        for f in same_kind:
            if all(c is None or c == a for c, a in zip(fact.value, f.value, strict=True)):
                return "supported", None
        rivals = [f for f in same_kind if _date_clash(fact, f)]
        return ("contradicted", rivals[0]) if rivals else ("missing", None)
    if fact.role == "threshold":  # "free over $35" is not "costs $35"
        priced = [f for f in same_kind if f.value == fact.value and f.role == "price"]
        if priced and not any(f.value == fact.value and f.role != "price" for f in same_kind):
            return "contradicted", priced[0]
    comparable = [f for f in same_kind if f.unit == fact.unit or fact.kind == "version"]
    if fact.kind == "version":
        comparable = [f for f in comparable if f.unit == fact.unit or not fact.unit]
    if any(f.value == fact.value for f in comparable):
        return "supported", None
    if fact.kind == "version" and not comparable:
        return "missing", None
    return ("contradicted", comparable[0]) if comparable else ("missing", None)


def _date_clash(criterion: Fact, answer: Fact) -> bool:
    pairs = zip(criterion.value, answer.value, strict=True)
    return any(c is not None and a is not None and c != a for c, a in pairs)


def decide(
    instruction: str,
    response: str,
    spans: Sequence[str],
    similarities: Sequence[float],
    *,
    positive_similarities: Sequence[float] | None = None,
    threshold: float = DEFAULT_THRESHOLD,
    topic_floor: float = TOPIC_FLOOR,
) -> FactVerdict:
    """The verdict on one criterion.

    Args:
        instruction: the criterion sentence.
        response: the agent's answer.
        spans: parts of the answer (`criteria_embedding.answer_spans`).
        similarities: cosine of the criterion to each span.
        positive_similarities: for a criterion that forbids something, cosine of its
            positive form (`negative_criterion`) to each span.
        threshold, topic_floor: see the module constants.
    """
    best = max(range(len(spans)), key=lambda i: similarities[i]) if spans else -1
    sim = similarities[best] if best >= 0 else 0.0
    closest = spans[best] if best >= 0 else ""
    positive = negative_criterion(instruction)
    if positive is not None and positive_similarities is not None:
        return _forbidden(
            instruction, positive, spans, positive_similarities, threshold, topic_floor
        )
    facts = [f for f in extract_facts(instruction) if positive is None]
    written = [f.text for f in facts]
    answer_facts = extract_facts(response)
    lower = response.lower()
    carriers: list[str] = []
    missing: list[Fact] = []
    for fact in facts:
        status, rival = _compare(fact, answer_facts, lower)
        if status == "contradicted" and rival is not None:
            said = f"{rival.text!r} as a price" if rival.value == fact.value else repr(rival.text)
            return FactVerdict(
                False, "facts",
                f"the answer says {said} where the criterion says {fact.text!r}",
                sim, written,
            )  # fmt: skip
        if status == "missing":
            missing.append(fact)
        else:
            carriers += [s for s in sentences(response) if _carries(s, fact)]
    negated = _negated(instruction, carriers or [closest])
    negation = f"negates {negated[0]!r}: {negated[1][:120]!r}" if negated else ""
    if missing:  # a missing fact decides; a negation beside it is said too
        names = ", ".join(repr(f.text) for f in missing)
        also = f"; it {negation}" if negation else ""
        return FactVerdict(False, "facts", f"the answer does not state {names}{also}", sim, written)
    if negation:
        return FactVerdict(False, "negation", f"the answer {negation}", sim, written)
    if facts:
        if sim < topic_floor:
            return FactVerdict(
                False, "facts",
                f"the answer states {', '.join(written)} but is not about the criterion "
                f"(similarity {sim:.2f} < {topic_floor:.2f})",
                sim, written,
            )  # fmt: skip
        return FactVerdict(True, "facts", f"the answer states {', '.join(written)}", sim, written)
    passed = sim >= threshold
    return FactVerdict(
        passed, "similarity",
        f"closest part of the answer has similarity {sim:.2f} "
        f"({'≥' if passed else '<'} {threshold:.2f}): {closest[:120]!r}",
        sim,
    )  # fmt: skip


def _carries(sentence: str, fact: Fact) -> bool:
    found = extract_facts(sentence)
    return _compare(fact, found, sentence.lower())[0] == "supported"


def _negated(instruction: str, candidates: Sequence[str]) -> tuple[str, str] | None:
    """A criterion word the candidate sentences negate and the criterion does not."""
    own = negated_stems(instruction)
    topic = topic_stems(instruction) - own
    for sentence in candidates:
        hit = sorted(negated_stems(sentence, shared=own) & topic)
        if hit:
            return hit[0], sentence
    return None


def head_stem(text: str) -> str | None:
    """The last content word of a sentence (its object, most often: "… for their password")."""
    content = [t for t in _tokens(text) if t.isalpha() and t not in STOP | GENERIC]
    return stem(content[-1]) if content else None


def _forbidden(
    instruction: str,
    positive: str,
    spans: Sequence[str],
    similarities: Sequence[float],
    threshold: float,
    topic_floor: float,
) -> FactVerdict:
    """A criterion that forbids something fails when a part of the answer does it: it names
    the thing forbidden (the positive form's last content word: "password") without negating
    it, and is about it (similar to the positive form at least `topic_floor`), or is as
    similar as a passing criterion needs (`threshold`)."""
    if not spans:
        return FactVerdict(True, "negation", "the answer is empty", 0.0)
    topic, head = topic_stems(positive), head_stem(positive)
    best = max(range(len(spans)), key=lambda i: similarities[i])
    for i in sorted(range(len(spans)), key=lambda i: -similarities[i]):
        span, sim = spans[i], similarities[i]
        if negated_stems(span) & topic:
            continue
        named = head is not None and head in {stem(t) for t in _tokens(span)}
        if (named and sim >= topic_floor) or sim >= max(threshold, FORBIDDEN_SIMILARITY):
            return FactVerdict(
                False, "negation",
                f"the answer does what the criterion forbids ({positive!r}): {span[:120]!r}",
                sim,
            )  # fmt: skip
    sim, span = similarities[best], spans[best]
    return FactVerdict(
        True, "negation",
        f"the answer does not do what the criterion forbids (closest part, similarity "
        f"{sim:.2f}{', negated' if negated_stems(span) & topic else ''}): {span[:120]!r}",
        sim,
    )  # fmt: skip
