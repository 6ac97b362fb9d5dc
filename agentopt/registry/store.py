"""The local registry under `.azure/.foundry/` (files.md §6): immutable, numbered versions of
datasets and evaluators, and `registry.json`, the index.

Crash safety: every file is written atomically (temp + fsync + rename), and a version file is
written *before* the index entry that names it. So after a crash there is at worst a version
file the index does not know; opening the registry adopts such a file (its bytes are complete,
the rename guarantees it) and the next write records it. An index entry never points at a
missing or half-written file.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NamedTuple

from agentopt.core.atomic import write_bytes_atomic, write_json_atomic
from agentopt.core.errors import ConfigError, InputError, Problem
from agentopt.core.files import bounded
from agentopt.core.files.evaluator_yaml import (
    EvaluatorSpec,
    RubricDefinition,
    dump_evaluator_yaml,
    parse_evaluator_yaml,
)
from agentopt.core.files.rubric import RubricDimension
from agentopt.core.files.yaml_source import load_json, read_text
from agentopt.core.ids import utc_now_iso
from agentopt.core.paths import inside_project, registry_dir
from agentopt.core.versions import find_version, latest_version, version_key
from agentopt.core.versions import next_version as bump
from agentopt.registry.hashing import (
    BYTES,
    CANONICAL,
    dataset_sha256,
    evaluator_sha256,
    file_sha256,
)
from agentopt.registry.index_file import VersionEntry, parse_index
from agentopt.registry.names import (
    DATASET_EXT,
    EVALUATOR_EXT,
    KINDS,
    VERSION_FILE_RE,
    AssetKind,
    check_name,
    version_file_name,
)

INDEX_FILE = "registry.json"
INDEX_SCHEMA = 1


class Registered(NamedTuple):
    """The answer of a register call: `version, changed = registry.register_dataset(...)`."""

    version: str
    """The new version, or the existing version with the same content."""
    changed: bool
    """False when the content matched an existing version (no version was minted)."""


Index = dict[str, dict[str, dict[str, VersionEntry]]]
"""kind ("datasets" | "evaluators") → name → version → entry."""


TAMPER_HINT = (
    "run `agentopt eval update` to register the edit as a new version (nothing is restored "
    "automatically; restore the file, e.g. from version control, to keep the old version)"
)


class Registry:
    """Versioned datasets and evaluators of one agent project."""

    def __init__(self, project_dir: Path | str) -> None:
        self.project_dir = Path(project_dir)
        self.root = registry_dir(self.project_dir)
        self.index_path = self.root / INDEX_FILE
        self.restored: list[Path] = []
        """Hand-edited version files this registry rewrote because content registered again
        hashed to exactly what they recorded (see `_register`); callers report them."""

    # ---- reading -------------------------------------------------------------------------
    def index(self) -> Index:
        """kind → name → version → entry, with orphan version files adopted."""
        return self._load()[0]

    def _load(self) -> tuple[Index, bool]:
        out: Index = parse_index(self._read_index(), str(self.index_path))
        adopted = self._adopt_orphans(out)
        return out, adopted

    def names(self, kind: AssetKind) -> list[str]:
        return sorted(self.index()[kind])

    def versions(self, kind: AssetKind, name: str) -> list[str]:
        """Registered versions of `name`, oldest first."""
        return list(self.index()[kind].get(name, {}))

    def latest(self, kind: AssetKind, name: str) -> str | None:
        versions = self.versions(kind, name)
        return versions[-1] if versions else None

    def next_version(self, kind: AssetKind, name: str) -> str:
        """One more than the highest version known to the index or present on disk."""
        return bump(latest_version(self.versions(kind, name)))

    def entry(self, kind: AssetKind, name: str, version: str) -> VersionEntry:
        versions = self.index()[kind].get(name)
        if not versions:
            known = ", ".join(self.names(kind)) or "none"
            raise ConfigError.at(
                str(self.index_path),
                f"{kind}.{name}",
                f'no registered {kind[:-1]} named "{name}" (registered: {known})',
            )
        found = find_version(versions, str(version))  # "1.0" (azd's) is "1"
        if found is None:
            raise ConfigError.at(
                str(self.index_path),
                f"{kind}.{name}",
                f'no version "{version}" of {name} (versions: {", ".join(versions)})',
            )
        return versions[found]

    def lookup(
        self, kind: AssetKind, name: str, version: str | None = None, *, verify: bool = True
    ) -> Path:
        """The file of one version (default: the latest), checked against its sha256.

        Raises:
            InputError: the file was edited after registration (or is missing), naming it and
                saying to run `agentopt eval update`; `verify=False` skips the check.
        """
        version = version or self.latest(kind, name)
        if version is None:
            self.entry(kind, name, "1")  # raises the "not registered" error
        entry = self.entry(kind, name, str(version))
        path = self.root / entry.file
        if verify:
            problem = self._damage(kind, name, str(version), entry)
            if problem is not None:
                raise InputError(problems=[problem], hint=TAMPER_HINT)
        return path

    def read_evaluator(self, name: str, version: str | None = None) -> EvaluatorSpec:
        path = self.lookup("evaluators", name, version)
        return parse_evaluator_yaml(read_text(path, kind="yaml"), str(path))

    def edited_versions(self, kind: AssetKind, name: str) -> list[tuple[str, Path]]:
        """Versions of `name` whose file no longer matches its sha256 (edited by hand)."""
        versions = self.index()[kind].get(name, {})
        return [
            (v, self.root / e.file)
            for v, e in versions.items()
            if (self.root / e.file).is_file() and self._damage(kind, name, v, e) is not None
        ]

    # ---- writing -------------------------------------------------------------------------
    def register_dataset(
        self,
        name: str,
        content: bytes,
        source: dict[str, Any] | None = None,
        *,
        ext: str = DATASET_EXT,
        after: str | None = None,
    ) -> Registered:
        """Register dataset bytes as a new version unless they equal the latest version's.
        `after`: a version eval.yaml pins that this registry may not hold (azd's "1.0",
        registered in Foundry): a new version comes after it, in its style ("2.0")."""
        check_name(name)
        if not content.strip():
            raise InputError.at(name, "", "cannot register an empty dataset")
        ext = ext.lower()

        def sha(scheme: str) -> str:
            return dataset_sha256(content, ext, scheme)

        with self._locked():
            return self._register("datasets", name, sha, lambda v: content, ext, source, after)

    def register_evaluator(
        self,
        name: str,
        spec: EvaluatorSpec | str,
        source: dict[str, Any] | None = None,
        *,
        after: str | None = None,
    ) -> Registered:
        """Register an evaluator (a spec or its YAML text); name/version/time are set here
        (`after` as in `register_dataset`)."""
        check_name(name)
        if isinstance(spec, str):
            spec = parse_evaluator_yaml(spec, f"{name} (evaluator YAML)")
        semantic = evaluator_sha256(spec)
        src = source if source is not None else spec.source

        def sha(scheme: str) -> str:
            return semantic

        def render(version: str) -> bytes:
            final = spec.model_copy(
                update={
                    "name": name,
                    "version": version,
                    "created_at": utc_now_iso(),
                    "source": src,
                }
            )
            return dump_evaluator_yaml(final).encode("utf-8")

        with self._locked():
            return self._register("evaluators", name, sha, render, EVALUATOR_EXT, src, after)

    def register_rubric(
        self,
        name: str,
        dimensions: list[RubricDimension],
        source: dict[str, Any] | None = None,
        *,
        description: str | None = None,
        threshold: float | None = None,
    ) -> Registered:
        """Register an edited `rubric_dimensions.json` as a rubric evaluator; description and
        threshold default to the latest version's, so an edit of the weights alone is a new
        version and re-saving the same rubric is "unchanged"."""
        latest = self.latest("evaluators", name)
        previous = self.read_evaluator(name, latest) if latest else None
        spec = EvaluatorSpec(
            name=name,
            type="rubric",
            description=description
            if description is not None
            else (previous.description if previous else ""),
            threshold=threshold
            if threshold is not None
            else (previous.threshold if previous else 0.5),
            definition=RubricDefinition(dimensions=list(dimensions)),
        )
        return self.register_evaluator(name, spec, source)

    def set_remote(self, kind: AssetKind, name: str, version: str, remote: dict[str, Any]) -> None:
        """Record where a version was uploaded (`--remote`)."""
        with self._locked():
            index = self.index()
            entry = self.entry(kind, name, version)
            index[kind][name][version] = entry.model_copy(update={"remote": remote})
            self._write_index(index)

    def verify(self) -> list[Problem]:
        """Every index entry whose file is missing or whose hash no longer matches."""
        problems: list[Problem] = []
        for kind, names in self.index().items():
            for name, versions in names.items():
                for version, entry in versions.items():
                    problem = self._damage(kind, name, version, entry)
                    if problem is not None:
                        problems.append(problem)
        return problems

    # ---- internals -----------------------------------------------------------------------
    def _damage(self, kind: str, name: str, version: str, entry: VersionEntry) -> Problem | None:
        """Why a version's file cannot be trusted (missing, or edited), else None."""
        path = self.root / entry.file
        what = f'version {version} of {kind[:-1]} "{name}"'
        if not path.is_file():
            return Problem(str(path), "", f"missing: registry.json lists it as {what}")
        if self._hash_file(kind, path, entry.hashing or BYTES) == entry.sha256:
            return None
        return Problem(
            str(path),
            "",
            f"edited by hand after it was registered as {what}: its content no longer matches "
            "the sha256 recorded in registry.json",
        )

    def _register(
        self,
        kind: AssetKind,
        name: str,
        sha: Callable[[str], str],
        render: Callable[[str], bytes],
        ext: str,
        source: Any,
        after: str | None = None,
    ) -> Registered:
        """Mint a version, unless some version (not only the latest) has this very content:
        reverting an asset to an earlier content reuses that version."""
        index, adopted = self._load()
        versions = index[kind].setdefault(name, {})
        for existing, entry in reversed(versions.items()):
            if entry.sha256 != sha(entry.hashing or BYTES):
                continue
            path = self.root / entry.file
            if self._damage(kind, name, existing, entry) is not None:
                write_bytes_atomic(path, render(existing))  # the very content it recorded
                self.restored.append(path)
            if adopted:
                self._write_index(index)  # record what a crash left unindexed
            return Registered(existing, False)
        version = bump(latest_version([*versions, *([after] if after else [])]))
        rel = f"{kind}/{version_file_name(name, version, ext)}"
        path = self.root / rel
        while path.exists():  # never overwrite an immutable file, even an unindexed one
            version = bump(version)
            rel = f"{kind}/{version_file_name(name, version, ext)}"
            path = self.root / rel
        inside_project(self.project_dir, path, "the registry file")  # `datasets/` as a link
        write_bytes_atomic(path, render(version))
        versions[version] = VersionEntry(
            sha256=sha(CANONICAL),
            hashing=CANONICAL if kind == "datasets" else None,
            created_at=utc_now_iso(),
            source=_source(source),
            file=rel,
        )
        self._write_index(index)
        return Registered(version, True)

    def _read_index(self) -> Any:
        if not os.path.lexists(self.index_path):
            return {}
        try:
            data = load_json(self.index_path)
        except InputError as exc:
            raise ConfigError(problems=exc.problems) from None
        return data

    def _write_index(self, index: Index) -> None:
        data: dict[str, Any] = {"schema": INDEX_SCHEMA}
        for kind in KINDS:
            data[kind] = {
                name: {
                    "versions": {v: e.model_dump(exclude_none=True) for v, e in versions.items()}
                }
                for name, versions in sorted(index[kind].items())
                if versions
            }
        write_json_atomic(self.index_path, data)

    def _adopt_orphans(self, index: Index) -> bool:
        """Version files a crash left without an index entry join the index (in memory)."""
        adopted = False
        for kind in KINDS:
            folder = self.root / kind
            if not folder.is_dir():
                continue
            known = {e.file for versions in index[kind].values() for e in versions.values()}
            for path in sorted(folder.iterdir()):
                match = VERSION_FILE_RE.match(path.name)
                rel = f"{kind}/{path.name}"
                if not match or rel in known or not path.is_file():
                    continue
                sha = self._hash_file(kind, path, CANONICAL)
                if not sha:
                    continue  # not a readable evaluator: leave it alone
                created = datetime.fromtimestamp(path.stat().st_mtime, UTC).replace(microsecond=0)
                versions = index[kind].setdefault(match["name"], {})
                versions[match["version"]] = VersionEntry(
                    sha256=sha,
                    hashing=CANONICAL if kind == "datasets" else None,
                    created_at=created.isoformat().replace("+00:00", "Z"),
                    source={"kind": "recovered"},
                    file=rel,
                )
                index[kind][match["name"]] = dict(sorted(versions.items(), key=_vkey))
                adopted = True
        return adopted

    def _hash_file(self, kind: str, path: Path, scheme: str) -> str:
        """The file's hash under `scheme`; "" for an evaluator YAML that no longer parses."""
        ext = path.suffix.lstrip(".").lower()
        try:
            return file_sha256(kind, bounded.read_bytes(path, kind="dataset"), ext, scheme)
        except (InputError, UnicodeDecodeError):
            return ""

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        """One writer at a time across processes (POSIX advisory lock; no-op elsewhere)."""
        self.root.mkdir(parents=True, exist_ok=True)
        try:
            import fcntl
        except ImportError:  # pragma: no cover - Windows
            yield
            return
        fd = os.open(self.root / ".lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)


def _vkey(item: tuple[str, Any]) -> tuple[int, float, str, int]:
    return version_key(str(item[0]))


def _source(source: Any) -> dict[str, Any]:
    if source is None:
        return {}
    if isinstance(source, dict):
        return dict(source)
    return {"kind": str(source)}
