"""Evaluator options are typed: each evaluator declares a pydantic model of what it accepts.

An option nobody reads is worse than an error: `{mdoe: contains}` used to run with the default
mode and exit 0. Every built-in registers its model (`@evaluator(..., options=Model)`); the
options an eval.yaml entry, an azure.eval.yaml `initialization_parameters` or an M365
evaluator map gives are checked against it once, by `check_options`, when the evaluator is built
(`registry.build_registered`) and when `eval validate` reads the file. An unknown key is an
error naming its key path with the closest known key; a value of the wrong type says what was
expected and what was found. Checks that need more than a type (a regex that compiles, a schema
file that exists) stay with the evaluator that knows them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import ConfigDict, ValidationError, field_validator

from agentopt.core.errors import ConfigError, Problem
from agentopt.core.files.problems import closest
from agentopt.core.lazy_model import LazyModel


def no_bool(expected: str) -> Callable[[Any], Any]:
    """A before-validator refusing booleans where `expected` (a number) is: pydantic's lax
    mode would read `true` as 1."""

    def reject(value: Any) -> Any:
        if isinstance(value, bool):
            raise ValueError(f"expected {expected}, found a boolean")
        return value

    return reject


class EvaluatorOptions(LazyModel):
    """What every evaluator accepts: a pass threshold (the evaluator's own scale)."""

    model_config = ConfigDict(extra="forbid")

    threshold: float | None = None
    """Pass when `score >= threshold`; None: the evaluator's default."""

    _threshold_number = field_validator("threshold", mode="before")(no_bool("a number"))


class JudgeOptions(EvaluatorOptions):
    """What every LLM judge accepts besides the threshold."""

    model: str | None = None
    """The judge model of this evaluator (default: eval.yaml `options.eval_model`)."""
    deployment_name: str | None = None
    """Foundry's name for the judge deployment (written by Foundry tools beside or instead of
    `model`); read as `model` when `model` is absent."""


_EXPECTED = {
    "float_type": "a number",
    "float_parsing": "a number",
    "int_type": "a whole number",
    "int_parsing": "a whole number",
    "int_from_float": "a whole number",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
    "string_type": "text",
    "list_type": "a list",
    "dict_type": "a mapping",
    "greater_than": "a positive number",
}


def _expected(error: Any) -> str:
    kind = str(error.get("type", ""))
    if kind == "literal_error":
        return str(error.get("ctx", {}).get("expected", "one of the allowed values"))
    if kind == "value_error":
        return str(error.get("msg", "")).removeprefix("Value error, ").removeprefix("expected ")
    return _EXPECTED.get(kind, str(error.get("msg", "a valid value")).lower())


def option_problems(
    evaluator: str,
    model: type[EvaluatorOptions],
    options: dict[str, Any],
    *,
    file: str = "",
    where: str | None = None,
) -> list[Problem]:
    """Every way `options` break `model`, located at `where` (default: the evaluator's name):
    `evaluators[0].initialization_parameters.mdoe: unknown option "mdoe" of
    builtin.exact_match (did you mean "mode"?); known options: mode, case_sensitive, threshold`."""
    prefix = evaluator if where is None else where
    fields = {f.alias or name: f for name, f in model.model_fields.items()}
    known = list(fields)
    problems: list[Problem] = []
    for key in options:
        if key in fields:
            continue
        guess = closest(str(key), known)
        hint = f' (did you mean "{guess}"?)' if guess else ""
        problems.append(
            Problem(
                file,
                f"{prefix}.{key}",
                f'unknown option "{key}" of {evaluator}{hint}; known options: {", ".join(known)}',
            )
        )
    if problems:
        return problems
    try:
        model.model_validate(options)
    except ValidationError as exc:
        for error in exc.errors():
            path = ".".join(str(p) for p in error["loc"])
            found = error.get("input")
            problems.append(
                Problem(file, f"{prefix}.{path}", f"expected {_expected(error)}, found {found!r}")
            )
    return problems


def check_options(evaluator: str, model: type[EvaluatorOptions], options: dict[str, Any]) -> None:
    """Raise a ConfigError holding every problem of `options` (see `option_problems`)."""
    problems = option_problems(evaluator, model, options)
    if problems:
        raise ConfigError(problems=problems)
