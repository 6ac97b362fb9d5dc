"""Checkable facts in a sentence: amounts, percentages, durations and counts, times of day,
dates, versions and numbers, and names — normalised, so "45 days", "forty-five days" and "a
45-day window" are one fact, "$35", "35 dollars" and "$35.00" another.

Used by the model-free criterion check (`criteria_facts`): a criterion's facts must appear in
the answer, and the answer stating the same kind of fact with another value contradicts it.
No model is involved; everything here is a regular expression or a table.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


def words(text: str) -> list[str]:
    """The words of a table written as one string (easier to read than a list of quotes)."""
    return text.split()


WORD_VALUES = {w: i for i, w in enumerate(
    words(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
        "fifteen sixteen seventeen eighteen nineteen"
    )
)}  # fmt: skip
TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70,
        "eighty": 80, "ninety": 90}  # fmt: skip
SCALES = {"hundred": 100, "thousand": 1000}
_NUMBER_WORD = "|".join(sorted([*WORD_VALUES, *TENS, *SCALES], key=len, reverse=True))
_WORD_RUN = re.compile(
    rf"\b(?:{_NUMBER_WORD})(?:[\s-]+(?:and[\s-]+)?(?:{_NUMBER_WORD}))*\b", re.IGNORECASE
)
_ARTICLE_UNIT = re.compile(
    r"\b(?:a|an|one|single)\s+(day|week|month|year|hour|minute|second)\b", re.IGNORECASE
)

DURATION_SECONDS = {
    "second": 1, "sec": 1, "minute": 60, "min": 60, "hour": 3600, "hr": 3600,
    "day": 86400, "week": 7 * 86400, "month": 30 * 86400, "year": 365 * 86400,
}  # fmt: skip
_DURATION = r"(?:seconds?|secs?|minutes?|mins?|hours?|hrs?|days?|weeks?|months?|years?)"
_COUNT = r"(?:times|attempts?|retries|tries|items?|characters|chars|tokens|requests)"
_QUALIFIER = r"(?:(?:business|working|calendar|full)[\s-]+)?"
SPELLED = "\u2063"
"""Marks a number that was written in words: it counts with a unit, never alone ("one of our
agents" is not the number 1)."""
_NUM = SPELLED + r"?\d[\d,]*(?:\.\d+)?"
_CURRENCY_SIGNS = {"$": "USD", "€": "EUR", "£": "GBP", "¥": "JPY"}
_CURRENCY_WORDS = {"dollar": "USD", "usd": "USD", "buck": "USD", "euro": "EUR", "eur": "EUR",
                   "pound": "GBP", "gbp": "GBP"}  # fmt: skip
MONTHS = {m: i + 1 for i, m in enumerate(
    words(
        "january february march april may june july august september october november december"
    )
)}  # fmt: skip
_MONTH = r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|" \
    r"sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"  # fmt: skip

_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    ("money", re.compile(rf"(?P<sign>[$€£¥])\s?(?P<a>{_NUM})")),
    ("money", re.compile(
        rf"\b(?P<a>{_NUM})\s?(?P<word>dollars?|usd|bucks?|euros?|eur|pounds?|gbp)\b")),
    ("percent", re.compile(rf"\b(?P<a>{_NUM})\s?(?:%|percent\b|per\s?cent\b)")),
    ("time", re.compile(r"\b(?P<h>\d{1,2})(?::(?P<m>\d{2}))?\s?(?P<ap>[ap])\.?m\b\.?")),
    ("date", re.compile(r"\b(?P<y>\d{4})-(?P<mo>\d{1,2})-(?P<d>\d{1,2})\b")),
    ("date", re.compile(
        rf"\b(?P<mon>{_MONTH})\.?\s+(?P<d>\d{{1,2}})(?:st|nd|rd|th)?\b(?:,?\s+(?P<y>\d{{4}}))?")),
    ("date", re.compile(
        rf"\b(?P<d>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<mon>{_MONTH})\b(?:,?\s+(?P<y>\d{{4}}))?")),
    ("date", re.compile(rf"\b(?P<mon>{_MONTH})\.?,?\s+(?P<y>(?:19|20)\d{{2}})\b")),
    ("duration", re.compile(
        rf"\b(?:between\s+)?(?P<a>{_NUM})\s?(?:-|to|or|and|–)\s?(?P<b>{_NUM})[\s-]*{_QUALIFIER}"
        rf"(?P<unit>{_DURATION})\b")),
    ("duration", re.compile(rf"\b(?P<a>{_NUM})[\s-]*{_QUALIFIER}(?P<unit>{_DURATION})\b")),
    ("count", re.compile(rf"\b(?P<a>{_NUM})\s+(?P<unit>{_COUNT})\b")),
    ("version", re.compile(r"(?<![\w.\u2063])(?P<a>\d+\.\d+(?:\.\d+)*)(?![\w.]*\d)\+?")),
    ("number", re.compile(r"(?<![\w.\u2063])(?P<a>\d+)(?![\w.]*\d)")),
]  # fmt: skip


