"""What every saved record shares: unknown keys survive, files carry a schema version, and a
record that does not parse is an error naming the file and the place.

Saved records are read back by other versions of agentopt (`eval show` of an old run, `--resume`
after an upgrade, `--compare` across versions), so their models accept keys they do not know
and keep them on a round trip (`extra="allow"`); mypy still rejects an unknown keyword where a
record is built. A file's `schema_version` changes only when a shape changes in a way an older
reader would misread; a newer file than this version knows is refused with a message, an older
one is migrated by `MIGRATIONS` before it is validated (there is one version so far).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from agentopt.core.errors import InputError, Problem
from agentopt.core.journal import read_numbered
from agentopt.core.lazy_model import LazyModel

SCHEMA_VERSION = 1
"""The version of run.json, results.json and job.json this agentopt writes (and journals
carry their folder's version). Files written before versions existed are version 1."""

MIGRATIONS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {}
"""version N → a function turning a version-N file into version N + 1 (none needed yet)."""

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)


class Record(LazyModel):
    """A model of something agentopt saves: unknown keys load and survive a round trip."""

    model_config = ConfigDict(extra="allow")


class SparseRecord(Record):
    """A record with keys added after its first version (`sparse` fields): while unset (None
    or False) they are left out of the file, so what an older version wrote is written again
    with the same keys and values, and an older reader never meets them.

    Each such field says so itself (`exclude_if`): pydantic-core leaves it out as it writes.
    A model serializer that dropped the keys from the dump made every record of the tree a
    call into Python and a dict, in every journal line and results.json row."""


def unset(value: Any) -> bool:
    """Whether a `sparse` field is left out of the file."""
    return value is None or value is False


def sparse(default: Any = None) -> Any:
    """A field of a `SparseRecord` added after its first version (left out while unset)."""
    return Field(default, exclude_if=unset)


class VersionedRecord(Record):
    """The root of a saved file: carries `schema_version` and is migrated on read."""

    schema_version: int = SCHEMA_VERSION
    """Shape version of the file (absent in files written before versions existed: 1)."""

    @model_validator(mode="before")
    @classmethod
    def _migrate(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        version = data.get("schema_version", 1)
        if not isinstance(version, int) or isinstance(version, bool) or version < 1:
            raise ValueError(f"schema_version: expected a version number like 1, found {version!r}")
        if version > SCHEMA_VERSION:
            raise ValueError(
                f"schema_version {version!r} is newer than this agentopt reads "
                f"({SCHEMA_VERSION}): upgrade agentopt to read this file"
            )
        while version < SCHEMA_VERSION:
            data = MIGRATIONS[version](data)
            version += 1
        return {**data, "schema_version": version}


def problems_of(exc: ValidationError, source: str, prefix: str = "") -> list[Problem]:
    """Pydantic's errors as located Problems (the first 20)."""
    out = []
    for err in exc.errors()[:20]:
        where = ".".join(str(p) for p in err["loc"])
        location = f"{prefix}{where}" if prefix and where else prefix or where
        out.append(Problem(source, location, f"{err['msg']} (found {_short(err.get('input'))})"))
    return out


def parse_record(model: type[M], data: Any, *, source: str, hint: str | None = None) -> M:
    """Validate a saved record, turning pydantic errors into an InputError naming the keys."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise InputError(problems=problems_of(exc, source), hint=hint) from exc


def read_journal(path: Path, parse: Callable[[Any], T]) -> Iterator[T]:
    """A journal's entries as records, in order. A torn last line (a crash mid-write) is
    skipped; an entry that is JSON but not a record is an InputError naming its line."""
    for number, entry in read_numbered(path):
        try:
            yield parse(entry)
        except ValidationError as exc:
            raise InputError(
                problems=problems_of(exc, str(path), f"line {number}: "),
                hint="is this journal from another agentopt version? start a new run",
            ) from exc


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
