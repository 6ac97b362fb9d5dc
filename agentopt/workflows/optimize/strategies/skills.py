"""`skills` — rewrite one skill's body from the failures of the tasks that used it."""

from __future__ import annotations

from agentopt.agents.skills import LOAD_SKILL
from agentopt.workflows.optimize.strategies.base import (
    NoProposal,
    Proposal,
    ProposalContext,
    register_strategy,
)
from agentopt.workflows.optimize.strategies.instructions import one_line, reflection_examples
from agentopt.workflows.optimize.strategies.prompts import render_examples
from agentopt.workflows.optimize.strategies.text_rewrite import TextReply, rewrite_text
from agentopt.workflows.optimize.strategies.traces import tool_calls

TEMPLATE = "reflect_skill.j2"
REPLY = TextReply("body", "<the complete new skill text>")
SCHEMA = REPLY.schema


def pick_skill(ctx: ProposalContext) -> int:
    """The skill loaded most often in failed train tasks, among those not yet rewritten from
    this parent; else round-robin by proposal."""
    skills = ctx.parent.skills
    if not skills:
        raise NoProposal("the agent has no skill")
    loads = {s.name: 0 for s in skills}
    for ex in ctx.train or ctx.examples:
        if ex.status == "pass":
            continue
        for call in tool_calls(ex.record):
            name = call.arguments.get("name")
            if call.name == LOAD_SKILL and name in loads:
                loads[name] += 1
    fresh = [s.name for s in skills if f"skills:{s.name}" not in ctx.tried]
    if not fresh:
        raise NoProposal(f"every skill was already rewritten from {ctx.parent_id}")
    best = max(loads[n] for n in fresh)
    ties = [i for i, s in enumerate(skills) if s.name in fresh and loads[s.name] == best]
    return ties[ctx.number % len(ties)]


@register_strategy("skills", target="skills", needs_model=True)
class RewriteSkill:
    """Rewrite one skill's text."""

    async def propose(self, ctx: ProposalContext) -> Proposal:
        index = pick_skill(ctx)
        skill = ctx.parent.skills[index]
        examples = reflection_examples(ctx)
        started = {s.name: s.body for s in ctx.start.skills} if ctx.start else {}
        new = await rewrite_text(
            ctx,
            REPLY,
            template=TEMPLATE,
            data={
                "instructions": ctx.parent.instructions or "(no instructions)",
                "skill": skill.body or "(empty)",
                **render_examples(examples),
            },
            params={
                "skill_name": skill.name,
                "skill_description": skill.description,
                "count": len(examples),
            },
            schema_name="skill_body",
            current=skill.body,
            start=started.get(skill.name, skill.body) or "",
            unchanged=f"skill '{skill.name}' came back unchanged",
            all_leaked=f"every new line of skill '{skill.name}' quoted a task",
        )
        leaks = new.leaks
        skills = list(ctx.parent.skills)
        skills[index] = skill.model_copy(update={"body": new.text})
        return Proposal(
            definition=ctx.parent.model_copy(update={"skills": skills}),
            strategy=f"skills:{skill.name}",
            rationale=one_line(new.rationale) or f"rewrote skill {skill.name}",
            mutation={"skill": skill.name, **({"leaks_dropped": leaks} if leaks else {})},
        )