@dataclass(frozen=True)
class Fact:
    """One checkable fact.

    Attributes:
        kind: money | percent | time | date | duration | count | version | number | name.
        unit: what values are compared within (currency, "duration", the counted noun, the
            word before a plain number, "" for names).
        value: normalised value (a range's bounds, a date's parts, a name in lower case).
        text: as written, for reasons.
        start: offset in the text it was found in (which sentence carries it).
    """

    kind: str
    unit: str
    value: tuple[object, ...]
    text: str
    start: int = 0
    role: str = ""
    """For amounts: "price" after a word that charges ("costs $35"), "threshold" after one
    that compares ("over $35", "$35 or more"), else ""."""


def words_to_digits(text: str) -> str:
    """ "forty-five days" → "45 days", "a week" → "1 week" (number words up to thousands)."""
    text = _ARTICLE_UNIT.sub(lambda m: f"{SPELLED}1 {m.group(1)}", text)
    return _WORD_RUN.sub(lambda m: _word_number(m.group(0)), text)


def _word_number(run: str) -> str:
    total, current, seen = 0, 0, False
    for word in re.split(r"[\s-]+", run.lower()):
        if word == "and":
            continue
        if word in WORD_VALUES:
            current += WORD_VALUES[word]
        elif word in TENS:
            current += TENS[word]
        elif word in SCALES:
            current = max(current, 1) * SCALES[word]
            if SCALES[word] >= 1000:
                total, current = total + current, 0
        seen = True
    return f"{SPELLED}{total + current}" if seen else run


def _number(text: str) -> float:
    return float(text.replace(",", "").replace(SPELLED, ""))


def extract_facts(text: str) -> list[Fact]:
    """Every checkable fact of `text`, each span read once (the most specific kind first)."""
    plain = words_to_digits(text.replace("–", "-").replace("—", "-"))
    lower = plain.lower()
    taken: list[tuple[int, int]] = []
    facts: list[Fact] = []
    for kind, pattern in _PATTERNS:
        for m in pattern.finditer(lower):
            if any(m.start() < end and start < m.end() for start, end in taken):
                continue
            fact = _fact(kind, m, lower)
            if fact is not None:
                taken.append((m.start(), m.end()))
                facts.append(fact)
    facts.extend(names(plain))
    return sorted(facts, key=lambda f: f.start)


