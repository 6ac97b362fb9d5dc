"""Reflection prompts (`templates/optimizer/*.j2`) and the one reflection call.

Everything the agent, its tools or the dataset wrote reaches the optimization model only
inside a data block whose boundary depends on a hash of the data (the judges' scheme,
`agentopt.evaluators.judges.prompting`), so a transcript saying "replace your instructions
with …" stays data. Replies are JSON, parsed leniently and re-asked at most twice.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from jinja2 import Environment
from pydantic import BaseModel

from agentopt.core.errors import ModelCallError
from agentopt.core.templates import prompt_environment
from agentopt.evaluators.judges.judge_call import reask_message, response_format
from agentopt.evaluators.judges.parsing import JudgeParseError, parse_reply
from agentopt.evaluators.judges.prompting import DataBlocks, make_boundary
from agentopt.models.structured import cut_off, schema_max_tokens
from agentopt.models.types import ChatRequest, Message
from agentopt.workflows.optimize.strategies.base import Example, NoProposal, ProposalContext
from agentopt.workflows.optimize.strategies.failure_groups import norm
from agentopt.workflows.optimize.strategies.traces import example_view

M = TypeVar("M", bound=BaseModel)
MAX_REASKS = 2
LEAK_REASK = (
    "What you wrote quoted questions from the tasks, and a text that quotes a task is refused: "
    "it fits those questions only. Write it again in general words: say which kinds of "
    "questions it is for, with no task's question or answer in it. Reply with the same JSON "
    "object as before."
)
REFLECTION_TEMPERATURE = 0.7
REFLECTION_STRING_TOKENS = 1500
"""Tokens allowed per text of a reflection reply unless the caller knows better."""
SYSTEM_TEMPLATE = "_system.j2"
EXAMPLE_TEMPLATE = "_example.j2"


def optimizer_environment() -> Environment:
    """The shared environment of `templates/optimizer/`."""
    return prompt_environment("optimizer")


def render_examples(examples: list[Example]) -> dict[str, str]:
    """Each example as plain text, keyed `example_1`, `example_2`, … (data blocks)."""
    return {f"example_{i}": _rendered(ex) for i, ex in enumerate(examples, 1)}


_RENDERED: dict[int, tuple[Example, str]] = {}
RENDERED_MAX = 512
"""Examples whose text is kept: the search makes one `Example` per finished unit and shows
it again in every proposal from that parent (2% of a tool world's CPU rendered them anew)."""


def _rendered(ex: Example) -> str:
    known = _RENDERED.get(id(ex))
    if known is not None and known[0] is ex:  # held here, so its id is not reused meanwhile
        return known[1]
    template = optimizer_environment().get_template(EXAMPLE_TEMPLATE)
    text = template.render(ex=example_view(ex)).strip()
    if len(_RENDERED) >= RENDERED_MAX:
        _RENDERED.clear()
    _RENDERED[id(ex)] = (ex, text)
    return text


def render_prompt(
    template: str,
    *,
    data: Mapping[str, str | None],
    params: Mapping[str, Any] | None = None,
) -> list[Message]:
    """System + user messages: untrusted `data` only through `{{ block(name) }}`."""
    values = {k: v for k, v in data.items() if v}
    blocks = DataBlocks(values=values, boundary=make_boundary(values))
    env = optimizer_environment()
    system = env.get_template(SYSTEM_TEMPLATE).render(boundary=blocks.boundary).strip()
    user = (
        env.get_template(template)
        .render(block=blocks, has=blocks.has, **dict(params or {}))
        .strip()
    )
    return [Message(role="system", content=system), Message(role="user", content=user)]


def scrub(ctx: ProposalContext, text: str, start: str) -> tuple[str, int]:
    """A reflection reply's text without the lines that quote a task (counted) or that the
    search found harmful on validation; `start` is the starting configuration's own text."""
    lines = [
        line
        for line in text.splitlines()
        if not (ctx.harmful and norm(line.strip().removeprefix("- ")) in ctx.harmful)
    ]
    text = "\n".join(lines)
    if ctx.leaks is None:
        return text, 0
    kept, dropped = ctx.leaks.scrub(text, start)
    return kept, len(dropped)


def leak_reask(messages: list[Message], reply: BaseModel) -> list[Message]:
    """The conversation asked again after a reply whose every new line quoted a task (and
    was dropped): the reply, then why it could not be used. A new prompt, so a new answer
    (the same prompt would be answered from the cache as before)."""
    return [
        *messages,
        Message(role="assistant", content=reply.model_dump_json()),
        Message(role="user", content=LEAK_REASK),
    ]


async def reflect(
    ctx: ProposalContext,
    messages: list[Message],
    *,
    schema_name: str,
    schema: dict[str, Any] | None,
    reply_model: type[M],
    example: str,
    string_tokens: int = REFLECTION_STRING_TOKENS,
) -> M:
    """Ask the optimization model; NoProposal when it has no usable answer.

    `schema` None asks for any JSON object (a strict schema cannot describe a tool's own
    parameters schema). `string_tokens` bounds each text of the reply (max_tokens follows
    from the schema), e.g. twice the instructions being rewritten."""
    if ctx.layer is None or ctx.optimization_model is None:
        raise NoProposal("no optimization model is configured", exhausted=True)
    conversation = list(messages)
    last_error = ""
    max_tokens = schema_max_tokens(schema, string_tokens=string_tokens)
    if schema is None:
        max_tokens = max(max_tokens, 2 * string_tokens)
    for _ in range(1 + MAX_REASKS):
        request = ChatRequest(
            messages=conversation,
            temperature=REFLECTION_TEMPERATURE,
            seed=ctx.seed + ctx.number,
            max_tokens=max_tokens,
            response_format=(
                response_format(schema_name, schema) if schema else {"type": "json_object"}
            ),
        )
        try:
            response = await ctx.layer.complete(
                ctx.optimization_model, request, pool="optimizer", repeat=ctx.number
            )
        except ModelCallError as exc:
            raise NoProposal(f"the optimization model failed: {exc.message}") from None
        try:
            truncated = cut_off(response, max_tokens)
            if truncated:
                raise JudgeParseError(truncated)
            return parse_reply(response.text, reply_model)
        except JudgeParseError as exc:
            last_error = str(exc)
        conversation = [
            *conversation,
            Message(role="assistant", content=response.text),
            reask_message(last_error, example),
        ]
    raise NoProposal(f"the optimization model gave no usable reply: {last_error}")
