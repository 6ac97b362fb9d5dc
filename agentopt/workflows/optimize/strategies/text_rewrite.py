"""One reflection call that rewrites one text (the instructions, a skill's body), shared by
the strategies whose reply is that text and a rationale: the same reply schema, the same
scrubbing of lines that quote a task, the same refusal of an unchanged text."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from pydantic import ConfigDict, Field, create_model

from agentopt.core.lazy_model import LazyModel
from agentopt.workflows.optimize.strategies.base import NoProposal, ProposalContext
from agentopt.workflows.optimize.strategies.prompts import (
    REFLECTION_STRING_TOKENS,
    reflect,
    render_prompt,
    scrub,
)


class Reply(LazyModel):
    model_config = ConfigDict(extra="ignore")

    rationale: str = ""


@dataclass(frozen=True)
class TextReply:
    """The JSON a reply of `field` + `rationale` must be: schema, example, parsing model."""

    field: str
    placeholder: str

    @property
    def schema(self) -> dict[str, Any]:
        return {
            "type": "object",
            "properties": {self.field: {"type": "string"}, "rationale": {"type": "string"}},
            "required": [self.field, "rationale"],
            "additionalProperties": False,
        }

    @property
    def example(self) -> str:
        return f'{{"{self.field}": "{self.placeholder}", "rationale": "<one line>"}}'

    def model(self) -> type[Reply]:
        return _reply_model(self.field)


@cache
def _reply_model(field: str) -> type[Reply]:
    """Built once per field: a pydantic model built at each reflection call was ~1% of an
    optimize run's CPU on the bench's tool worlds."""
    text: Any = (str, Field(min_length=1))
    return create_model(f"{field.title()}Reply", __base__=Reply, **{field: text})


@dataclass(frozen=True)
class Rewritten:
    text: str
    rationale: str
    leaks: int


async def rewrite_text(
    ctx: ProposalContext,
    reply: TextReply,
    *,
    template: str,
    data: Mapping[str, str | None],
    params: Mapping[str, Any],
    schema_name: str,
    current: str,
    start: str,
    unchanged: str,
    all_leaked: str,
    string_tokens: int = REFLECTION_STRING_TOKENS,
) -> Rewritten:
    """Ask for the new text; NoProposal (`unchanged`, or `all_leaked` when dropping the lines
    that quote a task left nothing new) when it equals `current`. `start` is the starting
    configuration's own text, which is never a leak."""
    answer = await reflect(
        ctx,
        render_prompt(template, data=data, params=params),
        schema_name=schema_name,
        schema=reply.schema,
        reply_model=reply.model(),
        example=reply.example,
        string_tokens=string_tokens,
    )
    text, leaks = scrub(ctx, str(getattr(answer, reply.field)).strip(), start)
    text = text.strip()
    if text == current.strip() or not text:
        raise NoProposal(f"{all_leaked} ({leaks})" if leaks else unchanged, leaks=leaks, empty=True)
    return Rewritten(text, answer.rationale, leaks)
