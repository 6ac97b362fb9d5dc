"""The registered evaluator YAML, `.azure/.foundry/evaluators/<name>.v<N>.yaml` (files.md §5.2).

One file describes one immutable evaluator version. `type` says how `definition` is read:
- `rubric`: `{dimensions: [...]}` — the content of rubric_dimensions.json;
- `prompt`: `{prompt: <jinja2 judge template>, score_range: {min, max}}`;
- `code`: `{entry_point: "module:callable", options?: {...}}`;
- `builtin-config`: `{evaluator: builtin.x, initialization_parameters?: {...}}` — a builtin
  with pinned options.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal

from pydantic import ConfigDict, Field

from agentopt.core.errors import Problem
from agentopt.core.files.problems import (
    Collector,
    KeyPath,
    describe,
    expect_int,
    expect_mapping,
    expect_str,
)
from agentopt.core.files.rubric import RubricDimension, check_dimensions
from agentopt.core.files.yaml_source import dump_yaml, parse_yaml, read_text
from agentopt.core.lazy_model import LazyModel
from agentopt.core.versions import version_problem

EvaluatorType = Literal["rubric", "prompt", "code", "builtin-config"]
EVALUATOR_TYPES: tuple[str, ...] = ("rubric", "prompt", "code", "builtin-config")
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
ENTRY_POINT_RE = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")
_TOP_KEYS = (
    "name",
    "version",
    "type",
    "description",
    "created_at",
    "source",
    "threshold",
    "definition",
)


class ScoreRange(LazyModel):
    """The native scale a prompt judge answers on (normalized to 0..1 by the evaluator)."""

    model_config = ConfigDict(extra="forbid")

    min: int = 1
    max: int = 5


class RubricDefinition(LazyModel):
    model_config = ConfigDict(extra="forbid")

    dimensions: list[RubricDimension]
    """The rubric, exactly as in rubric_dimensions.json."""


class PromptDefinition(LazyModel):
    model_config = ConfigDict(extra="forbid")

    prompt: str
    """A jinja2 judge template; sees query, response, ground_truth, context, ..."""
    score_range: ScoreRange = Field(default_factory=ScoreRange)
    """The scale the judge's `score` uses."""


class CodeDefinition(LazyModel):
    model_config = ConfigDict(extra="forbid")

    entry_point: str
    """`module:callable` importable from the project folder."""
    options: dict[str, Any] = Field(default_factory=dict)
    """Passed to the callable as `options`."""


class BuiltinConfigDefinition(LazyModel):
    model_config = ConfigDict(extra="forbid")

    evaluator: str
    """The builtin evaluator this pins options for, e.g. `builtin.regex_match`."""
    initialization_parameters: dict[str, Any] = Field(default_factory=dict)
    """Options the builtin receives, as in eval.yaml."""


Definition = RubricDefinition | PromptDefinition | CodeDefinition | BuiltinConfigDefinition


class EvaluatorSpec(LazyModel):
    """One registered evaluator version."""

    model_config = ConfigDict(extra="forbid")

    name: str
    """Registry name, e.g. `support-agent-quality`."""
    version: str = "1"
    """Integer as a string ("1", "2", …)."""
    type: EvaluatorType
    """How `definition` is interpreted."""
    description: str = ""
    """One line for humans and reports."""
    created_at: str | None = None
    """ISO-8601 UTC time of registration."""
    source: dict[str, Any] = Field(default_factory=dict)
    """Provenance: `{kind: generated|edited|manual|imported, model?, instruction_sha256?}`."""
    threshold: float | None = None
    """Pass threshold on the normalized 0..1 score; None = the type's default."""
    definition: Definition
    """Type-specific content (see the module docstring)."""


def parse_evaluator_yaml(text: str, file: str) -> EvaluatorSpec:
    """Validate evaluator YAML text, reporting every problem with key path and line."""
    data, lines = parse_yaml(text, file)
    c = Collector(file, lines)
    spec = _check_spec(c, data)
    c.raise_if_errors()
    assert spec is not None
    return spec


def load_evaluator_yaml(path: Path | str) -> EvaluatorSpec:
    """Read and validate a registered evaluator YAML file."""
    path = Path(path)
    return parse_evaluator_yaml(read_text(path, shown=str(path)), str(path))


def evaluator_yaml_problems(text: str, file: str) -> list[Problem]:
    """Every problem (errors and warnings) of an evaluator YAML, without raising."""
    data, lines = parse_yaml(text, file)
    c = Collector(file, lines)
    _check_spec(c, data)
    return c.problems


def dump_evaluator_yaml(spec: EvaluatorSpec) -> str:
    """YAML text in canonical key order; multi-line prompts as literal blocks."""
    data = spec.model_dump(mode="json", exclude_none=True)
    if not data.get("source"):
        data.pop("source", None)
    if spec.type == "rubric":
        for dim in data["definition"]["dimensions"]:
            if not dim.get("always_applicable"):
                dim.pop("always_applicable", None)
    return dump_yaml(data)


