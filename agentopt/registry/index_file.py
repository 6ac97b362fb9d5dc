"""`registry.json` read through its model: every type is checked and a wrong one is named by
file and key path (`datasets.support-seed.versions.2.sha256: ...`), where a hand-edited or
damaged index used to end in an AttributeError.

The index is agentopt's own file, so it is validated like every saved record (`contracts/`),
with the leniency older files need: a kind or a name mapped to `null` reads as empty.
"""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict, Field, ValidationError, field_validator

from agentopt.contracts.record import problems_of
from agentopt.core.errors import ConfigError
from agentopt.core.lazy_model import LazyModel
from agentopt.core.versions import version_problem


class VersionEntry(LazyModel):
    """One registered version in registry.json."""

    model_config = ConfigDict(extra="forbid")

    sha256: str
    """Content hash (see registry/hashing.py for what it covers)."""
    hashing: str | None = None
    """Datasets: the scheme of `sha256` ("canonical-1"); None = a hash of the bytes (versions
    registered before the canonical scheme)."""
    created_at: str
    """ISO-8601 UTC registration time."""
    source: dict[str, Any] = Field(default_factory=dict)
    """Provenance, e.g. `{kind: generated, model: ...}` or `{kind: edited, file: ...}`."""
    file: str
    """Path of the version file, relative to the registry folder."""
    remote: dict[str, Any] | None = None
    """Set after `--remote` upload: `{endpoint, name, version, id?}`."""

    @field_validator("file")
    @classmethod
    def _inside(cls, value: str) -> str:
        parts = value.split("/")
        if (
            not value
            or value.startswith(("/", "\\"))
            or ".." in parts
            or len(value) > 1024
            or any(len(part) > 255 for part in parts)
        ):
            shown = value if len(value) <= 40 else value[:37] + "..."
            raise ValueError(
                f'expected a path inside the registry like "datasets/<name>.v1.jsonl", '
                f'found "{shown}"'
            )
        return value


class _Name(LazyModel):
    model_config = ConfigDict(extra="allow")

    versions: dict[str, VersionEntry] = Field(default_factory=dict)

    @field_validator("versions", mode="before")
    @classmethod
    def _none_is_empty(cls, value: Any) -> Any:
        return {} if value is None else value

    @field_validator("versions")
    @classmethod
    def _numbered(cls, value: dict[str, VersionEntry]) -> dict[str, VersionEntry]:
        for version in value:  # the version strings azd and agentopt write (core.versions)
            problem = version_problem(version)
            if problem is not None:
                raise ValueError(problem)
        return value


class IndexFile(LazyModel):
    """The whole of registry.json."""

    model_config = ConfigDict(extra="allow")

    datasets: dict[str, _Name] = Field(default_factory=dict)
    evaluators: dict[str, _Name] = Field(default_factory=dict)

    @field_validator("datasets", "evaluators", mode="before")
    @classmethod
    def _none_is_empty(cls, value: Any) -> Any:
        if isinstance(value, dict):
            return {k: ({} if v is None else v) for k, v in value.items()}
        return {} if value is None else value


def parse_index(data: Any, source: str) -> dict[str, dict[str, dict[str, VersionEntry]]]:
    """kind → name → version → entry, or a ConfigError naming the file and every bad key."""
    if not isinstance(data, dict):
        found = "null" if data is None else type(data).__name__
        raise ConfigError.at(source, "", f"expected a JSON object, found {found}")
    try:
        index = IndexFile.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(
            problems=problems_of(exc, source),
            hint="registry.json is agentopt's index: restore it from version control, or "
            "delete it and the registry is rebuilt from the version files",
        ) from None
    return {
        kind: {n: dict(sorted(b.versions.items(), key=_vkey)) for n, b in names.items()}
        for kind, names in (("datasets", index.datasets), ("evaluators", index.evaluators))
    }


def _vkey(item: tuple[str, Any]) -> int:
    return int(item[0]) if str(item[0]).isdigit() else 0
