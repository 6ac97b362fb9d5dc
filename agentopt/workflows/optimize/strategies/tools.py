"""`tools` — rewrite the description of one tool and of its parameters.

The tool chosen is the one whose misuse shows most in the parent's traces (failed calls,
calls in failed tasks, judges naming it), and the reflection model reads those traces first.
A tool the agent confused it with (it called one where the judge says the task needed the
other) is rewritten in the same proposal: the confusion lives between two descriptions, and
rewriting one leaves the other still claiming the same tasks.
Only description texts may change: a reply that renames the tool or
a parameter, changes a type, an enum or the required list is rejected, because the code that
implements the tool would no longer match what the model is told.
"""

from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass
from typing import Any

from pydantic import ConfigDict

from agentopt.core.lazy_model import LazyModel
from agentopt.workflows.optimize.strategies.base import (
    Example,
    MutationRejected,
    NoProposal,
    Proposal,
    ProposalContext,
    register_strategy,
)
from agentopt.workflows.optimize.strategies.instructions import (
    MAX_EXAMPLES,
    function_names,
    one_line,
    reflection_examples,
)
from agentopt.workflows.optimize.strategies.prompts import (
    leak_reask,
    reflect,
    render_examples,
    render_prompt,
    scrub,
)
from agentopt.workflows.optimize.strategies.traces import failed_checks, tool_calls

TEMPLATE = "reflect_tool.j2"
EXAMPLE = (
    '{"tool": {"name": "<same name>", "description": "<new>", "parameters": {<same schema, new '
    'descriptions>}}, "rationale": "<one line>"}'
)


class ToolReply(LazyModel):
    model_config = ConfigDict(extra="ignore")

    tool: dict[str, Any]
    rationale: str = ""


def _without_descriptions(schema: Any, names: bool = False) -> Any:
    # `names`: a `properties` map, whose keys are parameter names — one may be "description".
    if isinstance(schema, dict):
        return {
            k: _without_descriptions(v, k == "properties" and not names)
            for k, v in schema.items()
            if names or k != "description"
        }
    if isinstance(schema, list):
        return [_without_descriptions(v) for v in schema]
    return schema


def structure_problems(original: dict[str, Any], proposed: dict[str, Any]) -> list[str]:
    """What a proposed function definition changed besides descriptions (empty = fine).

    Both are `function` objects: `{name, description, parameters}`.
    """
    problems: list[str] = []
    name = original.get("name")
    if proposed.get("name") != name:
        problems.append(f"the tool was renamed from '{name}' to '{proposed.get('name')}'")
    before = original.get("parameters") or {}
    after = proposed.get("parameters") or {}
    if not isinstance(after, dict):
        return [*problems, "`parameters` is not a JSON schema object"]
    props_a = before.get("properties") or {}
    props_b = after.get("properties") or {}
    for missing in sorted(set(props_a) - set(props_b)):
        problems.append(f"parameter '{missing}' was removed or renamed")
    for added in sorted(set(props_b) - set(props_a)):
        problems.append(f"parameter '{added}' was added")
    for key in sorted(set(props_a) & set(props_b)):
        a, b = props_a[key], props_b[key]
        if isinstance(a, dict) and isinstance(b, dict) and a.get("type") != b.get("type"):
            problems.append(
                f"parameter '{key}' changed type from {a.get('type')!r} to {b.get('type')!r}"
            )
    if sorted(before.get("required") or []) != sorted(after.get("required") or []):
        problems.append("the list of required parameters changed")
    if not problems and _without_descriptions(before) != _without_descriptions(after):
        problems.append("the parameters schema changed beyond its descriptions")
    return problems


def apply_descriptions(original: dict[str, Any], proposed: dict[str, Any]) -> dict[str, Any]:
    """The original function with the proposed description texts (structure kept as is)."""
    out = copy.deepcopy(original)

    def merge(target: Any, source: Any) -> None:
        if not isinstance(target, dict) or not isinstance(source, dict):
            return
        if isinstance(source.get("description"), str):
            target["description"] = source["description"].strip()
        for key, value in target.items():
            if key != "description" and key in source:
                merge(value, source[key])

    merge(out, proposed)
    return out


def _names(name: str, text: str) -> bool:
    """`text` names the tool `name` as a word (`search` is not named by `search_web`)."""
    return re.search(rf"(?<![A-Za-z0-9_-]){re.escape(name)}(?![A-Za-z0-9_-])", text) is not None


def _named_in_failures(name: str, ex: Example) -> bool:
    """A judge's reason for a failed check names the tool ("… needs get_order")."""
    return ex.status != "pass" and any(
        _names(name, check.reason) for check in failed_checks(ex.record)
    )


