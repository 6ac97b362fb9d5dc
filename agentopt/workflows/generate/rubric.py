"""The rubric of `eval generate` (files.md §5.1): 4–8 dimensions derived from the instruction,
exactly one weighted 8–10, the others 1–6, plus `general_quality` (always applicable).

Generators get the form right more often than the numbers, so the reply is repaired where the
intent is clear — ids made snake_case and unique, weights clamped to the rule (the highest one
becomes the single 8–10 dimension) — and re-asked, quoting the problem, only when it is not:
no JSON, too few usable dimensions. The result is validated with the rubric loader itself.
The embedded model writes only descriptions and weights; the ids are made from the
descriptions (a 135M model gives one id to several dimensions, or none that means anything).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agentopt.core.errors import ModelCallError
from agentopt.core.files.rubric import GENERAL_QUALITY_ID, RubricDimension, parse_rubric
from agentopt.evaluators.judges.parsing import JudgeParseError, extract_json_object
from agentopt.models.structured import cut_off
from agentopt.models.types import ChatRequest, Message
from agentopt.workflows.generate.dedupe import key_words, normalize_text
from agentopt.workflows.generate.prompts import AgentContext, render_messages
from agentopt.workflows.generate.schemas import grammar_decoded, rubric_schema
from agentopt.workflows.generate.validate import snake_case

if TYPE_CHECKING:
    from agentopt.models.call import CallLayer

MIN_DIMENSIONS = 4
MAX_DIMENSIONS = 8
TOP_WEIGHT = (8, 10)
OTHER_WEIGHT = (1, 6)
GENERAL_QUALITY = RubricDimension(
    id=GENERAL_QUALITY_ID,
    description="Other important quality factors not already covered.",
    weight=5,
    always_applicable=True,
)
MAX_REASKS = 2
ID_WORDS = 3
"""Words of the description that make an id when the ids come from the descriptions."""
TEMPERATURE = 0.2
EMBEDDED_TEMPERATURE = 0.8
"""At low temperature the embedded 135M model repeats one dimension until the list is full."""
EMBEDDED_MAX_DIMENSIONS = 6
"""A shorter reply for the embedded model (slow, and it drifts in long ones)."""
EXAMPLE = '{"dimensions": [{"id": "snake_case_id", "description": "...", "weight": 10}]}'

RUBRIC_SCHEMA: dict[str, Any] = rubric_schema()
"""The portable schema (the embedded model gets `rubric_schema(bounded=True)`)."""


class RubricRejected(ValueError):
    """A generated rubric that cannot be repaired; the message is quoted back when re-asking."""


def repair_rubric(data: Any, *, ids_from_descriptions: bool = False) -> list[RubricDimension]:
    """The generator's reply (parsed JSON) → a valid rubric, repaired; or RubricRejected.

    `ids_from_descriptions`: ignore the reply's ids; each id is made of the first words of
    its description (made unique), and a repeated description is dropped.

    Repairs: ids to snake_case (duplicates after that are dropped); weights rounded and
    clamped — the highest-weighted dimension (the first on a tie) to 8–10, the others to
    1–6; a generated `general_quality` is replaced by the standard one, always last; more
    than 8 dimensions are cut to the 8 heaviest (order kept).
    """
    rows = data.get("dimensions") if isinstance(data, dict) else data
    if not isinstance(rows, list):
        raise RubricRejected('expected {"dimensions": [...]}, a list of dimension objects')
    dims: list[dict[str, Any]] = []
    seen: set[str] = set()
    texts: set[str] = set()
    skipped: list[str] = []
    for k, row in enumerate(rows):
        if not isinstance(row, dict):
            skipped.append(f"[{k}] is not an object")
            continue
        raw_id = row.get("id", row.get("dimension_id", row.get("rubric_id")))
        description = row.get("description")
        weight = _number(row.get("weight"))
        if ids_from_descriptions and isinstance(description, str):
            raw_id = "_".join(key_words(description)[:ID_WORDS]) or "dimension"
        if not isinstance(raw_id, str) or not raw_id.strip():
            skipped.append(f"[{k}] has no id")
            continue
        if not isinstance(description, str) or not description.strip():
            skipped.append(f'"{raw_id}" has no description')
            continue
        if weight is None:
            skipped.append(f'"{raw_id}" has no numeric weight')
            continue
        dim_id = snake_case(raw_id, fallback="dimension")
        if ids_from_descriptions:
            text = normalize_text(description)
            if text in texts:
                continue
            texts.add(text)
            dim_id = _unique(dim_id, seen)
        if dim_id == GENERAL_QUALITY_ID or dim_id in seen:
            continue
        seen.add(dim_id)
        dims.append({"id": dim_id, "description": " ".join(description.split()), "w": weight})
    if len(dims) < MIN_DIMENSIONS:
        detail = f" ({'; '.join(skipped)})" if skipped else ""
        raise RubricRejected(
            f"expected {MIN_DIMENSIONS}–{MAX_DIMENSIONS} usable dimensions besides "
            f"general_quality, found {len(dims)}{detail}"
        )
    if len(dims) > MAX_DIMENSIONS:
        keep = sorted(range(len(dims)), key=lambda i: -dims[i]["w"])[:MAX_DIMENSIONS]
        dims = [dims[i] for i in sorted(keep)]
    top = max(range(len(dims)), key=lambda i: (dims[i]["w"], -i))
    out = []
    for i, d in enumerate(dims):
        lo, hi = TOP_WEIGHT if i == top else OTHER_WEIGHT
        weight = min(hi, max(lo, round(d["w"])))
        out.append({"id": d["id"], "description": d["description"], "weight": weight})
    out.append(GENERAL_QUALITY.model_dump())
    return parse_rubric(out, "generated rubric")


async def generate_rubric(
    layer: CallLayer, model: str, agent: AgentContext, *, seed: int = 0
) -> list[RubricDimension]:
    """Ask the generator for the rubric; re-ask (at most twice) when it cannot be repaired.

    The embedded model gets a bounded schema (`schemas`) and is not shown its failed
    reply — it would copy it — but asked afresh with another seed.

    Raises:
        ModelCallError: the call failed, or no usable rubric after the re-asks.
    """
    prompt: list[Message] = render_messages(
        "rubric.j2", agent, min_dimensions=MIN_DIMENSIONS, max_dimensions=MAX_DIMENSIONS
    )
    bounded = grammar_decoded(layer, model)
    high = EMBEDDED_MAX_DIMENSIONS if bounded else MAX_DIMENSIONS
    schema = rubric_schema(bounded=bounded, dimensions=(MIN_DIMENSIONS, high))
    conversation = prompt
    problem = ""
    for attempt in range(1 + MAX_REASKS):
        request = ChatRequest(
            messages=conversation,
            temperature=EMBEDDED_TEMPERATURE if bounded else TEMPERATURE,
            seed=seed + attempt if bounded else seed,
            max_tokens=2000,
            response_format={
                "type": "json_schema",
                "json_schema": {
                    "name": "rubric_dimensions",
                    "schema": schema,
                    "strict": True,
                },
            },
        )
        response = await layer.complete(model, request, pool="generator")
        try:
            truncated = cut_off(response, request.max_tokens)
            if truncated:
                raise JudgeParseError(truncated)
            data = extract_json_object(response.text)
            return repair_rubric(data, ids_from_descriptions=bounded)
        except (JudgeParseError, RubricRejected) as exc:
            problem = str(exc)
        if bounded:
            continue
        conversation = [
            *conversation,
            Message(role="assistant", content=response.text),
            Message(
                role="user",
                content=f"That rubric cannot be used: {problem}.\n"
                f"Reply again with only one JSON object of this form:\n{EXAMPLE}",
            ),
        ]
    raise ModelCallError(
        f"the generator gave no usable rubric after {1 + MAX_REASKS} attempts: {problem}",
        kind="parse",
        model=model,
        hint="use a stronger --eval-model, or write evaluators/<name>/rubric_dimensions.json "
        "by hand and run `agentopt eval update`",
    )


def _unique(name: str, taken: set[str]) -> str:
    candidate, n = name, 2
    while candidate in taken:
        candidate, n = f"{name}_{n}", n + 1
    return candidate


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            return None
    return None
