"""`instructions:rules` — a model-free proposer: the checks the parent failed on its weakest
train tasks become explicit rules appended to its instructions.

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
from agentopt.workflows.optimize.strategies.traces import GROUND_TRUTH_EVALUATORS, failed_checks

HEADING = "## Rules learned from evaluation"
MAX_NEW_RULES = 5
QUERY_CHARS = 90
REASON_CHARS = 200
_WORD = re.compile(r"[a-z0-9]+")


def normalized(text: str) -> str:
    """Lower-case words only: the identity of a rule for de-duplication."""
    return " ".join(_WORD.findall(text.lower()))


def _clip(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _sentence(text: str) -> str:
    text = " ".join(text.split()).rstrip()
    if not text:
        return text
    text = text[0].upper() + text[1:]
    return text if text[-1] in ".!?" else text + "."


EXAMPLE_SUFFIX = " (For example, for:"


def rule_key(text: str) -> str:
    """A rule's identity: its normalized words, without the example query."""
    return normalized(text.split(EXAMPLE_SUFFIX)[0])


@dataclass(frozen=True)
class Rule:
    """One rule: the bullet text written under the heading."""

    text: str

    @property
    def key(self) -> str:
        return rule_key(self.text)


def rules_from_example(ex: Example) -> list[Rule]:
    """The rules one failed train task teaches, most specific signal first."""
    query = _clip(ex.task.query, QUERY_CHARS)
    out: list[Rule] = []
    for check in failed_checks(ex.record):
        if check.instruction:
            out.append(Rule(f'{_sentence(check.instruction)}{EXAMPLE_SUFFIX} "{query}")'))
        elif check.evaluator in GROUND_TRUTH_EVALUATORS and ex.task.ground_truth:
            truth = _clip(ex.task.ground_truth, 200)
            out.append(Rule(f'When asked "{query}", the expected answer is: {truth}'))
        elif check.name:
            label = check.name.replace("_", " ")
            out.append(Rule(f"Mind {label}: {_clip(check.reason, REASON_CHARS)}"))
        elif check.reason and len(check.reason) <= REASON_CHARS:
            out.append(Rule(f"Avoid this failure: {check.reason}"))
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
            keys.add(rule_key(line.lstrip()[2:]))
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
        rules = new_rules(current, weakest)
        source = weakest
        if not rules:
            # Nothing new in the minibatch: look at the parent's other failed train tasks.
            others = [e for e in ctx.train if e.status != "pass" and e not in weakest]
            others.sort(key=lambda e: (e.score if e.score is not None else -1.0, e.task.name))
            rules = new_rules(current, others)
            source = others
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