def _confused(a: str, b: str, ex: Example) -> bool:
    """In this failed task the agent called one of the two tools and not the other, and a
    judge's reason names the one it did not call (the reason says which tool was needed)."""
    called = {c.name for c in tool_calls(ex.record)}
    reasons = " ".join(check.reason for check in failed_checks(ex.record))
    return any(
        used in called and needed not in called and _names(needed, reasons)
        for used, needed in ((a, b), (b, a))
    )


def confused_with(name: str, others: list[str], examples: list[Example]) -> list[str]:
    """The tools of `others` the agent took for `name`, or `name` for (in `others`' order)."""
    failed = [ex for ex in examples if ex.status != "pass"]
    return [other for other in others if any(_confused(name, other, ex) for ex in failed)]


def rewritten_tools(tried: list[str]) -> set[str]:
    """Tools already rewritten from a parent, read from its children's strategies
    (`tools:get_order`, or `tools:get_order+search_web` for a confused pair)."""
    names: set[str] = set()
    for strategy in tried:
        if strategy.startswith("tools:"):
            names.update(strategy.removeprefix("tools:").split("+"))
    return names


def tool_evidence(name: str, examples: list[Example]) -> int:
    """How strongly the traces point at a tool: failed calls weigh 2, calls in failed tasks 1,
    a failed task whose judge names the tool 2."""
    weight = 0
    for ex in examples:
        for call in tool_calls(ex.record):
            if call.name != name:
                continue
            weight += 2 if call.error else (1 if ex.status != "pass" else 0)
        weight += 2 if _named_in_failures(name, ex) else 0
    return weight


def tool_examples(name: str, ctx: ProposalContext) -> list[Example]:
    """What the reflection model reads for one tool: the failed tasks that show its misuse
    (they called it, or their judge names it) first, then the usual weakest train tasks."""
    known = {e.task.name: e for e in [*ctx.examples, *ctx.train]}
    relevant = [
        e
        for e in known.values()
        if e.status != "pass"
        and (_named_in_failures(name, e) or any(c.name == name for c in tool_calls(e.record)))
    ]
    relevant.sort(key=lambda e: (not _named_in_failures(name, e), e.task.name))
    chosen = relevant[:MAX_EXAMPLES]
    names = {e.task.name for e in chosen}
    for e in reflection_examples(ctx):
        if len(chosen) >= MAX_EXAMPLES:
            break
        if e.task.name not in names:
            chosen.append(e)
            names.add(e.task.name)
    return chosen


def ranked_tools(ctx: ProposalContext) -> list[str]:
    """Tools not yet rewritten from this parent, most evidence first; equal evidence is
    rotated by the proposal number, so successive proposals start from different tools."""
    names = [n for n in function_names(ctx.parent.tools)]
    if not names:
        raise NoProposal("the agent has no function tool")
    done = rewritten_tools(ctx.tried)
    fresh = [n for n in names if n not in done]
    if not fresh:
        raise NoProposal(f"every tool was already rewritten from {ctx.parent_id}")
    evidence = {n: tool_evidence(n, ctx.train or ctx.examples) for n in fresh}
    shift = ctx.number % len(fresh)
    rotated = fresh[shift:] + fresh[:shift]
    return sorted(rotated, key=lambda n: -evidence[n])  # stable: the rotation breaks ties


