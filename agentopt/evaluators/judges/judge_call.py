"""One judge call with structured output, lenient parsing and at most two re-asks.

The request asks for JSON through `response_format`; the call layer turns that into what the
server accepts (the structured-output ladder, `agentopt.models.structured`), and the reply is
validated by the same reply model whatever mode was used. The request is bounded by the most
tokens its schema needs; a reply cut off there (`finish_reason: length`) is one parse error at
once (`judgeParseFailed`): asked again at temperature 0 with the same cap, a small model that ran
on runs on again, so a re-ask only costs another full-length reply. A reply that does not parse
or has the wrong shape is answered with the problem quoted, at most `MAX_REASKS` times; then
the verdict is an error (`judgeParseFailed`). A call that fails in the call layer is an
error too (`judgeUnavailable`). Never a guessed score.

Every judge's free-text `reason` is bounded (`JUDGE_TEXT_CHARS`) for every provider: as
`maxLength` in the schema (kept where the server's grammar takes it, said in words where the
strict dialect drops it, `agentopt.models.schema_dialect`), and cut to that length on our side,
so a small model cannot spend its whole token budget inside a reason. The parsed reply is then
checked against the full schema the caller wrote (`reply_problems`: enums, pinned entries read
by key, counts), whatever subset of it the server enforced; a breach is quoted back like a
parse error.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from pydantic import BaseModel

from agentopt.contracts.eval_result import EvalCost, EvalError, EvalResult
from agentopt.core.errors import ModelCallError
from agentopt.core.redaction import redact
from agentopt.evaluators.judges.parsing import JudgeParseError, parse_reply
from agentopt.models.providers.local_tools import capped_strings
from agentopt.models.schema_dialect import reply_problems, schema_text
from agentopt.models.structured import cut_off, schema_max_tokens
from agentopt.models.types import ChatRequest, Message, Pool

if TYPE_CHECKING:
    from agentopt.models.call import CallLayer

M = TypeVar("M", bound=BaseModel)

MAX_REASKS = 2
# A failed judge call, by kind, as the M365 output schema categorizes it.
_JUDGE_CODES = {
    "auth": "judgeAuthenticationError",
    "rate_limit": "judgeRateLimited",
    "quota": "judgeRateLimited",
    "timeout": "judgeTimeout",
    "deadline": "judgeTimeout",
}
JUDGE_TEXT_CHARS = 400
"""A judge's reason is capped at this many characters (a grammar-decoded judge's other free
texts too): a small model's reason otherwise runs on until max_tokens and the verdict is lost
with it."""
REASON_KEY = "reason"
JUDGE_SEED = 42
"""Fixed seed for every judge call (providers that support seeds are then reproducible)."""


@dataclass
class JudgeOutcome(Generic[M]):
    """The parsed verdict, or the error, plus what it cost.

    Attributes:
        value: the validated reply, None on error.
        error: why there is no verdict (code judgeUnavailable or judgeParseFailed).
        cost: judge tokens (and dollars) over every attempt.
        attempts: calls made (1 = first reply was fine; 3 = two re-asks).
    """

    value: M | None = None
    error: EvalError | None = None
    cost: EvalCost = field(default_factory=EvalCost)
    attempts: int = 0
    raw: list[str] = field(default_factory=list)

    def error_result(self, evaluator: str, **details: Any) -> EvalResult:
        assert self.error is not None
        return EvalResult(
            evaluator=evaluator,
            status="error",
            error=self.error,
            cost=self.cost,
            details={"attempts": self.attempts, **details},
        )


def entries_schema(array: str, fields: dict[str, Any]) -> dict[str, Any]:
    """The reply schema of a judge that answers one entry per item (criterion, rubric
    dimension, expected item): an object holding the list `array` of objects with exactly
    `fields`, all required."""
    return {
        "type": "object",
        "properties": {
            array: {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": fields,
                    "required": list(fields),
                    "additionalProperties": False,
                },
            }
        },
        "required": [array],
        "additionalProperties": False,
    }


def named_entries(
    schema: dict[str, Any], array: str, key: str, names: list[str], *, exact_count: bool = False
) -> dict[str, Any]:
    """An `entries_schema` with each entry's `key` restricted to `names`: a grammar-constrained
    judge (the embedded model) can then only name real items, and a remote one is told them.
    `exact_count` (grammar-constrained judges only; strict remote modes may refuse array
    bounds) also fixes the entries to one per name, in order (`pin_entries`). A fresh copy
    each call, built once (a judge asks for the same names every time)."""
    return json.loads(  # type: ignore[no-any-return]
        _named_entries_text(schema_text(schema), array, key, tuple(names), exact_count)
    )


@lru_cache(maxsize=256)
def _named_entries_text(
    schema: str, array: str, key: str, names: tuple[str, ...], exact_count: bool
) -> str:
    out = json.loads(schema)
    entries = out["properties"][array]
    entries["items"]["properties"][key] = {"type": "string", "enum": list(names)}
    if exact_count:
        pin_entries(entries, key, list(names))
    return schema_text(out)


def pin_entries(array_schema: dict[str, Any], key: str, values: list[str]) -> None:
    """Turn an array schema into a tuple with one entry per value, in order, each with `key`
    fixed to it (`prefixItems` + `const`, exactly that many items). Only for grammar-decoded
    judges: the grammar then cannot skip, repeat or invent an entry. (No `items: false`:
    llama.cpp's server refuses a boolean schema there.)"""
    template = array_schema.pop("items")
    entries = []
    for value in values:
        entry = copy.deepcopy(template)
        entry["properties"][key] = {"const": value}
        entries.append(entry)
    array_schema["prefixItems"] = entries
    array_schema["minItems"] = array_schema["maxItems"] = len(values)


def sent_schema(schema: dict[str, Any], *, grammar: bool) -> tuple[dict[str, Any], int]:
    """The schema a judge call sends (reasons capped; every free string too for a
    grammar-decoded judge) and the most tokens its reply needs: a fresh copy each call, worked
    out once per schema (a judge sends the same one on every call; the walks took ~20 µs a
    call)."""
    text, max_tokens = _sent_text(schema_text(schema), grammar)
    return json.loads(text), max_tokens


@lru_cache(maxsize=256)
def _sent_text(schema: str, grammar: bool) -> tuple[str, int]:
    sent, max_tokens = _sent(json.loads(schema), grammar)
    return schema_text(sent), max_tokens


def _sent(schema: dict[str, Any], grammar: bool) -> tuple[dict[str, Any], int]:
    sent = capped_reasons(schema)
    if grammar:
        sent = capped_strings(sent, JUDGE_TEXT_CHARS)
    return sent, schema_max_tokens(sent)


def capped_reasons(schema: Any, limit: int = JUDGE_TEXT_CHARS) -> Any:
    """A copy of `schema` where every free-string `reason` property gets `maxLength: limit`."""
    if isinstance(schema, list):
        return [capped_reasons(s, limit) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: capped_reasons(v, limit) for k, v in schema.items()}
    props = out.get("properties")
    if not isinstance(props, dict):
        return out
    reason = props.get(REASON_KEY)
    if isinstance(reason, dict) and reason.get("type") == "string" and "maxLength" not in reason:
        props[REASON_KEY] = {**reason, "maxLength": limit}
    return out


def cut_reasons(value: M, limit: int = JUDGE_TEXT_CHARS) -> M:
    """`value` with every `reason` longer than `limit` cut to it (on our side, whatever the
    server enforced)."""
    update: dict[str, Any] = {}
    for name in type(value).model_fields:
        item = getattr(value, name)
        if name == REASON_KEY and isinstance(item, str) and len(item) > limit:
            update[name] = item[: limit - 1].rstrip() + "…"
        elif isinstance(item, BaseModel):
            update[name] = cut_reasons(item, limit)
        elif isinstance(item, list) and any(isinstance(i, BaseModel) for i in item):
            update[name] = [cut_reasons(i, limit) if isinstance(i, BaseModel) else i for i in item]
    return value.model_copy(update=update) if update else value


def schema_problem(value: BaseModel, schema: dict[str, Any]) -> str | None:
    """What in the parsed reply breaks the caller's full schema (read by key), or None."""
    problems = reply_problems(_stripped(value.model_dump(mode="json")), schema)
    if not problems:
        return None
    return "the JSON breaks its schema: " + "; ".join(problems)


def _stripped(value: Any) -> Any:
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, list):
        return [_stripped(v) for v in value]
    if isinstance(value, dict):
        return {k: _stripped(v) for k, v in value.items()}
    return value


