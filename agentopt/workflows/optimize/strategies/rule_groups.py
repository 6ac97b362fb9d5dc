"""Failures grouped into general, scoped rules (`instructions:rules`), from the structure of
the results rather than from one judge's wording.

Failures are grouped by what they share: the criterion a judge failed, or the expected fact
an answer lacked (a ground truth, a required pattern). For each group:

- **what is missing**: the words only this group's reasons use, and that its failing answers
  do not contain ("refund window"), whatever the judge's phrasing: "does not mention 'X',
  which …", "Left out: X (…)" and a paragraph read the same (`rule_phrases`).
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
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from agentopt.workflows.optimize.strategies.base import Example
from agentopt.workflows.optimize.strategies.failure_groups import (
    STOP,
    Group,
    all_groups,
    content,
    norm,
    tokens,
)
from agentopt.workflows.optimize.strategies.rule_phrases import (
    answer_text,
    has_words,
    judge_words,
    missing_phrases,
    passed_answers,
    reason_words,
    surface,
)
from agentopt.workflows.optimize.strategies.rule_text import (
    criterion_rule,
    mention,
)

MAX_SCOPE_WORDS = 5


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
                if has_words(norm(c.instruction), norm(fact)):
                    return criterion_rule(c.instruction) or ""
    return ""


def group_rules(
    group: Group,
    groups: list[Group],
    train: list[Example],
    tools: frozenset[str] = frozenset(),
    phrasing: frozenset[str] = frozenset(),
    shown: Sequence[str] = (),
) -> list[Rule]:
    """The rules one group teaches (none when it says nothing the agent could act on);
    `tools`: the agent's tool names; `phrasing`: the judges' words for other criteria across
    the job (`judge_words`); `shown`: the answers that passed its criterion in the job's
    other runs."""
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
    found = missing_phrases(group, others, tools=tools, phrasing=phrasing, shown=shown)
    if found:
        # Written as the judge (or an answer that passed) wrote it: "free over $35".
        texts = [v.reason for v in group.failed + group.passed]
        texts += [answer_text(v.example) for v in group.passed] + list(shown)
        return [
            Rule(_scoped(_apart(where, p), mention_phrase(surface(p, texts), q)), p, names)
            for p, q in found
        ]
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
        named.update(t for t in tools if t not in called and has_words(reason, norm(t)))
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
        named += any(has_words(reason, norm(t)) for t in called)
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
    """One rule per thing asked for: conditions of the same rule joined ("On a or b: …"). Two
    groups may ask for it in the same words under different keys (a failed criterion and the
    expected answer it states: "Say standard shipping is free on orders over $35." and "On
    free shipping questions: say …"): one of them, the least conditioned, stays."""
    by_action: dict[str, Rule] = {}
    for r in _merge_keys(rules):
        action = norm(r.text.split(": ", 1)[-1])
        kept = by_action.get(action)
        if kept is None:
            by_action[action] = r
            continue
        tasks = tuple(sorted({*kept.tasks, *r.tasks}))
        text = min((kept.text, r.text), key=lambda t: (len(t), t))
        by_action[action] = Rule(text, kept.key if text == kept.text else r.key, tasks)
    return list(by_action.values())


def _merge_keys(rules: list[Rule]) -> list[Rule]:
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
    examples: list[Example],
    train: list[Example],
    tools: frozenset[str] = frozenset(),
    seen: Sequence[Example] = (),
) -> list[Rule]:
    """Every rule the failures of `examples` teach, the largest groups first (`tools`: the
    agent's tool names; `seen`: every train run of the job, any candidate's, read for the
    judges' phrasing and the answers that passed each criterion)."""
    groups = all_groups(examples)
    wide = all_groups(seen)
    words = reason_words([*groups, *wide])
    shown = {g.key: passed_answers(g) for g in wide}
    found: list[Rule] = []
    for g in groups:
        if g.failed:
            phrasing = judge_words(g.key, words)
            found += group_rules(g, groups, train, tools, phrasing, shown.get(g.key, ()))
    return merge(found)
