"""Failed checks in plain words: the pieces `rule_groups` builds rules from
(`instructions:rules`).

A criterion becomes an imperative ("The response mentions the refund window" → "Mention the
refund window."), a regular expression becomes the words it asks for (`(?i)30-day refund
window` → "30-day refund window"), a JSON-schema check names the fields. Evaluator messages
and regex syntax never reach the instructions: a check that cannot be said plainly (a custom
code evaluator, a pattern made of character classes) teaches no rule rather than a confusing
one. An expected answer is never written next to its question (`rule_groups` states the fact
under the condition its questions share).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

try:  # Python 3.11+: the regex parser the `re` module itself uses
    from re import _parser as sre_parse  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover
    import sre_parse  # type: ignore[no-redef]

DEFAULT_CRITERION = "follows_instructions"
"""task_adherence's criterion when a task has none ("follow your instructions" teaches nothing)."""

WHOLE_RESPONSE_RULES: dict[str, str] = {
    "builtin.relevance": "Answer exactly what the user asked.",
    "builtin.coherence": "Keep answers clear and in a logical order.",
    "builtin.fluency": "Write in clear, grammatical sentences.",
    "builtin.groundedness": "State only facts that the provided context or tool results support.",
    "builtin.intent_resolution": "Work out what the user wants and resolve it fully.",
    "builtin.tool_call_accuracy": "Call the tool that fits the request, with the arguments it "
    "needs.",
    "builtin.citations": "Cite the sources you used.",
    "builtin.latency": "Keep answers short.",
    "builtin.token_budget": "Keep answers short.",
}
"""Evaluators that judge the whole response: the habit their failure asks for."""
_SUBJECT = re.compile(
    r"^(?:the\s+|its\s+|your\s+)?(?:agent's\s+|assistant's\s+)?"
    r"(?:response|answer|reply|agent|assistant|output|model|bot)\s+",
    re.I,
)
_MODAL = re.compile(r"^(?:should|must|will|shall|needs to|has to|is expected to)\s+", re.I)
_NEGATED = re.compile(r"^(?:does not|doesn't|do not|don't|should not|must not|never)\s+", re.I)
_NOT_VERBS = frozenset({"always", "sometimes", "news", "thanks", "yes", "this", "was", "its"})
_IRREGULAR = {"is": "be", "are": "be", "has": "have", "does": "do", "goes": "go"}
_ES_ENDINGS = ("sses", "shes", "ches", "xes", "zzes", "oes")
_NON_NOUN_START = frozenset(
    {"a", "an", "the", "please", "thank", "thanks", "we", "you", "i", "our", "your", "my", "no"}
    | {"not", "do", "don't", "call", "let", "sorry", "hello", "hi", "yes", "ok", "okay"}
)


def _sentence(text: str) -> str:
    text = " ".join(text.split()).rstrip()
    if not text:
        return text
    text = text[0].upper() + text[1:]
    return text if text[-1] in ".!?" else text + "."


def _base_form(verb: str) -> str | None:
    """'mentions' → 'mention', 'applies' → 'apply', 'is' → 'be'; None when not a 3rd-person
    verb."""
    low = verb.lower()
    if low in _IRREGULAR:
        return _IRREGULAR[low]
    if low in _NOT_VERBS or len(low) < 3 or not low.isalpha() or not low.endswith("s"):
        return None
    if low.endswith("ss"):
        return None
    if low.endswith("ies"):
        return low[:-3] + "y"
    if low.endswith(_ES_ENDINGS):
        return low[:-2]
    return low[:-1]


def criterion_rule(instruction: str) -> str | None:
    """A criterion as an imperative: "The response asks for the order number" → "Ask for the
    order number."; an instruction already written as one stays as it is."""
    text = " ".join(instruction.split()).rstrip(" .")
    if not text:
        return None
    stripped = _SUBJECT.sub("", text, count=1)
    negated = _NEGATED.match(stripped)
    if negated:
        return _sentence("Do not " + stripped[negated.end() :])
    stripped = _MODAL.sub("", stripped, count=1)
    first, _, rest = stripped.partition(" ")
    base = _base_form(first)
    return _sentence(f"{base} {rest}".strip() if base is not None else stripped)


