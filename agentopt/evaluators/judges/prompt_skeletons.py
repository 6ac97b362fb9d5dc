"""The user message of a judge call from a rendered skeleton: the template rendered once per
shape of call, then each call's data blocks put in by replacement.

A judge prompt depends on its template, its trusted parameters (the criteria, the scale),
which data blocks are present, the blocks' texts and their boundary. Only the last two change
from task to task, and they reach the text only through `{{ block("name") }}` and
`{{ boundary }}`. So the template is rendered with a mark in their place, once for each
(template, parameters, blocks present), and a call replaces the marks: one pass over the
skeleton, so a block's text is never searched for marks (a text that holds one is kept as
written). A jinja2 render was 43 µs of the ~205 µs a task_adherence verdict costs on our side.

Parameters of a kind this does not know how to compare (or a text holding the mark's NUL
character) take the old road, a render per call; `rendered_directly` is that road, and the
property test holds the two to the same text.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import fields, is_dataclass
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from agentopt.core.templates import prompt_environment

if TYPE_CHECKING:
    from jinja2 import Environment

    from agentopt.evaluators.judges.prompting import DataBlocks

SKELETONS_MAX = 256
"""Distinct (template, parameters, blocks present) whose skeleton is kept."""

_BOUNDARY_MARK = "\x00boundary\x00"
_MARK = re.compile("\x00(?:block:([a-z][a-z0-9_]*)|boundary)\x00")
_skeletons: dict[tuple[Any, ...], str] = {}


def judge_environment() -> Environment:
    """The shared environment of `templates/judges/` (here, below `prompting`, so the skeletons
    and the judges' other templates load from the one place)."""
    return prompt_environment("judges")


def render_user_text(template: str, blocks: DataBlocks, params: Mapping[str, Any]) -> str:
    """The user message `template` renders for `blocks` and `params` (stripped)."""
    frozen = _frozen(params)
    if frozen is None:
        return rendered_directly(template, blocks, params)
    present = tuple(sorted((name, blocks.has(name)) for name in blocks.values))
    key = (template, present, frozen)
    skeleton = _skeletons.get(key)
    if skeleton is None:
        skeleton = _skeleton(template, blocks, params)
        if len(_skeletons) >= SKELETONS_MAX:
            _skeletons.clear()
        _skeletons[key] = skeleton

    def fill(match: re.Match[str]) -> str:
        name = match.group(1)
        return blocks.boundary if name is None else blocks(name)

    return _MARK.sub(fill, skeleton)


def rendered_directly(template: str, blocks: DataBlocks, params: Mapping[str, Any]) -> str:
    """The user message rendered by jinja2 with the blocks themselves (the old road)."""
    context = {**params, "block": blocks, "has": blocks.has, "boundary": blocks.boundary}
    return judge_environment().get_template(template).render(**context).strip()


def _skeleton(template: str, blocks: DataBlocks, params: Mapping[str, Any]) -> str:
    def block(name: str) -> str:
        blocks(name)  # the same refusal as a render: a bad name, a block not given
        return f"\x00block:{name}\x00"

    context = {**params, "block": block, "has": blocks.has, "boundary": _BOUNDARY_MARK}
    return judge_environment().get_template(template).render(**context).strip()


def _frozen(value: Any) -> Any:
    """A hashable value equal for equal parameters (type included: `1`, `1.0` and `True`
    differ), or None when `value` holds something else (then no skeleton is kept)."""
    kind = type(value)
    if value is None or kind is bool or kind is int or kind is float:
        return (kind, value)
    if kind is str:
        return None if "\x00" in value else value
    if kind is list or kind is tuple:
        items = tuple(_frozen(v) for v in value)
        return None if any(i is None for i in items) else (kind, items)
    if kind is dict:
        if not all(type(k) is str for k in value):
            return None
        entries = tuple((k, _frozen(v)) for k, v in sorted(value.items()))
        return None if any(v is None for _, v in entries) else (dict, entries)
    if isinstance(value, BaseModel) and not value.model_extra:
        names: Any = type(value).model_fields
    elif is_dataclass(value) and kind.__dataclass_params__.frozen:  # type: ignore[attr-defined]
        names = [f.name for f in fields(value)]
    else:
        return None
    values = tuple((name, _frozen(getattr(value, name))) for name in names)
    return None if any(v is None for _, v in values) else (kind, values)
