"""builtin.json_schema: the response is JSON (bare or in a ```json fence) matching a schema."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import Field

from agentopt.contracts.eval_result import EvalResult
from agentopt.core.errors import InputError
from agentopt.core.files.yaml_source import load_json
from agentopt.evaluators.base import (
    BuildContext,
    EvalSample,
    EvaluatorBase,
    option_error,
    pass_fail,
)
from agentopt.evaluators.options import EvaluatorOptions
from agentopt.evaluators.registry import evaluator

if TYPE_CHECKING:
    import jsonschema

FENCE = re.compile(r"```[ \t]*(?:json|JSON)?[ \t]*\n(.*?)```", re.S)


def parse_json_response(text: str) -> tuple[Any, str | None]:
    """(value, None) when `text` is JSON or holds exactly one fenced JSON block; else
    (None, why not)."""
    stripped = text.strip()
    if not stripped:
        return None, "the response is empty"
    try:
        return json.loads(stripped), None
    except json.JSONDecodeError as exc:
        first_error = (
            f"the response is not JSON ({exc.msg} at line {exc.lineno} column {exc.colno})"
        )
    for block in FENCE.findall(stripped):
        try:
            return json.loads(block), None
        except json.JSONDecodeError as exc:
            return None, f"the fenced block is not JSON ({exc.msg} at line {exc.lineno})"
    return None, first_error


def schema_fields(schema: Any) -> list[str]:
    """The top-level fields an object schema asks for (its required ones, else all of its
    properties): what a person would tell the agent to include."""
    if not isinstance(schema, dict):
        return []
    required = schema.get("required")
    if isinstance(required, list) and required:
        return [str(f) for f in required]
    properties = schema.get("properties")
    return [str(f) for f in properties] if isinstance(properties, dict) else []


def _path(error: jsonschema.ValidationError) -> str:
    path = "$"
    for part in error.absolute_path:
        path += f"[{part}]" if isinstance(part, int) else f".{part}"
    return path


class JsonSchemaOptions(EvaluatorOptions):
    schema_: Any = Field(default=None, alias="schema")
    """A JSON Schema object, or a path to one (checked when built)."""


@evaluator("builtin.json_schema", needs=("response",), options=JsonSchemaOptions)
class JsonSchema(EvaluatorBase):
    """Response parses as JSON and validates against `schema`.

    Options: `schema` — a JSON Schema object, or a path (relative to the project) to one.
    Without a schema, any valid JSON passes.
    """

    def __init__(
        self, *, options: dict[str, Any] | None = None, context: BuildContext | None = None
    ) -> None:
        super().__init__(options=options, context=context)
        self._schema = self._load(self.options.get("schema"))

    def _load(self, schema: Any) -> dict[str, Any] | bool | None:
        if isinstance(schema, str):
            path = Path(schema)
            if not path.is_absolute():
                path = self.context.project_dir / path
            try:
                schema = load_json(path)
            except InputError as exc:
                raise option_error(
                    self.name, "schema", "a readable JSON Schema file", f"{schema} ({exc})"
                ) from exc
        if schema is None:
            return None
        if not isinstance(schema, dict | bool):
            raise option_error(self.name, "schema", "a JSON Schema object or file path", schema)
        import jsonschema  # 0.1 s to import: only when the evaluator is used
        from jsonschema.exceptions import SchemaError

        try:
            jsonschema.validators.validator_for(schema).check_schema(schema)
        except SchemaError as exc:
            raise option_error(
                self.name, "schema", f"a valid JSON Schema ({exc.message})", "an invalid schema"
            ) from exc
        return schema

    async def evaluate(self, sample: EvalSample) -> EvalResult:
        schema = self._schema
        if "schema" in sample.options:
            schema = self._load(sample.options["schema"])
        value, problem = parse_json_response(sample.response)
        errors: list[str] = []
        if problem is None and schema is not None:
            import jsonschema

            validator = jsonschema.validators.validator_for(schema)(schema)
            errors = [
                f"{_path(e)}: {e.message}"
                for e in sorted(validator.iter_errors(value), key=lambda e: list(e.absolute_path))
            ]
        ok = problem is None and not errors
        if problem is not None:
            reason = problem[0].upper() + problem[1:] + "."
        elif errors:
            reason = "The JSON does not match the schema: " + "; ".join(errors[:3])
        else:
            reason = "Valid JSON" + (" matching the schema." if schema is not None else ".")
        details: dict[str, Any] = {"errors": errors} if errors else {}
        fields = schema_fields(schema)
        if fields and not ok:
            details["fields"] = fields
        return pass_fail(self.name, ok, reason=reason, details=details)
