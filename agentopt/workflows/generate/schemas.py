"""The JSON schemas of the generator's replies: portable, or bounded for grammar decoding.

Remote models get the subset every structured-output API accepts (every key required, null
instead of optional, no length, count or pattern bounds, which strict modes refuse or ignore
unevenly). Their replies are checked afterwards (`validate`, the rubric loader).

The embedded model (`local:`) decodes under a llama.cpp grammar compiled from the schema, and a
135M model left free writes empty strings, one-word "criteria", one task where two were asked
for, or a string that runs on until `max_tokens` (an unreadable, truncated reply). So for it the
schema carries the validator's own rules — 2–4 criteria, exactly the tasks asked for, texts of
at least as many words as the validator wants and at most a few dozen — as `minItems`/`maxItems`
and word patterns (words of 1–20 characters joined by single spaces; no quote, backslash,
bracket or control character), which llama.cpp's grammar engine (llguidance) turns into
grammar rules. It honours `minLength`/`maxLength` too, but those count characters: "Crucifix"
fits a length bound and still fails the three-word rule. A bounded reply can still be poor,
but it is no longer unusable by construction.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from agentopt.workflows.generate.validate import (
    MAX_CRITERIA,
    MIN_CRITERIA,
    MIN_CRITERION_WORDS,
    MIN_THREAD_TURNS,
)

if TYPE_CHECKING:
    from agentopt.models.call import CallLayer

Kind = Literal["task", "thread", "simulated"]
"""Single-turn tasks, scripted multi-turn threads, or persona/goal tasks a simulated user
plays (`--multi-turn` in a conversation-level suite)."""

WORD = r'[^ "\\{}\[\]<>\x00-\x1F\x7F]'
"""One word character: anything JSON holds unescaped, except a space and the brackets a small
model copies from the JSON examples of its prompt."""
MAX_WORD_CHARS = 20
SNAKE_NAME = r"^[a-z]{3,16}(_[a-z]{3,16}){0,3}$"
"""snake_case words of letters (a small model otherwise fills names with digits)."""
QUERY_WORDS = (3, 40)
TRUTH_WORDS = (2, 40)
CRITERION_WORDS = (MIN_CRITERION_WORDS, 25)
DESCRIPTION_WORDS = (4, 30)
PERSONA_WORDS = (4, 30)
ANSWER_WORDS = (4, 80)
MAX_BOUNDED_TURNS = MAX_CRITERIA
"""Thread turns when bounded: one criterion per turn keeps the total within 2–4."""
WEIGHTS = (1, 10)


def grammar_decoded(layer: CallLayer, model: str) -> bool:
    """True when `model`'s output is decoded under a grammar compiled from the request's JSON
    schema (the embedded model, self-hosted servers: `CallLayer.grammar_decoded`)."""
    return layer.grammar_decoded(model)


def words(low: int, high: int) -> dict[str, Any]:
    """A string of `low`–`high` words separated by single spaces."""
    word = f"{WORD}{{1,{MAX_WORD_CHARS}}}"
    return {"type": "string", "pattern": f"^{word}( {word}){{{low - 1},{high - 1}}}$"}


def _text(bounded: bool, bounds: tuple[int, int]) -> dict[str, Any]:
    return words(*bounds) if bounded else {"type": "string"}


def _name(bounded: bool) -> dict[str, Any]:
    return {"type": "string", "pattern": SNAKE_NAME} if bounded else {"type": "string"}


def _array(item: dict[str, Any], bounds: tuple[int, int] | None) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "array", "items": item}
    if bounds is not None:
        out["minItems"], out["maxItems"] = bounds
    return out


def _object(properties: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


def batch_schema(
    kind: Kind, categories: list[str], *, count: int | None = None, bounded: bool = False
) -> dict[str, Any]:
    """The schema of one generator reply: `{"tasks": [...]}` or `{"threads": [...]}`.

    Args:
        kind: single-turn tasks or multi-turn threads.
        categories: the allowed category names (the batch's own one when bounded).
        count: how many items the batch asks for (bounded: exactly that many).
        bounded: add the grammar bounds (embedded model).
    """
    criterion = _object({"name": _name(bounded), "instruction": _text(bounded, CRITERION_WORDS)})
    truth: dict[str, Any] = (
        {"anyOf": [words(*TRUTH_WORDS), {"type": "null"}]}
        if bounded
        else {"type": ["string", "null"]}
    )
    category = {"type": "string", "enum": list(categories)}
    if kind == "task":
        item = _object(
            {
                "name": _name(bounded),
                "query": _text(bounded, QUERY_WORDS),
                "ground_truth": truth,
                "category": category,
                "criteria": _array(criterion, (MIN_CRITERIA, MAX_CRITERIA) if bounded else None),
            }
        )
        key = "tasks"
    elif kind == "simulated":
        item = _object(
            {
                "name": _name(bounded),
                "category": category,
                "persona": _text(bounded, PERSONA_WORDS),
                "goal": _text(bounded, PERSONA_WORDS),
                "query": _text(bounded, QUERY_WORDS),
                "stop_when": _text(bounded, PERSONA_WORDS),
                "criteria": _array(criterion, (MIN_CRITERIA, MAX_CRITERIA) if bounded else None),
            }
        )
        key = "conversations"
    else:
        turn = _object(
            {
                "query": _text(bounded, QUERY_WORDS),
                "ground_truth": truth,
                "criteria": _array(criterion, (1, 1) if bounded else None),
            }
        )
        turns = (MIN_THREAD_TURNS, MAX_BOUNDED_TURNS) if bounded else None
        item = _object({"name": _name(bounded), "category": category, "turns": _array(turn, turns)})
        key = "threads"
    items = (count, count) if bounded and count is not None else None
    return _object({key: _array(item, items)})


def rubric_schema(*, bounded: bool = False, dimensions: tuple[int, int] = (4, 8)) -> dict[str, Any]:
    """The schema of the rubric reply: `{"dimensions": [{id, description, weight}]}`.

    Bounded: `dimensions` (min, max) of them and no `id` — a small model repeats one id for
    different dimensions (or copies "general_quality"), so the ids are made from the
    descriptions instead (`rubric.repair_rubric(ids_from_descriptions=True)`).
    """
    if bounded:
        weight = {"type": "integer", "minimum": WEIGHTS[0], "maximum": WEIGHTS[1]}
        dimension = _object({"description": words(*DESCRIPTION_WORDS), "weight": weight})
        return _object({"dimensions": _array(dimension, dimensions)})
    dimension = _object(
        {"id": {"type": "string"}, "description": {"type": "string"}, "weight": {"type": "integer"}}
    )
    return _object({"dimensions": _array(dimension, None)})


def answers_schema(*, bounded: bool = False) -> dict[str, Any]:
    """The schema of the self-check's answer pair: `{"good": ..., "bad": ...}`."""
    return _object({"good": _text(bounded, ANSWER_WORDS), "bad": _text(bounded, ANSWER_WORDS)})
