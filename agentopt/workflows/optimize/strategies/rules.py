"""`instructions:rules` — a model-free proposer: the checks the parent failed on train become
general, scoped rules in plain words (`rule_groups`), appended to its instructions.

It needs no optimization model, so optimization is useful even with the embedded model, and it
is cheap and predictable next to reflection. Rules go under one heading
(`## Rules learned from evaluation`); a rule already there — or whose content is already said
anywhere in the instructions — is never added again, so rules do not repeat across
generations. A line the search found harmful on validation (`harm.py`: the answers it broke
carry its words) is taken out of the parent and never written again.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from agentopt.workflows.optimize.strategies.base import (
    Example,
    NoProposal,
    Proposal,
    ProposalContext,
    register_strategy,
)
from agentopt.workflows.optimize.strategies.failure_groups import norm
from agentopt.workflows.optimize.strategies.instructions import function_names
from agentopt.workflows.optimize.strategies.rule_groups import Rule, rules_from

HEADING = "## Rules learned from evaluation"
MAX_NEW_RULES = 5
_WORD = re.compile(r"[a-z0-9]+")

__all__ = ["HEADING", "Rule", "append_rules", "new_rules", "normalized"]


def normalized(text: str) -> str:
    """Lower-case words only: the identity of a rule for de-duplication."""
    return " ".join(_WORD.findall(text.lower()))


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
    if normalized(rule.text) in keys:
        return True
    said = f" {instructions_norm} "
    return f" {normalized(rule.key)} " in said if len(rule.key) > 3 else False


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


def remove_lines(instructions: str, harmful: frozenset[str]) -> tuple[str, list[str]]:
    """The instructions without their lines found harmful (and the lines taken out); a
    rules heading left with no rule goes too."""
    kept: list[str] = []
    removed: list[str] = []
    for line in instructions.splitlines():
        body = line.strip().removeprefix("- ")
        if body and norm(body) in harmful:
            removed.append(body)
        else:
            kept.append(line)
    if removed and HEADING in (x.strip() for x in kept):
        at = next(i for i, x in enumerate(kept) if x.strip() == HEADING)
        after = kept[at + 1 :]
        if not any(x.lstrip().startswith("- ") for x in after[: _section_end(after)]):
            kept = kept[:at] + after
    return "\n".join(kept).rstrip(), removed


def _section_end(lines: list[str]) -> int:
    return next((i for i, x in enumerate(lines) if x.startswith("## ")), len(lines))


def new_rules(
    instructions: str,
    examples: list[Example],
    limit: int = MAX_NEW_RULES,
    *,
    train: list[Example] | None = None,
    blocked: frozenset[str] = frozenset(),
    first: set[str] | None = None,
    tools: frozenset[str] = frozenset(),
    seen: Sequence[Example] = (),
) -> list[Rule]:
    """Rules the failures of `examples` teach that the instructions do not hold yet: those of
    the tasks in `first` (the screening minibatch) before the others (`tools`: the agent's
    tool names, which a rule asks to call rather than to mention; `seen`: the job's train
    runs, for the judges' phrasing and the answers that passed)."""
    keys = existing_rule_keys(instructions)
    said = normalized(instructions)
    found = rules_from(examples, train if train is not None else examples, tools, seen)
    if first:
        found.sort(key=lambda r: not (set(r.tasks) & first))
    chosen: list[Rule] = []
    for rule in found:
        if not rule.key or norm(rule.text) in blocked or _already_said(rule, said, keys):
            continue
        keys.add(normalized(rule.text))
        chosen.append(rule)
        if len(chosen) >= limit:
            break
    # A stable order: two slots that learn the same rules propose the same configuration,
    # which is then recognised as a duplicate instead of being evaluated twice.
    return sorted(chosen, key=lambda r: r.key)


@register_strategy("instructions:rules", target="instructions")
class RuleProposer:
    """Append rules learned from failed checks (and take out the ones found harmful)."""

    label = "rules"

    async def propose(self, ctx: ProposalContext) -> Proposal:
        current, removed = remove_lines(ctx.parent.instructions or "", ctx.harmful)
        weakest = {e.task.name for e in ctx.examples if e.status != "pass"}
        known = {e.task.name: e for e in [*ctx.examples, *ctx.train]}
        source = sorted(known.values(), key=lambda e: (e.task.name not in weakest, e.task.name))
        tools = frozenset(function_names(ctx.parent.tools))
        rules = new_rules(
            current, source, blocked=ctx.harmful, first=weakest, tools=tools, seen=ctx.seen
        )
        if not rules and not removed:
            raise NoProposal("no failed check teaches a rule the instructions do not hold yet")
        used = sorted({t for r in rules for t in r.tasks})
        said = [f"added {len(rules)} rule(s) from failed checks on " + ", ".join(used[:4])]
        said[0] += "…" if len(used) > 4 else ""
        if removed:
            said.append(f"took out {len(removed)} rule(s) that broke validation answers")
        text = append_rules(current, [r.text for r in rules]) if rules else current
        return Proposal(
            definition=ctx.parent.model_copy(update={"instructions": text}),
            strategy=self.label,
            rationale="; ".join(said if rules else said[1:]),
            mutation={
                "rules_added": [r.text for r in rules],
                "tasks": used,
                **({"rules_removed": removed} if removed else {}),
            },
            signature="rules:" + "|".join(r.key for r in rules) + "|-".join(["", *removed]),
        )
