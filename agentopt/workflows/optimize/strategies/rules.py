"""`instructions:rules` — a model-free proposer: the checks the parent failed on its weakest
train tasks become rules in plain words (`rule_text`), appended to its instructions.

It needs no optimization model, so optimization is useful even with the embedded model, and it
is cheap and predictable next to reflection. Rules go under one heading
(`## Rules learned from evaluation`); a rule already there — or already said anywhere in the
instructions — is never added again, so rules do not repeat across generations.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agentopt.workflows.optimize.strategies.base import (
    Example,
    NoProposal,
    Proposal,
    ProposalContext,
    register_strategy,
)
from agentopt.workflows.optimize.strategies.rule_text import rule_for
from agentopt.workflows.optimize.strategies.traces import failed_checks

HEADING = "## Rules learned from evaluation"
MAX_NEW_RULES = 5
_WORD = re.compile(r"[a-z0-9]+")


def normalized(text: str) -> str:
    """Lower-case words only: the identity of a rule for de-duplication."""
    return " ".join(_WORD.findall(text.lower()))


@dataclass(frozen=True)
class Rule:
    """One rule: the bullet text written under the heading."""

    text: str

    @property
    def key(self) -> str:
        return normalized(self.text)


def rules_from_example(ex: Example) -> list[Rule]:
    """The rules one failed train task teaches, in plain words (`rule_text`)."""
    query = ex.task.query
    out: list[Rule] = []
    for check in failed_checks(ex.record):
        text = rule_for(check, query=query, ground_truth=ex.task.ground_truth)
        if text and Rule(text) not in out:
            out.append(Rule(text))
    return out


def existing_rule_keys(instructions: str) -> set[str]:
    """Keys of the rules already under the heading."""
    keys: set[str] = set()
    inside = False
    for line in instructions.splitlines():
        if line.strip() == HEADING:
            inside = True
            continue
        if inside and line.startswith("## "):
            inside = False
        if inside and line.lstrip().startswith("- "):
            keys.add(normalized(line.lstrip()[2:]))
    return keys


def _already_said(rule: Rule, instructions_norm: str, keys: set[str]) -> bool:
    return rule.key in keys or (len(rule.key) > 12 and rule.key in instructions_norm)


def append_rules(instructions: str, bullets: list[str]) -> str:
    """Add bullets at the end of the rules section (creating it at the end when missing)."""
    lines = instructions.rstrip().splitlines()
    new = [f"- {b}" for b in bullets]
    if not lines:
        return "\n".join([HEADING, *new])
    if HEADING not in (line.strip() for line in lines):
        return "\n".join([*lines, "", HEADING, *new]).rstrip()
    start = next(i for i, line in enumerate(lines) if line.strip() == HEADING)
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    while end > start + 1 and not lines[end - 1].strip():
        end -= 1
    return "\n".join([*lines[:end], *new, *lines[end:]]).rstrip()


def new_rules(instructions: str, examples: list[Example], limit: int = MAX_NEW_RULES) -> list[Rule]:
    """Rules from the examples (in order) that the instructions do not hold yet."""
    keys = existing_rule_keys(instructions)
    said = normalized(instructions)
    chosen: list[Rule] = []
    for ex in examples:
        for rule in rules_from_example(ex):
            if not rule.key or _already_said(rule, said, keys):
                continue
            keys.add(rule.key)
            chosen.append(rule)
            if len(chosen) >= limit:
                break
        if len(chosen) >= limit:
            break
    # A stable order: two slots that learn the same rules propose the same configuration,
    # which is then recognised as a duplicate instead of being evaluated twice.
    return sorted(chosen, key=lambda r: r.key)


@register_strategy("instructions:rules")
class RuleProposer:
    """Append rules learned from failed checks."""

    name = "instructions:rules"
    target = "instructions"
    needs_model = False
    label = "rules"

    async def propose(self, ctx: ProposalContext) -> Proposal:
        current = ctx.parent.instructions or ""
        weakest = [e for e in ctx.examples if e.status != "pass"]
        # The minibatch first (screening will check those), then the parent's other failed
        # train tasks, up to MAX_NEW_RULES: one proposal learns what several failures teach.
        seen = {e.task.name for e in weakest}
        others = [e for e in ctx.train if e.status != "pass" and e.task.name not in seen]
        others.sort(key=lambda e: (e.score if e.score is not None else -1.0, e.task.name))
        source = weakest + others
        rules = new_rules(current, source)
        if not rules:
            raise NoProposal("no failed check teaches a rule the instructions do not hold yet")
        used = [e.task.name for e in source if any(r in rules_from_example(e) for r in rules)]
        return Proposal(
            definition=ctx.parent.model_copy(
                update={"instructions": append_rules(current, [r.text for r in rules])}
            ),
            strategy=self.label,
            rationale=f"added {len(rules)} rule(s) from failed checks on "
            + ", ".join(used[:4])
            + ("…" if len(used) > 4 else ""),
            mutation={"rules_added": [r.text for r in rules], "tasks": used},
            signature="rules:" + "|".join(r.key for r in rules),
        )
