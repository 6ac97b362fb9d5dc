"""`instructions:reflect` — the optimization model reads the parent's instructions and how it
failed on its weakest train tasks, and writes improved instructions (GEPA-style reflection)."""

from __future__ import annotations

from typing import Any

from agentopt.workflows.optimize.strategies.base import (
    NoProposal,
    Proposal,
    ProposalContext,
    register_strategy,
)
from agentopt.workflows.optimize.strategies.prompts import render_examples
from agentopt.workflows.optimize.strategies.text_rewrite import TextReply, rewrite_text

TEMPLATE = "reflect_instructions.j2"
REPLY = TextReply("instructions", "<the complete new instructions>")
SCHEMA = REPLY.schema
MIN_EXAMPLES, MAX_EXAMPLES = 3, 5
MIN_REWRITE_TOKENS = 300


def function_names(tools: list[dict[str, Any]]) -> list[str]:
    return [
        str(t["function"].get("name"))
        for t in tools
        if t.get("type") == "function" and isinstance(t.get("function"), dict)
    ]


def one_line(text: str, limit: int = 200) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def reflection_examples(ctx: ProposalContext) -> list[Any]:
    """3–5 train examples (GEPA's reflective minibatch, widened): the screening minibatch,
    then the parent's other failed train tasks up to 5 — several failures with their judges'
    reasons per call — then other weak ones up to 3."""
    chosen = list(ctx.examples[:MAX_EXAMPLES])
    names = {e.task.name for e in chosen}
    extra = sorted(
        (e for e in ctx.train if e.task.name not in names),
        key=lambda e: (e.status == "pass", e.score if e.score is not None else -1.0, e.task.name),
    )
    for e in extra:
        if len(chosen) >= MAX_EXAMPLES or (e.status == "pass" and len(chosen) >= MIN_EXAMPLES):
            break
        chosen.append(e)
    return chosen


@register_strategy("instructions:reflect", target="instructions", needs_model=True)
class ReflectInstructions:
    """Rewrite the whole instructions from the failures."""

    label = "instructions"

    async def propose(self, ctx: ProposalContext) -> Proposal:
        current = ctx.parent.instructions or ""
        examples = reflection_examples(ctx)
        if not examples:
            raise NoProposal("no train task has been run for this parent yet")
        start = (ctx.start.instructions or "") if ctx.start else current
        new = await rewrite_text(
            ctx,
            REPLY,
            template=TEMPLATE,
            data={"instructions": current or "(no instructions)", **render_examples(examples)},
            params={
                "count": len(examples),
                "tools": function_names(ctx.parent.tools),
                "skills": [s.name for s in ctx.parent.skills],
            },
            schema_name="improved_instructions",
            current=current,
            start=start,
            unchanged="the optimization model returned the instructions unchanged",
            all_leaked="every new line of the optimization model's reply quoted a task",
            # Room for instructions twice as long as today's (about 4 characters a token).
            string_tokens=max(MIN_REWRITE_TOKENS, len(current) // 2),
        )
        leaks = new.leaks
        mutation: dict[str, Any] = {"examples": [e.task.name for e in examples]}
        if leaks:
            mutation["leaks_dropped"] = leaks
        return Proposal(
            definition=ctx.parent.model_copy(update={"instructions": new.text}),
            strategy=self.label,
            rationale=one_line(new.rationale) or "rewrote the instructions from the failures",
            mutation=mutation,
        )
