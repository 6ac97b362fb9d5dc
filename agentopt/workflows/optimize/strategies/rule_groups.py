"""Failures grouped into general, scoped rules (`instructions:rules`), from the structure of
the results rather than from one judge's wording.

Failures are grouped by what they share: the criterion a judge failed, or the expected fact
an answer lacked (a ground truth, a required pattern). For each group:

- **what is missing**: a judged group's reasons are compared with the other groups' reasons.
  Words every group's reasons use ("does not mention", "which the policy requires", "Left
  out:") are the judge's phrasing; the words only this group's reasons use, and that the
  failing answers do not contain, are what the answers lacked ("refund window"). A span the
  judge quoted counts whole. Reasons of passed verdicts of the same criterion support a
  phrase; a reason whose answer already holds the phrase counts against it (the judge
  objected to it being there), and the other words of a reason that quotes only what its
  answer says ("offers 'store credit', which the policy does not allow") are the judge's, not
  something missing. The phrasing of the reasons does not matter — "does not mention 'X',
  which …", "Left out: X (…)" and a paragraph read the same.
- **when it applies**: the condition the group's tasks share and the others do not — the
  words that set its criterion apart ("returns for business customers"), else a category,
  else the words its queries share ("When asked about return or refund").
- **the rule**: "On returns for business customers: mention 'invoice credit'." An expected
  fact becomes the criterion that states it when a task has one, else "state '45 days'" under
  the condition; never a task's question with its answer (`leak.py` refuses those anyway).
  What is missing may be one of the agent's tools: when most of a group's reasons name a tool
  its answers did not call ("the agent used order_status, and tracking questions need
  track_parcel"), the rule says to call it ("On parcel tracking: call the track_parcel
  tool."), not to write its name in the answer. The record's tool calls, not the wording,
  tell the tool needed from the one used.

Rules that say the same thing are merged; a criterion that says nothing the query does not
("follows the store's policy on returns"), or one failed in the use of a tool the answers
called, is never restated as a rule.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass

from agentopt.workflows.optimize.strategies.base import Example
from agentopt.workflows.optimize.strategies.failure_groups import (
    STOP,
    Group,
    all_groups,
    content,
    norm,
    stem,
    tokens,
)
from agentopt.workflows.optimize.strategies.rule_text import (
    criterion_rule,
    mention,
)

MAX_SCOPE_WORDS = 5
MAX_PHRASE_WORDS = 8
_BREAK = re.compile(r"[,;:()\[\]{}!?\n]|\.(?:\s|$)|\s[-–—]\s")
_QUOTED = re.compile(r"(?<!\w)['‘\"“`]([^'’\"”`\n]{2,80}?)['’\"”`](?!\w)")


def _has(haystack: str, phrase: str) -> bool:
    """`phrase` occurs in `haystack` as whole words (both normalised)."""
    return bool(phrase) and f" {phrase} " in f" {haystack} "


def _answer(ex: Example) -> str:
    record = ex.record
    parts = [record.response]
    parts += [t.response for t in record.turns or []]
    return norm(" ".join(parts))


# -- what is missing ------------------------------------------------------------------------------


def _segments(reason: str) -> list[tuple[list[str], bool]]:
    """The reason cut at punctuation into word runs, plus each quoted span (flag True)."""
    out: list[tuple[list[str], bool]] = [(tokens(q), True) for q in _QUOTED.findall(reason)]
    unquoted = _QUOTED.sub(" , ", reason)
    out += [(tokens(part), False) for part in _BREAK.split(unquoted)]
    return [(t, q) for t, q in out if t]


def _phrases(
    reason: str, generic: set[str], topic: set[str], contrast: bool, tools: frozenset[str]
) -> set[str]:
    """Runs of words only this group's reasons use (a topic word may extend a run; function
    words may sit inside one). Without other groups to compare with (`contrast` False) only
    quoted spans count: any word would look specific. A part of the reason that names one of
    the agent's `tools` (normalised) is about the tool's use ("tracking questions need
    track_parcel"), not about what to say."""
    found: set[str] = set()
    for words, quoted in _segments(reason):
        if not quoted and not contrast:
            continue
        if tools and any(_has(" ".join(words), t) for t in tools):
            continue
        if quoted:
            telling = any(stem(w) not in generic and w not in topic and content(w) for w in words)
            if telling and len(words) <= MAX_PHRASE_WORDS:
                found.add(" ".join(words))
            continue
        run: list[str] = []
        for w in [*words, ""]:
            common = stem(w) in generic
            specific = w and not common and w not in STOP and w not in topic
            inside = w and (w in STOP or (w in topic and not common))
            if specific or (run and inside):
                run.append(w)
                continue
            while run and (run[-1] in STOP):
                run.pop()
            telling = any(content(x) and x not in topic for x in run)
            if telling and len(run) <= MAX_PHRASE_WORDS:
                found.add(" ".join(run))
            run = []
    return found


def missing_phrases(
    group: Group, others: list[Group], limit: int = 2, tools: frozenset[str] = frozenset()
) -> list[tuple[str, bool]]:
    """What this group's failing answers lacked, best supported first: (phrase, quoted);
    `tools`: the agent's tool names."""
    other_words = [{w for v in g.failed + g.passed for w in tokens(v.reason)} for g in others]
    other_words = [words for words in other_words if words]
    if not other_words and not any(_QUOTED.search(v.reason) for v in group.failed):
        return []
    need = max(1, math.ceil(0.25 * len(other_words)))
    df = Counter(x for words in other_words for x in {stem(w) for w in words})
    generic = {w for w, n in df.items() if n >= need}
    topic = {w for v in group.failed for w in tokens(v.instruction)}
    topic |= {w for ex in group.tasks for w in tokens(ex.task.query)}
    score: Counter[str] = Counter()
    quoted: set[str] = set()
    named = frozenset(norm(t) for t in tools)
    for v in [*group.failed, *group.passed]:
        answer = _answer(v.example)
        spans = {" ".join(t) for t, q in _segments(v.reason) if q}
        # A reason that quotes only what the answer says ("offers 'store credit', which the
        # policy does not allow") is about that quote; its other words are the judge's.
        echoed = bool(spans) and all(_has(answer, x) for x in spans)
        for phrase in _phrases(v.reason, generic, topic, bool(other_words), named):
            if phrase in spans:
                quoted.add(phrase)
            elif echoed:
                continue
            there = _has(answer, phrase)
            if v.passed:
                score[phrase] += 1 if there else 0
            else:
                score[phrase] += -1 if there else 1
    # A judge that quotes is quoting what it missed: its quoted spans first, the rest only
    # when it quoted nothing usable.
    live = [p for p in score if score[p] > 0]
    if any(p in quoted for p in live):
        live = [p for p in live if p in quoted]
    ranked = sorted(live, key=lambda p: (-score[p], -len(p), p))
    chosen: list[tuple[str, bool]] = []
    for phrase in ranked:
        if len(chosen) >= limit:
            break
        if chosen and score[phrase] < max(2, score[chosen[0][0]] / 2):
            break
        if any(_has(phrase, c) or _has(c, phrase) for c, _ in chosen):
            continue
        chosen.append((phrase, phrase in quoted))
    return chosen


# -- when it applies ------------------------------------------------------------------------------


def _criterion_scope(instruction: str, others: list[str]) -> str:
    words = tokens(instruction)
    if not words or not others:
        return ""
    other_sets = [set(tokens(o)) for o in others]
    apart = [
        i
        for i, w in enumerate(words)
        if content(w) and sum(w in s for s in other_sets) < len(other_sets)
    ]
    if not apart:
        return ""
    start, end = apart[0], apart[-1] + 1
    while end < len(words) and words[end] not in STOP:
        end += 1  # the rest of the noun phrase ("business" → "business customers")
    span = words[start:end]
    return " ".join(span) if len(span) <= MAX_SCOPE_WORDS else ""


def _query_scope(group: Group, train: list[Example]) -> str:
    """The words the group's questions share and the others' rarely use, most shared first
    (at most two): "When asked about return or refund"."""
    tasks = group.all_tasks
    mine = [set(filter(content, tokens(ex.task.query))) for ex in tasks]
    names = {ex.task.name for ex in tasks}
    rest = [set(tokens(ex.task.query)) for ex in train if ex.task.name not in names]
    counts = Counter(w for words in mine for w in words)
    elsewhere = {w: sum(w in r for r in rest) for w in counts}
    floor = 1 if len(mine) < 3 else math.ceil(len(mine) / 2)
    common = sorted(
        (
            w
            for w, n in counts.items()
            if n >= floor and w.isalpha() and len(w) > 2 and elsewhere[w] <= len(rest) / 4
        ),
        key=lambda w: (-counts[w], elsewhere[w], -len(w), w),
    )[:2]
    if not common:
        return ""
    shared = [w for w in common if counts[w] == len(mine)]
    if shared and len(mine) > 1:
        common = shared  # what every one of its questions is about
    every = len(common) > 1 and all(counts[w] == len(mine) for w in common) and len(mine) >= 3
    return "When asked about " + (" and " if every else " or ").join(common)


def scope(group: Group, groups: list[Group], train: list[Example]) -> str:
    """The condition the group's tasks share and the other failures do not ("" = none)."""
    instruction = next((v.instruction for v in group.failed if v.instruction), "")
    if instruction:
        others = [
            v.instruction
            for g in groups
            if g is not group
            for v in g.failed[:1] + g.passed[:1]
            if v.instruction
        ]
        found = _criterion_scope(instruction, others)
        if found:
            return f"On {found}"
    categories = {ex.task.category for ex in group.all_tasks}
    everyone = {ex.task.category for ex in train} | categories
    if len(categories) == 1 and None not in categories and len(everyone) > 1:
        return f"On {str(next(iter(categories))).replace('_', ' ')} questions"
    return _query_scope(group, train)


# -- rules ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Rule:
    """One rule: the bullet text, and what it asks for (its identity when merging)."""

    text: str
    key: str
    tasks: tuple[str, ...] = ()


def _scoped(condition: str, action: str) -> str:
    action = action.rstrip(" .")
    if not condition:
        return action[0].upper() + action[1:] + "."
    return f"{condition}: {action[0].lower()}{action[1:]}."


def _restates(instruction: str, group: Group) -> bool:
    """The criterion says nothing its tasks' queries do not ("follows the policy on returns")."""
    asked = {w for ex in group.tasks for w in tokens(ex.task.query)}
    return all(w in asked for w in tokens(instruction) if content(w))


def _criterion_stating(group: Group, fact: str) -> str:
    """A criterion of the group's tasks that states the fact, as an imperative."""
    for ex in group.tasks:
        for turn in ex.task.turns:
            for c in turn.criteria:
                if _has(norm(c.instruction), norm(fact)):
                    return criterion_rule(c.instruction) or ""
    return ""


def group_rules(
    group: Group, groups: list[Group], train: list[Example], tools: frozenset[str] = frozenset()
) -> list[Rule]:
    """The rules one group teaches (none when it says nothing the agent could act on);
    `tools`: the agent's tool names."""
    names = tuple(sorted(ex.task.name for ex in group.tasks))
    first = group.failed[0]
    if group.key.startswith("habit:"):
        return [Rule(first.habit, norm(first.habit), names)]
    where = scope(group, groups, train)
    if group.key.startswith("fact:"):
        fact = first.fact
        action = _criterion_stating(group, fact) or (
            mention(fact) if first.pattern else f"state {_quote(fact)}"
        )
        return [Rule(_scoped(where, action), norm(fact), names)]
    tool = _needed_tool(group, tools)
    if tool is not None:
        action = f"call the {tool} tool"
        return [Rule(_scoped(_apart(where, norm(tool)), action), norm(action), names)]
    others = [g for g in groups if g is not group and g.key.startswith("criterion:")]
    found = missing_phrases(group, others, tools=tools)
    if found:
        return [Rule(_scoped(_apart(where, p), mention_phrase(p, q)), p, names) for p, q in found]
    instruction = first.instruction
    if not instruction or _restates(instruction, group) or _tool_misused(group, tools):
        return []
    text = criterion_rule(instruction)
    return [Rule(text, norm(text), names)] if text else []


def _needed_tool(group: Group, tools: frozenset[str]) -> str | None:
    """The one tool of the agent that most of the group's reasons name and their answers did
    not call: the tool the routing missed (None: no such tool, or more than one)."""
    named: Counter[str] = Counter()
    for v in group.failed:
        reason = norm(v.reason)
        called = {c.name for c in v.example.record.tool_calls}
        named.update(t for t in tools if t not in called and _has(reason, norm(t)))
    most = [t for t, n in named.items() if 2 * n > len(group.failed)]
    return most[0] if len(most) == 1 else None


def _tool_misused(group: Group, tools: frozenset[str]) -> bool:
    """Most of the group's reasons name a tool their answers called ("does not give the
    order status (order questions need order_status)", order_status called): the failure is
    in how the tool was used, which the `tools` strategy rewrites. The criterion as a rule
    ("Tell the customer the status of their order.") would only restate it; in the bench's
    tool worlds every such rule was screened out."""
    named = 0
    for v in group.failed:
        reason = norm(v.reason)
        called = {c.name for c in v.example.record.tool_calls} & tools
        named += any(_has(reason, norm(t)) for t in called)
    return 2 * named > len(group.failed)


def _apart(condition: str, phrase: str) -> str:
    """No condition that only repeats what the rule asks for ("On refund window: mention
    'refund window'")."""
    said = set(phrase.split())
    return condition if any(content(w) and w not in said for w in tokens(condition)) else ""


def _quote(text: str) -> str:
    return f"'{text}'" if "'" not in text else f'"{text}"'


def mention_phrase(phrase: str, quoted: bool) -> str:
    """The action of a missing phrase: quoted as the judge quoted it, else in plain words."""
    return f"mention {_quote(phrase)}" if quoted else mention(phrase)


def merge(rules: list[Rule]) -> list[Rule]:
    """One rule per thing asked for: conditions of the same rule joined ("On a or b: …")."""
    by_key: dict[str, list[Rule]] = {}
    for r in rules:
        by_key.setdefault(r.key, []).append(r)
    out: list[Rule] = []
    for key, same in by_key.items():
        if len(same) == 1:
            out.append(same[0])
            continue
        heads = [r.text.split(": ", 1) for r in same]
        tasks = tuple(sorted({t for r in same for t in r.tasks}))
        if all(len(h) == 2 for h in heads) and len({h[1] for h in heads}) == 1:
            conditions = " or ".join(
                dict.fromkeys(h[0].removeprefix("On ") if i else h[0] for i, h in enumerate(heads))
            )
            out.append(Rule(f"{conditions}: {heads[0][1]}", key, tasks))
        else:
            out.append(Rule(min((r.text for r in same), key=len), key, tasks))
    return out


def rules_from(
    examples: list[Example], train: list[Example], tools: frozenset[str] = frozenset()
) -> list[Rule]:
    """Every rule the failures of `examples` teach, the largest groups first (`tools`: the
    agent's tool names)."""
    groups = all_groups(examples)
    found: list[Rule] = []
    for g in groups:
        if g.failed:
            found += group_rules(g, groups, train, tools)
    return merge(found)