# -- regular expressions -------------------------------------------------------------------------


def _chars(items: Sequence[Any]) -> str | None:
    """A character class a person can say: one letter in its cases (`[Rr]`) or one literal."""
    if all(op == sre_parse.LITERAL for op, _ in items):
        letters = {chr(code).lower() for _, code in items}
        if len(letters) == 1:
            return chr(items[0][1]).lower() if len(items) > 1 else chr(items[0][1])
    return None


def _is_space(items: Any) -> bool:
    return any(
        op == sre_parse.IN and any(a == sre_parse.CATEGORY and "SPACE" in str(b) for a, b in arg)
        for op, arg in items
    ) or all(op == sre_parse.LITERAL and chr(arg).isspace() for op, arg in items)


def _render(items: Any, out: list[list[str]]) -> bool:
    """Append the pattern's literal text to the current fragment (`out[-1]`); a piece with no
    literal reading starts a new fragment. False when an alternative cannot be said."""
    for op, arg in items:
        if op == sre_parse.LITERAL:
            out[-1].append(chr(arg))
        elif op == sre_parse.AT:
            continue
        elif op == sre_parse.SUBPATTERN:
            if not _render(arg[-1], out):
                return False
        elif op == sre_parse.BRANCH:
            # The parser factors out a common prefix ("refund|return" → "re" + fund|turn):
            # the word it cut belongs to every alternative.
            head = "".join(out[-1])
            cut = len(head) - len(head.rstrip().split(" ")[-1]) if head.strip() else len(head)
            prefix = head[cut:]
            said = []
            for alternative in arg[1]:
                parts: list[list[str]] = [[]]
                if not _render(alternative, parts) or len(parts) > 1:
                    return False
                said.append(prefix + "".join(parts[0]).strip())
            if not all(said):
                return False
            out[-1] = [*head[:cut], " or ".join(said)]
        elif op == sre_parse.IN and (char := _chars(arg)) is not None:
            out[-1].append(char)
        elif op in (sre_parse.MAX_REPEAT, sre_parse.MIN_REPEAT):
            low, _high, inner = arg
            if _is_space(inner):
                out[-1].append(" ")
            elif low == 0:
                scratch: list[list[str]] = [[]]
                if not _render(inner, scratch) or len(scratch) > 1:
                    out.append([])  # `.*` and the like: a gap between two wordings
                # else optional text: the words that must be there are enough
            elif not _render(inner, out):
                return False
        else:  # a class, a wildcard, a back-reference: no words to say here
            out.append([])
    return True


def regex_words(pattern: str) -> str | None:
    """The words a regular expression asks for ("(?i)30-day refund window" → "30-day refund
    window"; "refund|return" → "refund or return"); None when it has none a person could say."""
    try:
        parsed = sre_parse.parse(pattern)
    except (re.error, RecursionError, OverflowError):
        return None
    fragments: list[list[str]] = [[]]
    if not _render(list(parsed), fragments):
        return None
    words = [" ".join("".join(f).split()).strip(" ,;:#") for f in fragments]
    words = [w for w in words if sum(c.isalnum() for c in w) >= 2]
    if not words:
        return None
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def mention(text: str) -> str:
    """'30-day refund window' → 'Mention the 30-day refund window'; wording that is not a
    plain noun phrase is quoted ('Use the wording "thank you"')."""
    first = text.split()[0].lower() if text.split() else ""
    plain = text == text.lower() and re.fullmatch(r"[a-z0-9][a-z0-9 \-']*", text)
    if plain and first not in _NON_NOUN_START and " or " not in text and len(text.split()) <= 6:
        return f"Mention the {text}"
    return f'Use the wording "{text}"'


def schema_rule(details: dict[str, Any]) -> str:
    """A JSON-schema check's failure (its result's details) as the habit it asks for."""
    fields = [str(f) for f in details.get("fields") or []]
    if not fields:
        return "Answer with valid JSON only."
    names = fields[0] if len(fields) == 1 else ", ".join(fields[:-1]) + " and " + fields[-1]
    return f"Answer with JSON that has the field{'s' if len(fields) > 1 else ''} {names}."
