"""Check an M365 output document against the upstream schema matching its `schemaVersion`
(the schemas shipped in agentopt/data/m365, see its SOURCE.md)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import Any

from jsonschema import Draft202012Validator, FormatChecker
from jsonschema.exceptions import ValidationError

from agentopt.datasets import schema_for

_CHECKER = FormatChecker()


@_CHECKER.checks("date-time", raises=ValueError)
def _date_time(value: object) -> bool:
    # RFC 3339 needs a time zone; jsonschema has no built-in check without extra packages
    return not isinstance(value, str) or datetime.fromisoformat(value).tzinfo is not None


class MatchingSchema:
    """`validate` / `iter_errors` like a jsonschema validator, with the schema picked per
    document by its `schemaVersion`."""

    def _for(self, document: Any) -> Draft202012Validator:
        version = document.get("schemaVersion") if isinstance(document, dict) else None
        schema = schema_for(version)
        Draft202012Validator.check_schema(schema)
        return Draft202012Validator(schema, format_checker=_CHECKER)

    def validate(self, document: Any) -> None:
        self._for(document).validate(document)

    def iter_errors(self, document: Any) -> Iterator[ValidationError]:
        return self._for(document).iter_errors(document)

    def is_valid(self, document: Any) -> bool:
        return self._for(document).is_valid(document)


def validate_output(document: Any) -> None:
    MatchingSchema().validate(document)
