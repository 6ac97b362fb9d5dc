"""`.prompty` files, as runevals and azure-ai-evaluation write LLM-judge evaluators.

A prompty is YAML front matter between `---` lines (`name`, `description`, `model: {api,
parameters}`, `inputs: {name: {type, default?}}`), then a jinja2 template split into role
sections by lines `system:`, `user:`, `assistant:`. Every problem names the file and the line:
front matter keys through the YAML reader's line index, template errors and undeclared
variables through the template's own line numbers.

Why not the `prompty` package: its 2.x loader reads the v2 format (`template: {format,
parser}`, `instructions`), not the v1 files runevals ships, and it would execute calls with its
own clients; here only parsing and rendering are needed, and calls go through the judge path.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import ConfigDict, Field

from agentopt.core.errors import InputError, Problem
from agentopt.core.files.problems import Collector, LineIndex, describe
from agentopt.core.files.yaml_source import parse_yaml
from agentopt.core.lazy_model import LazyModel

Role = Literal["system", "user", "assistant"]
_FENCE = re.compile(r"^---\s*$")
_ROLE = re.compile(r"^\s*(system|user|assistant)\s*:\s*$", re.IGNORECASE)
_TOP_KEYS = ("name", "description", "model", "inputs", "outputs", "sample", "authors", "version")


class PromptySection(LazyModel):
    model_config = ConfigDict(extra="forbid")

    role: Role
    template: str
    line: int
    """1-based line of the section's first template line in the file."""


class PromptyInput(LazyModel):
    model_config = ConfigDict(extra="allow")

    type: str = "string"
    default: Any = None
    line: int | None = None


class Prompty(LazyModel):
    """One parsed `.prompty` file."""

    model_config = ConfigDict(extra="forbid")

    file: str
    name: str
    description: str = ""
    parameters: dict[str, Any] = Field(default_factory=dict)
    """`model.parameters`, kept for reference (judge calls use the judge's own settings)."""
    inputs: dict[str, PromptyInput] = Field(default_factory=dict)
    sections: list[PromptySection]


def parse_prompty(text: str, file: str) -> Prompty:
    """Validate and split a prompty; raises InputError listing every problem with its line."""
    lines = text.splitlines()
    if not lines or not _FENCE.match(lines[0]):
        _fail(file, 1, 'expected the front matter to open with a "---" line, found none')
    end = next((i for i in range(1, len(lines)) if _FENCE.match(lines[i])), None)
    if end is None:
        _fail(file, 1, 'expected a closing "---" line after the front matter, found none')
    assert end is not None
    data, index = parse_yaml("\n".join(["", *lines[1:end]]), file)
    c = Collector(file, index)
    if data is None:
        data = {}
    if not isinstance(data, dict):
        c.error((), f"expected front matter keys like name, model, inputs; found {describe(data)}")
        c.raise_if_errors()
    for key in data:
        if key not in _TOP_KEYS:
            c.unknown_key((), str(key), _TOP_KEYS)
    parameters = _model_parameters(c, data.get("model"))
    inputs = _inputs(c, data.get("inputs"), index)
    sections = _sections(c, lines, end + 1, file)
    _undeclared(c, sections, inputs, file)
    c.raise_if_errors()
    name = data.get("name")
    description = data.get("description")
    return Prompty(
        file=file,
        name=name if isinstance(name, str) else "",
        description=description if isinstance(description, str) else "",
        parameters=parameters,
        inputs=inputs,
        sections=sections,
    )


def _fail(file: str, line: int, message: str) -> None:
    raise InputError(problems=[Problem(file, f"line {line}", message)])


def _model_parameters(c: Collector, model: Any) -> dict[str, Any]:
    if model is None:
        return {}
    if not isinstance(model, dict):
        c.error(("model",), f"expected a mapping with api and parameters, found {describe(model)}")
        return {}
    api = model.get("api", "chat")
    if api != "chat":
        c.error(
            ("model", "api"), f'expected "chat" (a judge is a chat prompt), found {describe(api)}'
        )
    params = model.get("parameters") or {}
    if not isinstance(params, dict):
        c.error(("model", "parameters"), f"expected a mapping, found {describe(params)}")
        return {}
    return dict(params)


def _inputs(c: Collector, raw: Any, index: LineIndex) -> dict[str, PromptyInput]:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        c.error(("inputs",), f"expected a mapping of input names, found {describe(raw)}")
        return {}
    out: dict[str, PromptyInput] = {}
    for name, spec in raw.items():
        line = index.line(("inputs", name))
        if spec is None or isinstance(spec, str | int | float | bool):
            out[str(name)] = PromptyInput(default=spec, line=line)  # `name: sample value`
        elif isinstance(spec, dict):
            out[str(name)] = PromptyInput(**{**spec, "line": line})
        else:
            c.error(
                ("inputs", name),
                f"expected a mapping like {{type: string}}, found {describe(spec)}",
            )
    return out


def _sections(c: Collector, lines: list[str], start: int, file: str) -> list[PromptySection]:
    """Role sections of the body; text before the first role line is a system section."""
    sections: list[PromptySection] = []
    role: Role = "system"
    body: list[str] = []
    first = start + 1
    for number, line in enumerate(lines[start:], start=start + 1):
        match = _ROLE.match(line)
        if match:
            if "".join(body).strip():
                sections.append(PromptySection(role=role, template="\n".join(body), line=first))
            role, body, first = match.group(1).lower(), [], number + 1  # type: ignore[assignment]
            continue
        body.append(line)
    if "".join(body).strip():
        sections.append(PromptySection(role=role, template="\n".join(body), line=first))
    if not any(s.role == "user" for s in sections):
        c.problems.append(
            Problem(file, f"line {start + 1}", 'expected a "user:" section after the front matter')
        )
    return sections


def _undeclared(
    c: Collector, sections: list[PromptySection], inputs: dict[str, PromptyInput], file: str
) -> None:
    """Template syntax errors, and variables the front matter does not declare (runevals
    renders those empty, so the judge would see a blank prompt), each at its line."""
    from jinja2 import Environment, TemplateSyntaxError, meta  # only when a .prompty is read

    env = Environment()
    for section in sections:
        try:
            parsed = env.parse(section.template)
        except TemplateSyntaxError as exc:
            line = section.line + (exc.lineno or 1) - 1
            c.problems.append(Problem(file, f"line {line}", f"template error: {exc.message}"))
            continue
        for name in sorted(meta.find_undeclared_variables(parsed) - set(inputs)):
            offset = next(
                (i for i, text in enumerate(section.template.splitlines()) if name in text), 0
            )
            c.problems.append(
                Problem(
                    file,
                    f"line {section.line + offset}",
                    f'the template uses "{{{{{name}}}}}" but `inputs:` does not declare it; '
                    f"add `{name}: {{type: string}}` under inputs",
                )
            )