def response_format(name: str, schema: dict[str, Any]) -> dict[str, Any]:
    """The chat-completions structured-output request for `schema`."""
    return {"type": "json_schema", "json_schema": {"name": name, "schema": schema, "strict": True}}


def reask_message(error: str, example: str) -> Message:
    """The follow-up after an unreadable reply: quotes the error, restates the format."""
    return Message(
        role="user",
        content=(
            f"Your previous reply could not be used: {error}.\n"
            f"Reply again with only one JSON object of this form, and nothing else:\n{example}"
        ),
    )


async def call_judge(
    layer: CallLayer,
    model: str,
    messages: list[Message],
    *,
    schema_name: str,
    schema: dict[str, Any],
    reply_model: type[M],
    example: str,
    check: Callable[[M], str | None] | None = None,
    repeat: int = 0,
    pool: Pool = "judge",
    role: str = "judge",
    seed: int = JUDGE_SEED,
    temperature: float = 0.0,
) -> JudgeOutcome[M]:
    """Ask the judge and return its validated reply (or the reason there is none).

    Args:
        layer: the call layer (`agentopt.models.call.CallLayer`); calls use pool "judge".
        model: the judge model name.
        messages: the rendered prompt (system + user).
        schema_name, schema: the JSON schema sent as structured output.
        reply_model: pydantic model that validates the reply's shape.
        example: the JSON shape quoted when re-asking.
        check: further validation needing context (e.g. one verdict per criterion); returns
            the problem, quoted back to the judge like a parse error, or None.
        repeat: the run's repeat index (so repeats are separate cache entries).
        pool, role: the call layer pool and the caller's name in messages; other structured
            callers (the simulated user: pool "simulator") take the same path as judges.
        seed, temperature: sampling (judges: temperature 0 and the fixed `JUDGE_SEED`).
    """
    outcome: JudgeOutcome[M] = JudgeOutcome()
    conversation = list(messages)
    schema, max_tokens = sent_schema(schema, grammar=layer.grammar_decoded(model))
    for _ in range(1 + MAX_REASKS):
        request = ChatRequest(
            messages=conversation,
            temperature=temperature,
            seed=seed,
            max_tokens=max_tokens,
            response_format=response_format(schema_name, schema),
        )
        try:
            response = await layer.complete(model, request, pool=pool, repeat=repeat)
        except ModelCallError as exc:
            outcome.error = EvalError(
                code=_JUDGE_CODES.get(exc.kind, "judgeUnavailable"),
                message=redact(f"{role} {model} failed: {exc.message}"),
            )
            return outcome
        outcome.attempts += 1
        outcome.cost = EvalCost(
            input_tokens=outcome.cost.input_tokens + response.usage.input_tokens,
            output_tokens=outcome.cost.output_tokens + response.usage.output_tokens,
            cost_usd=outcome.cost.cost_usd + response.cost_usd,
        )
        text = response.text
        outcome.raw.append(text)
        truncated = cut_off(response, max_tokens)
        if truncated:
            last_error = truncated
            break
        try:
            value = cut_reasons(parse_reply(text, reply_model))
            problem = schema_problem(value, schema) or (check(value) if check else None)
            if problem is None:
                outcome.value = value
                return outcome
            last_error = problem
        except JudgeParseError as exc:
            last_error = str(exc)
        conversation = [
            *conversation,
            Message(role="assistant", content=text),
            reask_message(last_error, example),
        ]
    outcome.error = EvalError(
        code="judgeParseFailed",
        message=f"{role} {model} gave no usable "
        f"{'verdict' if role == 'judge' else 'reply'} after {outcome.attempts} attempts: "
        f"{last_error}",
    )
    return outcome