@register_strategy("tools", target="tools", needs_model=True)
class RewriteTool:
    """Rewrite one tool's descriptions from how the agent (mis)used it."""

    async def propose(self, ctx: ProposalContext) -> Proposal:
        # A tool whose rewrite comes back unchanged (the reflection model found nothing to
        # say about it) costs one reflection call and no screening: the next tool by
        # evidence is asked in the same proposal. Before, the proposal ended there, and
        # when two tools were equally implicated the one at fault could wait for a later
        # turn of the rotation that never came (the `tool-descriptions` bench world).
        ranked = ranked_tools(ctx)
        unchanged: list[str] = []
        refused: list[str] = []
        leaks = 0
        for tool_name in ranked:
            try:
                first = await self._rewrite(ctx, ctx.parent.tools, tool_name)
            except MutationRejected as exc:
                if tool_name == ranked[0]:
                    raise
                refused.append(exc.reason)  # a fallback's bad reply: the next tool is asked
                continue
            except NoProposal as exc:  # every new line quoted a task: as unchanged, counted
                if not exc.leaks:
                    raise
                leaks += exc.leaks
                first = None
            if first is not None:
                others = [n for n in ranked if n != tool_name and n not in unchanged]
                proposal = await self._with_partner(ctx, tool_name, first, others)
                if leaks:
                    dropped = proposal.mutation.get("leaks_dropped", 0) + leaks
                    proposal.mutation["leaks_dropped"] = dropped
                return proposal
            unchanged.append(tool_name)
        names = ", ".join(f"'{n}'" for n in unchanged)
        reason = f"the descriptions of tool {names} came back unchanged"
        if leaks:
            reason += f" once the lines quoting a task were dropped ({leaks})"
        raise NoProposal("; ".join([reason, *refused]), leaks=leaks, empty=not refused)

    async def _with_partner(
        self, ctx: ProposalContext, tool_name: str, first: _Rewrite, others: list[str]
    ) -> Proposal:
        """The proposal for `tool_name`, with the tool of `others` it was confused with
        rewritten too (one more reflection call; its refusal or unchanged reply leaves the
        first rewrite alone)."""
        rewrites = {tool_name: first}
        for partner in confused_with(tool_name, others, ctx.train or ctx.examples)[:1]:
            try:
                second = await self._rewrite(ctx, first.tools, partner)
            except MutationRejected:
                second = None
            if second is not None:
                rewrites[partner] = second
        last = list(rewrites.values())[-1]
        described = {n: r.description for n, r in rewrites.items()}
        mutation: dict[str, Any] = {"tool": tool_name, "description": first.description}
        if len(rewrites) > 1:
            mutation["descriptions"] = described
        leaks = sum(r.leaks for r in rewrites.values())
        if leaks:
            mutation["leaks_dropped"] = leaks
        return Proposal(
            definition=ctx.parent.model_copy(update={"tools": last.tools}),
            strategy="tools:" + "+".join(rewrites),
            rationale="; ".join(r.rationale for r in rewrites.values()),
            mutation=mutation,
        )

    async def _rewrite(
        self, ctx: ProposalContext, current: list[dict[str, Any]], tool_name: str
    ) -> _Rewrite | None:
        """`current` with `tool_name`'s descriptions rewritten (None: nothing changed)."""
        index = next(
            i
            for i, t in enumerate(current)
            if t.get("type") == "function" and t["function"].get("name") == tool_name
        )
        original = current[index]["function"]
        examples = tool_examples(tool_name, ctx)
        data = {
            "instructions": ctx.parent.instructions or "(no instructions)",
            "tool": json.dumps(original, indent=2, ensure_ascii=False),
            **render_examples(examples),
        }
        messages = render_prompt(
            TEMPLATE,
            data=data,
            params={
                "tool_name": tool_name,
                "tools": function_names(current),
                "count": len(examples),
            },
        )
        leaks = 0
        for attempt in range(2):  # a reply that only quoted tasks is asked again, once
            reply = await reflect(
                ctx,
                messages,
                schema_name="tool_description",
                schema=None,
                reply_model=ToolReply,
                example=EXAMPLE,
            )
            proposed = reply.tool.get("function", reply.tool)
            problems = structure_problems(original, proposed)
            if problems:
                raise MutationRejected(
                    f"tool '{tool_name}' rewrite rejected: "
                    + "; ".join(problems)
                    + " (only descriptions may change)"
                )
            updated = apply_descriptions(original, proposed)
            dropped = _scrub_descriptions(ctx, updated, original)
            leaks += dropped
            if attempt or updated != original or not dropped:
                break
            messages = leak_reask(messages, reply)
        if updated == original:
            if leaks:
                raise NoProposal(f"the rewrite of tool '{tool_name}' quoted a task", leaks=leaks)
            return None
        tools = copy.deepcopy(current)
        tools[index] = {**tools[index], "function": updated}
        rationale = one_line(reply.rationale) or f"rewrote the description of {tool_name}"
        return _Rewrite(tools, str(updated.get("description", "")), rationale, leaks)


def _scrub_descriptions(ctx: ProposalContext, updated: Any, original: Any) -> int:
    """Drop the lines of each rewritten description that quote a task (a description left
    empty gets its original text back); how many lines were dropped."""
    if not isinstance(updated, dict) or not isinstance(original, dict):
        return 0
    dropped = 0
    start = "\n".join(_start_descriptions(ctx))
    before = original.get("description")
    text = updated.get("description")
    if isinstance(text, str) and text != before:
        kept, n = scrub(ctx, text, start)
        dropped += n
        updated["description"] = kept.strip() or before or ""
    for key, value in updated.items():
        if key != "description":
            dropped += _scrub_descriptions(ctx, value, original.get(key))
    return dropped


def _start_descriptions(ctx: ProposalContext) -> list[str]:
    def walk(node: Any) -> list[str]:
        if isinstance(node, dict):
            own = [node["description"]] if isinstance(node.get("description"), str) else []
            return own + [t for k, v in node.items() if k != "description" for t in walk(v)]
        if isinstance(node, list):
            return [t for v in node for t in walk(v)]
        return []

    return walk(ctx.start.tools if ctx.start else ctx.parent.tools)


@dataclass(frozen=True)
class _Rewrite:
    """One tool's accepted rewrite: the whole tool list with it applied."""

    tools: list[dict[str, Any]]
    description: str
    rationale: str
    leaks: int = 0