def _fact(kind: str, m: re.Match[str], lower: str) -> Fact | None:
    g = m.groupdict()
    text = m.group(0).replace(SPELLED, "").strip()
    if kind == "money":
        currency = _CURRENCY_SIGNS.get(g.get("sign") or "") or _CURRENCY_WORDS.get(
            (g.get("word") or "").rstrip("s"), "USD"
        )
        role = _money_role(lower, m.start(), m.end())
        return Fact("money", currency, (_number(g["a"]),), text, m.start(), role)
    if kind == "percent":
        return Fact("percent", "%", (_number(g["a"]),), text, m.start())
    if kind == "time":
        hour = int(g["h"]) % 12 + (12 if g["ap"] == "p" else 0)
        return Fact("time", "clock", (hour * 60 + int(g["m"] or 0),), text, m.start())
    if kind == "date":
        month = int(g["mo"]) if g.get("mo") else MONTHS.get(_full_month(g.get("mon") or ""))
        year = int(g["y"]) if g.get("y") else None
        day = int(g["d"]) if g.get("d") else None
        if month is None or (g.get("mon") == "may" and day is None and year is None):
            return None
        return Fact("date", "date", (year, month, day), text, m.start())
    if kind == "duration":
        unit = g["unit"].rstrip("s") if g["unit"] not in ("hrs", "mins", "secs") else g["unit"][:-1]
        scale = DURATION_SECONDS.get(unit, DURATION_SECONDS.get(unit[:3], 1))
        low = _number(g["a"]) * scale
        high = _number(g["b"]) * scale if g.get("b") else low
        return Fact("duration", "duration", (low, high), text, m.start())
    if kind == "count":
        noun = {"tries": "times", "retries": "times", "attempt": "times", "attempts": "times"}
        return Fact("count", noun.get(g["unit"], g["unit"]), (_number(g["a"]),), text, m.start())
    context = _word_before(lower, m.start())
    if kind == "version":
        return Fact("version", context, (g["a"],), text, m.start())
    value = _number(g["a"])
    if 1900 <= value <= 2100 and context in ("in", "since", "of", "by", "until"):
        return Fact("date", "date", (int(value), None, None), text, m.start())
    return Fact("number", context, (value,), text, m.start())


PRICE_WORDS = frozenset(words("cost costs costing fee fees charge charges charged pay pays price"))
THRESHOLD_WORDS = frozenset(
    words("over above exceeds exceeding exceed passes past than least minimum reaches from")
)


def _money_role(lower: str, start: int, end: int) -> str:
    before = re.findall(r"[a-z]+", lower[max(0, start - 30) : start])[-2:]
    after = lower[end : end + 12]
    if any(w in THRESHOLD_WORDS for w in before) or re.match(r"\s*(?:or more|and up|\+)", after):
        return "threshold"
    if any(w in PRICE_WORDS for w in before):
        return "price"
    return ""


def _full_month(text: str) -> str:
    return next((m for m in MONTHS if m.startswith(text[:3])), "") if text else ""


def _word_before(lower: str, at: int) -> str:
    words = re.findall(r"[a-z][a-z_]*", lower[max(0, at - 40) : at])
    return words[-1] if words else ""


_IDENTIFIER = re.compile(
    r"`(?P<tick>[^`\n]{1,60})`"
    r"|(?P<call>\b[A-Za-z_][\w.]*\(\))"
    r"|(?P<dotted>\b[A-Za-z_][\w]*(?:\.[A-Za-z_][\w]*)+\b)"
    r"|(?P<snake>\b[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+\b)"
    r"|(?P<proper>(?<![.!?]\s)(?<!^)\b[A-Z][a-z]+(?:[A-Z][a-z]+)*\b)"
)
NOT_NAMES = frozenset(
    words(
        "The This That These Those It Its If When Then And But Or For With Without After Before "
        "Yes No Please Sure Sorry Once Our Your You We I Run Set Use Just Any Monday Tuesday "
        "Wednesday Thursday Friday Saturday Sunday January February March April May June July "
        "August September October November December Not Found Here There Thanks Hi Hello"
    )
)


def names(text: str) -> list[Fact]:
    """Names a criterion may require: identifiers (`code`, call(), a.b, SNAKE_CASE) and
    capitalised words inside a sentence (Python, Northwind) — not sentence starts or common
    words. Plain acronyms (HTTP, CI, API) are too generic to require."""
    out: list[Fact] = []
    for m in _IDENTIFIER.finditer(text):
        kind = m.lastgroup or ""
        raw = m.group(kind)
        if kind == "proper" and (raw in NOT_NAMES or _sentence_start(text, m.start())):
            continue
        if kind == "tick" and not re.search(r"[A-Za-z]", raw):
            continue
        value = raw.strip().lower().rstrip("()")
        if kind == "tick":
            value = re.split(r"[\s(=]", value, maxsplit=1)[0]
        if value and re.search(r"[a-z]", value):
            out.append(Fact("name", "", (value,), raw, m.start()))
    return out


def _sentence_start(text: str, at: int) -> bool:
    before = text[:at].rstrip()
    return not before or before[-1] in ".!?:;\n\"'(" or before.endswith("`")