def _check_spec(c: Collector, data: Any) -> EvaluatorSpec | None:
    if not isinstance(data, dict):
        c.error(
            (), f"expected a mapping with name, version, type, definition; found {describe(data)}"
        )
        return None
    for key in data:
        if key not in _TOP_KEYS:
            c.unknown_key((), key, _TOP_KEYS)
    name = _need(c, data, "name")
    if isinstance(name, str) and not NAME_RE.match(name):
        c.error(("name",), f"expected letters, digits, '.', '_' or '-', found {describe(name)}")
    version = str(data.get("version", "1"))
    problem = version_problem(data.get("version", "1"))
    if problem is not None:
        c.error(("version",), problem)
    etype = data.get("type")
    if etype not in EVALUATOR_TYPES:
        c.error(("type",), f"expected one of {', '.join(EVALUATOR_TYPES)}, found {describe(etype)}")
    description = data.get("description", "")
    if description is None:
        description = ""
    if not isinstance(description, str):
        c.error(("description",), f"expected text, found {describe(description)}")
    created_at = data.get("created_at")
    if created_at is not None and not isinstance(created_at, str):
        c.error(("created_at",), f"expected an ISO-8601 time, found {describe(created_at)}")
    source = data.get("source") or {}
    if not isinstance(source, dict):
        c.error(
            ("source",), f"expected a mapping like {{kind: generated}}, found {describe(source)}"
        )
    threshold = data.get("threshold")
    if threshold is not None and (
        isinstance(threshold, bool) or not isinstance(threshold, int | float)
    ):
        c.error(("threshold",), f"expected a number, found {describe(threshold)}")
    definition = None
    if "definition" not in data:
        c.error((), f'missing "definition": expected {_DEFINITION_HINT.get(str(etype), _ANY_HINT)}')
    elif etype in EVALUATOR_TYPES:
        definition = _check_definition(c, str(etype), data["definition"])
    if c.errors or definition is None:
        return None
    return EvaluatorSpec(
        name=str(name),
        version=version,
        type=etype,  # type: ignore[arg-type]
        description=description,
        created_at=created_at,
        source=source,
        threshold=None if threshold is None else float(threshold),
        definition=definition,
    )


_DEFINITION_HINT = {
    "rubric": "`definition: {dimensions: [...]}` (the rubric_dimensions.json list)",
    "prompt": "`definition: {prompt: <jinja2 judge template>, score_range: {min: 1, max: 5}}`",
    "code": '`definition: {entry_point: "module:callable"}`',
    "builtin-config": "`definition: {evaluator: builtin.<name>, initialization_parameters: {...}}`",
}
_ANY_HINT = "the type's content under `definition:` (see files.md §5.2)"


def _need(c: Collector, data: dict[str, Any], key: str) -> Any:
    if key not in data:
        c.error((), f'missing "{key}"')
        return None
    return expect_str(c, (key,), data[key])


def _check_definition(c: Collector, etype: str, raw: Any) -> Definition | None:
    path: KeyPath = ("definition",)
    if etype == "rubric" and isinstance(raw, list):
        raw = {"dimensions": raw}
    body = expect_mapping(c, path, raw)
    if body is None:
        return None
    known = {
        "rubric": ("dimensions",),
        "prompt": ("prompt", "score_range"),
        "code": ("entry_point", "options"),
        "builtin-config": ("evaluator", "initialization_parameters"),
    }[etype]
    for key in body:
        if key not in known:
            c.unknown_key(path, key, known)
    if etype == "rubric":
        return _rubric(c, body)
    if etype == "prompt":
        return _prompt(c, body)
    if etype == "code":
        return _code(c, body)
    return _builtin(c, body)


def _rubric(c: Collector, body: dict[str, Any]) -> RubricDefinition | None:
    if "dimensions" not in body:
        c.error(("definition",), 'missing "dimensions": expected the rubric dimension list')
        return None
    before = len(c.errors)
    dims = check_dimensions(c, ("definition", "dimensions"), body["dimensions"])
    return RubricDefinition(dimensions=dims) if len(c.errors) == before else None


def _prompt(c: Collector, body: dict[str, Any]) -> PromptDefinition | None:
    path: KeyPath = ("definition", "prompt")
    prompt = expect_str(c, path, body.get("prompt"))
    if prompt is not None:
        from jinja2 import Environment, TemplateSyntaxError  # only for a prompt evaluator

        try:
            Environment().parse(prompt)
        except TemplateSyntaxError as exc:
            c.error(path, f"invalid jinja2 template at template line {exc.lineno}: {exc.message}")
            prompt = None
    rng = ScoreRange()
    raw = body.get("score_range")
    if raw is not None:
        rp: KeyPath = ("definition", "score_range")
        m = expect_mapping(c, rp, raw)
        if m is not None:
            lo = expect_int(c, (*rp, "min"), m.get("min", 1))
            hi = expect_int(c, (*rp, "max"), m.get("max", 5))
            if lo is not None and hi is not None:
                if lo >= hi:
                    c.error(rp, f"expected min < max, found min {lo} and max {hi}")
                else:
                    rng = ScoreRange(min=lo, max=hi)
    return PromptDefinition(prompt=prompt, score_range=rng) if prompt is not None else None


def _code(c: Collector, body: dict[str, Any]) -> CodeDefinition | None:
    path: KeyPath = ("definition", "entry_point")
    entry = body.get("entry_point")
    if not isinstance(entry, str) or not ENTRY_POINT_RE.match(entry):
        c.error(
            path, f'expected "module:callable" (e.g. "my_evals:score"), found {describe(entry)}'
        )
        return None
    options = body.get("options") or {}
    if expect_mapping(c, ("definition", "options"), options) is None:
        return None
    return CodeDefinition(entry_point=entry, options=options)


def _builtin(c: Collector, body: dict[str, Any]) -> BuiltinConfigDefinition | None:
    name = expect_str(c, ("definition", "evaluator"), body.get("evaluator"))
    params = body.get("initialization_parameters") or {}
    if expect_mapping(c, ("definition", "initialization_parameters"), params) is None:
        return None
    if name is None:
        return None
    return BuiltinConfigDefinition(evaluator=name, initialization_parameters=params)
