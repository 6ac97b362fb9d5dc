"""The entailment judge behind RetrievalResult: is each expected item supported by what the
agent's retrieval returned?

One call per sample, one verdict per undecided item (items found verbatim never reach the
judge). Each hit is its own fenced data block, so a retrieved document can neither give the
judge instructions nor pose as another hit; the judge names the best-ranked supporting hit by
number, which we map back to its rank and URL.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pydantic import ConfigDict, Field, field_validator

from agentopt.core.lazy_model import LazyModel
from agentopt.evaluators.deterministic.retrieval_executions import Hit
from agentopt.evaluators.judges.judge_base import strict_bool
from agentopt.evaluators.judges.judge_call import JudgeOutcome, call_judge, entries_schema
from agentopt.evaluators.judges.parsing import entries_problem
from agentopt.evaluators.judges.prompting import render_messages
from agentopt.evaluators.options import no_bool

if TYPE_CHECKING:
    from agentopt.models.call import CallLayer

TEMPLATE = "entailment.j2"
MAX_HIT_CHARS = 4000
"""Longer hit texts are cut (with a note) to keep the prompt bounded."""
EXAMPLE = (
    '{"verdicts": [{"id": "<item id>", "supported": true, "hit": <hit number or null>, '
    '"reason": "<one sentence>"}]}'
)
SCHEMA = entries_schema(
    "verdicts",
    {
        "id": {"type": "string"},
        "supported": {"type": "boolean"},
        "hit": {"type": ["integer", "null"]},
        "reason": {"type": "string"},
    },
)


@dataclass(frozen=True)
class Claim:
    """An expected item put to the judge: `id` is how its verdict refers back to it."""

    id: str
    text: str


class ClaimVerdict(LazyModel):
    """The judge's verdict on one expected item."""

    model_config = ConfigDict(extra="ignore")

    id: str
    """The item's id, as given in the prompt."""
    supported: bool
    """True when some hit supports the item."""
    hit: int | None = None
    """Number of the best-ranked supporting hit (None when unsupported or not named)."""
    reason: str = ""
    """One sentence of justification."""

    _strict_bool = field_validator("supported", mode="before")(strict_bool)
    _no_bool = field_validator("hit", mode="before")(no_bool("a hit number or null"))


class EntailmentReply(LazyModel):
    """The entailment judge's reply."""

    model_config = ConfigDict(extra="ignore")

    verdicts: list[ClaimVerdict] = Field(min_length=1)
    """One verdict per expected item."""


def _checker(claims: Sequence[Claim], n_hits: int) -> Callable[[EntailmentReply], str | None]:
    wanted = [c.id for c in claims]

    def check(reply: EntailmentReply) -> str | None:
        problem = entries_problem([v.id.strip() for v in reply.verdicts], wanted, "items")
        if problem:
            return problem
        for v in reply.verdicts:
            if v.supported and v.hit is not None and not 1 <= v.hit <= n_hits:
                return f"item {v.id!r} names hit {v.hit}, but the hits are numbered 1 to {n_hits}"
        return None

    return check


def _cut(text: str) -> str:
    if len(text) <= MAX_HIT_CHARS:
        return text
    return text[:MAX_HIT_CHARS] + f"… [cut: {len(text) - MAX_HIT_CHARS} more chars]"


async def judge_entailment(
    layer: CallLayer,
    model: str,
    claims: Sequence[Claim],
    hits: Sequence[Hit],
    *,
    repeat: int = 0,
) -> JudgeOutcome[EntailmentReply]:
    """Ask the judge which claims the hits support; hits are numbered 1..n in the given order.

    Args:
        layer: the call layer (pool "judge").
        model: the judge model.
        claims: the expected items still undecided (verbatim matches are not asked).
        hits: the retrieved hits within max_rank, best rank first.
        repeat: the run's repeat index (separate cache entries per repeat).
    """
    data = {f"hit_{i}": _cut(h.text) for i, h in enumerate(hits, start=1)}
    params = {
        "hits": [
            {"number": i, "rank": h.rank, "block": f"hit_{i}"} for i, h in enumerate(hits, start=1)
        ],
        "claims": [Claim(id=c.id, text=" ".join(c.text.split())) for c in claims],
    }
    return await call_judge(
        layer,
        model,
        render_messages(TEMPLATE, data=data, params=params),
        schema_name="retrieval_entailment",
        schema=SCHEMA,
        reply_model=EntailmentReply,
        example=EXAMPLE,
        check=_checker(claims, len(hits)),
        repeat=repeat,
    )
