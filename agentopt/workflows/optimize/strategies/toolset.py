"""`toolset` — drop one tool the parent's train traces show as harmful or unused. No model
call: it reads the traces.

Harmful: never used in a passing task, and either its calls fail, or the tasks that use it
score clearly lower than the tasks that do not, beyond chance (a contrast is needed: when
nothing passes and every task calls the tool, the traces say nothing about it; and when most
tasks fail anyway, a tool found only in failed ones may be there by luck). Unused: never
called. A tool used in a passing task is never dropped; screening then checks the guess.

The instructions lose every sentence that names the dropped tool ("call search_web with …"):
left in, they tell the agent to call a tool it no longer has.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from agentopt.workflows.optimize.strategies.base import (
    Example,
    NoProposal,
    Proposal,
    ProposalContext,
    register_strategy,
)
from agentopt.workflows.optimize.strategies.instructions import function_names
from agentopt.workflows.optimize.strategies.traces import tool_calls

CONTRAST = 0.1
"""Score gap between tasks without and with the tool that counts as evidence of harm."""
ALPHA = 0.1
"""How unlikely, by chance, the tool's tasks must be to all have failed: the one-sided exact
(Fisher) test of "every task with the tool failed" given how many tasks failed in all. Without
it a needed tool was dropped: in the `tool-descriptions` bench world the agent misroutes at
random, the needed tool sat in 2 failed tasks while 3 of the 4 others failed too (chance
0.67), and its removal passed a 3-task screening by luck and cost a full validation."""


@dataclass
class ToolUse:
    name: str
    calls: int = 0
    failed_calls: int = 0
    in_passing: int = 0
    in_failing: int = 0
    with_scores: list[float] = field(default_factory=list)
    without_scores: list[float] = field(default_factory=list)
    failed_without: int = 0
    """Failed tasks that did not call it."""

    @property
    def score_gap(self) -> float:
        """Mean score of tasks without the tool − with it (0 without both kinds)."""
        if not self.with_scores or not self.without_scores:
            return 0.0
        without = sum(self.without_scores) / len(self.without_scores)
        return without - sum(self.with_scores) / len(self.with_scores)

    @property
    def harmful(self) -> bool:
        if self.in_passing:
            return False
        if self.failed_calls > 0:
            return True
        return self.score_gap >= CONTRAST and self.chance <= ALPHA

    @property
    def chance(self) -> float:
        """The probability that, of all the tasks, the ones with the tool are all among the
        failed ones by chance (hypergeometric: C(failed, n) / C(tasks, n))."""
        n = self.in_failing + self.in_passing
        failed = self.in_failing + self.failed_without
        total = n + len(self.without_scores)
        return math.comb(failed, n) / math.comb(total, n) if n else 1.0

    @property
    def unused(self) -> bool:
        return self.calls == 0


def tool_usage(names: list[str], examples: list[Example]) -> dict[str, ToolUse]:
    usage = {n: ToolUse(n) for n in names}
    for ex in examples:
        seen: set[str] = set()
        for call in tool_calls(ex.record):
            use = usage.get(call.name)
            if use is None:
                continue
            use.calls += 1
            use.failed_calls += bool(call.error)
            seen.add(use.name)
        score = ex.score if ex.score is not None else 0.0
        for name, use in usage.items():
            if name not in seen:
                use.without_scores.append(score)
                use.failed_without += ex.status != "pass"
                continue
            use.with_scores.append(score)
            if ex.status == "pass":
                use.in_passing += 1
            else:
                use.in_failing += 1
    return usage


_SENTENCE = re.compile(r"(?<=[.!?])\s+")


def without_tool_mentions(instructions: str, tool: str) -> str:
    """`instructions` minus the sentences that name `tool`; a line left empty goes too."""
    named = re.compile(rf"(?<![A-Za-z0-9_]){re.escape(tool)}(?![A-Za-z0-9_])")
    lines: list[str] = []
    for line in instructions.splitlines():
        if not named.search(line):
            lines.append(line)
            continue
        indent = line[: len(line) - len(line.lstrip())]
        body = line.strip()
        bullet = ""
        if body[:2] in ("- ", "* "):
            bullet, body = body[:2], body[2:]
        kept = [s for s in _SENTENCE.split(body) if not named.search(s)]
        if kept:
            lines.append(indent + bullet + " ".join(kept))
    return "\n".join(lines)


@register_strategy("toolset", target="toolset")
class DropTool:
    """Drop the most harmful, else an unused, tool."""

    async def propose(self, ctx: ProposalContext) -> Proposal:
        names = function_names(ctx.parent.tools)
        if not names:
            raise NoProposal("the agent has no function tool left to drop")
        if not ctx.train:
            raise NoProposal("no train trace to judge the tools by")
        usage = tool_usage(names, ctx.train)
        harmful = sorted(
            (u for u in usage.values() if u.harmful),
            key=lambda u: (-u.failed_calls, -u.in_failing, u.name),
        )
        unused = [u for u in usage.values() if u.unused]
        if harmful:
            drop, why = harmful[0], "harmful"
            detail = (
                f"{drop.failed_calls} failed call(s); used in {drop.in_failing} failed task(s) "
                f"and no passing one; tasks without it score {drop.score_gap:+.2f}"
            )
        elif unused:
            drop, why = unused[0], "unused"
            detail = f"never called in {len(ctx.train)} train task(s)"
        else:
            raise NoProposal(
                "every tool is used in a passing task, or too few tasks show it harmful"
            )
        tools = [
            t
            for t in ctx.parent.tools
            if not (t.get("type") == "function" and t["function"].get("name") == drop.name)
        ]
        mocks = ctx.parent.tool_mocks
        if mocks and drop.name in mocks:
            mocks = {k: v for k, v in mocks.items() if k != drop.name}
        instructions = ctx.parent.instructions
        if instructions:
            instructions = without_tool_mentions(instructions, drop.name)
        update = {"tools": tools, "tool_mocks": mocks, "instructions": instructions}
        return Proposal(
            definition=ctx.parent.model_copy(update=update),
            strategy=f"toolset:-{drop.name}",
            rationale=f"dropped {drop.name} ({why}: {detail})",
            mutation={"dropped_tool": drop.name, "why": why},
        )
