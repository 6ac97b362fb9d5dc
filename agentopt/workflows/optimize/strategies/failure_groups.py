"""Failures grouped by what they share, read from the records' verdicts (`rule_groups.py`
turns the groups into rules; `stop.py` counts them).

A group is the criterion a judge failed (`criterion:<text>`), the expected fact an answer
lacked (`fact:<answer>`: a ground truth, a required pattern) or a habit a whole-response check
asks for (`habit:<rule>`). Passed verdicts of the same group are kept beside the failures: the
condition a rule applies under is read from every task the group was checked on. Also the word
lists and normalisation the rule text and the harm check share.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from agentopt.workflows.optimize.strategies.base import Example
from agentopt.workflows.optimize.strategies.rule_text import (
    DEFAULT_CRITERION,
    WHOLE_RESPONSE_RULES,
    regex_words,
    schema_rule,
)
from agentopt.workflows.optimize.strategies.traces import GROUND_TRUTH_EVALUATORS, _results


def _wordset(text: str) -> frozenset[str]:
    return frozenset(text.split())


STOP = _wordset(
    "a an the of on in at to for from by with about and or but not no nor is are was were "
    "be been being it its this that these those which who whom whose what when where why "
    "how as than then so such any all each every some own same other into onto over under "
    "up down out off do does did done has have had i you he she we they them their there "
    "here my your our his her s can could should would will shall may might must also "
    "only just very too "
    "don't doesn't didn't isn't aren't wasn't weren't hasn't haven't hadn't can't couldn't "
    "won't wouldn't shouldn't it's"
)
VAGUE = _wordset(
    "policy policies follow follows followed following rule rules guideline guidelines "
    "instruction instructions store store's correct correctly appropriate appropriately "
    "proper properly accurate accurately requirement requirements require requires "
    "required expected standard response responses answer answers reply replies agent "
    "assistant request requests question questions ask asks asked asking customer "
    "customers user users give gives tell tells say says state states handle handles "
    "right mention mentions include includes provide provides offer offers explain explains "
    "cover covers note notes missing lacks omit omits "
    "vague unclear incomplete incorrect wrong insufficient inadequate addressed answered "
    "relevant irrelevant helpful unhelpful detailed generic partial partially fully complete "
    "completely"
)
_TOKEN = re.compile(r"\w+(?:['’\-–]\w+)*")


def tokens(text: str) -> list[str]:
    # "9am–6pm" and "9am-6pm" are one word: judges and answers mix the dashes.
    return [t.replace("’", "'").replace("–", "-") for t in _TOKEN.findall(text.casefold())]


def token_spans(text: str) -> list[tuple[int, int, str]]:
    """Each word of `text` where it stands, with the token `tokens` makes of it (a word that
    casefolds into more than one token, rare, gives "")."""
    out = []
    for m in _TOKEN.finditer(text):
        made = tokens(m.group())
        out.append((m.start(), m.end(), made[0] if len(made) == 1 else ""))
    return out


def stem(word: str) -> str:
    """A crude stem, so "mention" and "mentions" are one word when phrasing is compared."""
    word = word.removesuffix("'s")
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def norm(text: str) -> str:
    return " ".join(tokens(text))


def content(word: str) -> bool:
    """A word that can carry a rule's content (a number alone, as in a judge's score, cannot)."""
    return (
        word not in STOP and word not in VAGUE and len(word) > 1 and any(c.isalpha() for c in word)
    )


# -- reading the records --------------------------------------------------------------------------


@dataclass(frozen=True)
class Verdict:
    """One criterion verdict of one task (passed or failed)."""

    example: Example
    key: str
    """The group: `criterion:<text>`, `fact:<answer>`, `habit:<rule>`."""
    passed: bool
    reason: str
    instruction: str = ""
    fact: str = ""
    habit: str = ""
    pattern: bool = False
    """The fact is the wording a regular expression asks for (said as "mention …")."""


def _truth_of(ex: Example) -> str:
    return (ex.task.ground_truth or "").strip()


def verdicts(ex: Example) -> Iterator[Verdict]:
    """Every verdict of a record, as the groups see it (judge errors say nothing)."""
    for result in _results(ex.record):
        status = result.status
        if status not in ("pass", "fail"):
            continue
        evaluator = result.evaluator
        details = result.details
        if details.get("verdicts"):
            for v in details["verdicts"]:
                name = str(v.get("name", "")).split("#")[0]
                instruction = " ".join(str(v.get("instruction", "")).split())
                key = f"criterion:{norm(instruction) or name}"
                if name == DEFAULT_CRITERION:
                    key, instruction = f"criterion:{DEFAULT_CRITERION}", ""
                # A model-free check's reason is agentopt's own sentence ("facts: the answer
                # says '30 days' where the criterion says '45 days'"), not a judge's: what is
                # missing is its criterion, which the group's rule states. Its words ("the
                # criterion says", "negates") are nothing to mention.
                reason = "" if v.get("rule") else str(v.get("reason") or "")
                yield Verdict(ex, key, bool(v.get("passed", True)), reason, instruction)
        elif details.get("dimension_scores"):
            for d in details["dimension_scores"]:
                if d.get("applicable") and int(d.get("score", 5)) <= 2:
                    dim = str(d.get("id", "")).replace("_", " ").replace("-", " ")
                    yield Verdict(ex, f"habit:{dim}", False, "", habit=f"Pay attention to {dim}.")
        elif status == "fail":
            yield from _deterministic(ex, evaluator, details)
        elif evaluator in GROUND_TRUTH_EVALUATORS and _truth_of(ex):
            # A passed expected answer: its question shares the condition of the failed ones.
            truth = _truth_of(ex)
            yield Verdict(ex, f"fact:{norm(truth)}", True, "", fact=truth)


def _deterministic(ex: Example, evaluator: str, details: dict[str, Any]) -> Iterator[Verdict]:
    truth = _truth_of(ex)
    if evaluator in GROUND_TRUTH_EVALUATORS:
        if truth:
            yield Verdict(ex, f"fact:{norm(truth)}", False, "", fact=truth)
    elif evaluator == "builtin.regex_match":
        said = [w for p in details.get("missing") or [] if (w := regex_words(str(p)))]
        if not said:
            return
        if truth and any(norm(truth) in norm(w) for w in said):
            yield Verdict(ex, f"fact:{norm(truth)}", False, "", fact=truth)
        elif details.get("mode") == "any" and len(said) > 1:
            quoted = " or ".join(f'"{w}"' for w in said)
            yield Verdict(
                ex, f"habit:{norm(quoted)}", False, "", habit=f"Use the wording {quoted}."
            )
        else:
            yield Verdict(ex, f"fact:{norm(said[0])}", False, "", fact=said[0], pattern=True)
    elif evaluator == "builtin.json_schema":
        yield Verdict(ex, "habit:json", False, "", habit=schema_rule(details))
    elif evaluator in WHOLE_RESPONSE_RULES:
        yield Verdict(ex, f"habit:{evaluator}", False, "", habit=WHOLE_RESPONSE_RULES[evaluator])


# -- groups ---------------------------------------------------------------------------------------


@dataclass
class Group:
    key: str
    failed: list[Verdict] = field(default_factory=list)
    passed: list[Verdict] = field(default_factory=list)

    @property
    def tasks(self) -> list[Example]:
        """The tasks that failed it."""
        return _distinct(self.failed)

    @property
    def all_tasks(self) -> list[Example]:
        """The tasks it was checked on, passed or failed (what its condition is read from)."""
        return _distinct(self.failed + self.passed)


def _distinct(verdicts: list[Verdict]) -> list[Example]:
    seen: dict[str, Example] = {}
    for v in verdicts:
        seen.setdefault(v.example.task.name, v.example)
    return list(seen.values())


def all_groups(examples: Iterable[Example]) -> list[Group]:
    """Every group, passed-only ones too (the contrast and the conditions read them)."""
    groups: dict[str, Group] = {}
    for ex in examples:
        for v in verdicts(ex):
            g = groups.setdefault(v.key, Group(v.key))
            (g.passed if v.passed else g.failed).append(v)
    return sorted(groups.values(), key=lambda g: (-len(g.tasks), g.key))


def group_failures(examples: Iterable[Example]) -> list[Group]:
    """Groups with at least one failure, most failures first (then by key)."""
    return [g for g in all_groups(examples) if g.failed]


def failure_keys(examples: Iterable[Example]) -> set[str]:
    """The distinct groups the failures of `examples` fall in (the stop rule's count)."""
    return {g.key for g in group_failures(examples)}
