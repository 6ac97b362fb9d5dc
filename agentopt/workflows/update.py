"""`eval update` (cli.md): register edited working copies as new versions and re-pin eval.yaml.

For every dataset section and evaluator entry of eval.yaml that has both a registry `name` and
a `local_uri` working copy, the copy is compared by content hash with the version eval.yaml
pins (or the latest, when it pins none). Everything is validated first, with the same loaders
`eval run` uses; one broken file refuses the whole update — file, line and reason — and
nothing is registered. Then changed copies become new versions — or, when a copy is back to
the content of an existing version, that version again — and eval.yaml is rewritten
round-trip (comments and key order kept, a backup first) with the new version numbers.

A registered version file edited by hand (its sha256 no longer matches) is an edit too: its
content is registered the same way and pinned, and the working copy, when there is one, is
brought in line after a backup. The edited file itself is left as it is (nothing restored
silently); a version file is only ever rewritten with content that hashes to exactly what it
recorded, and that is reported.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import ConfigDict, Field

from agentopt.core.atomic import backup, write_bytes_atomic, write_json_atomic
from agentopt.core.errors import InputError, Problem
from agentopt.core.files.eval_yaml import DatasetRef, EvalConfig, EvaluatorEntry
from agentopt.core.files.eval_yaml_load import load_eval_config
from agentopt.core.files.eval_yaml_write import update_pinned_versions
from agentopt.core.files.evaluator_yaml import EvaluatorSpec, RubricDefinition, parse_evaluator_yaml
from agentopt.core.files.problems import Collector, LineIndex
from agentopt.core.files.rubric import RubricDimension, check_dimensions
from agentopt.core.files.yaml_source import parse_json, parse_yaml, read_text
from agentopt.core.lazy_model import LazyModel
from agentopt.core.versions import find_version, same_version
from agentopt.datasets import resolve_dataset_path, validate_dataset
from agentopt.evaluators.judges.rubric import DEFAULT_THRESHOLD
from agentopt.registry import (
    AssetKind,
    Registry,
    VersionEntry,
    dataset_sha256,
    evaluator_sha256,
)
from agentopt.registry.hashing import BYTES, CANONICAL
from agentopt.workflows.generate.remote import ClientFactory, require_endpoint, upload_dataset
from agentopt.workflows.suite_assets import DATASET_SECTIONS, find_project_dir

RUBRIC_FILE = "rubric_dimensions.json"
NOTHING_REGISTERED = (
    "nothing was registered and eval.yaml is unchanged; fix the file, then run "
    "`agentopt eval update` again"
)


class AssetChange(LazyModel):
    """One working copy and what became of it."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["Dataset", "Evaluator"]
    name: str
    version: str
    """The version eval.yaml pins now."""
    previous: str | None
    """The version it pinned before (None: unpinned or never registered)."""
    file: Path
    remote: dict[str, Any] | None = None
    notes: list[str] = Field(default_factory=list)
    """What else happened: a hand-edited registered file taken as the edit, a working copy
    brought in line (with its backup), a version file rewritten with its own content."""

    @property
    def changed(self) -> bool:
        return not same_version(self.version, self.previous)

    def line(self) -> str:
        """`✓ Dataset NAME → version N` or `= Evaluator NAME unchanged (version N)`."""
        if self.changed:
            return f"✓ {self.kind} {self.name} → version {self.version}"
        return f"= {self.kind} {self.name} unchanged (version {self.version})"


class UpdateResult(LazyModel):
    """What `update_suite` did."""

    model_config = ConfigDict(extra="forbid")

    config_path: Path
    changes: list[AssetChange]
    backup: Path | None = None
    """The copy of eval.yaml made before rewriting it (None: not rewritten)."""

    @property
    def updated(self) -> bool:
        return any(c.changed for c in self.changes)


@dataclass
class _Planned:
    kind: Literal["Dataset", "Evaluator"]
    key: str
    """The dataset section, or the evaluator name."""
    name: str
    pinned: str | None
    path: Path
    """Where the content comes from: the working copy, or a hand-edited version file."""
    sha: Callable[[str], str]
    """The content's hash under a registry hashing scheme."""
    content: bytes | None = None
    spec: EvaluatorSpec | None = None
    copy: Path | None = None
    """For a hand-edited version file: the working copy to bring in line with it."""


def update_suite(
    config_path: Path,
    *,
    datasets: bool = True,
    evaluators: bool = True,
    project_dir: Path | None = None,
    remote: bool = False,
    project_endpoint: str | None = None,
    client_factory: ClientFactory | None = None,
) -> UpdateResult:
    """Register changed working copies and re-pin eval.yaml.

    Raises:
        ConfigError: eval.yaml itself is invalid, or `--remote` without an endpoint.
        InputError: a working copy is invalid (every problem, with file and line); nothing
            was registered.
    """
    config, _warnings = load_eval_config(config_path)
    if remote:
        require_endpoint(project_endpoint)
    registry = Registry(project_dir or find_project_dir(config_path))
    problems: list[Problem] = []
    planned: list[_Planned] = []
    if datasets:
        for key in DATASET_SECTIONS:
            ref: DatasetRef | None = getattr(config, key)
            if ref is not None and ref.name:
                planned.extend(_plan_dataset(registry, key, ref, problems))
    if evaluators:
        for entry in config.evaluators:
            if entry.local_uri is not None or entry.name in registry.names("evaluators"):
                planned.extend(_plan_evaluator(registry, entry, problems))
    errors = [p for p in problems if p.severity == "error"]
    if errors:
        raise InputError(problems=errors, hint=NOTHING_REGISTERED)
    changes = [_apply(registry, item, config) for item in planned]
    moved = [(i, c) for i, c in zip(planned, changes, strict=True) if c.changed]
    pins_ds = {i.key: c.version for i, c in moved if c.kind == "Dataset"}
    pins_ev = {c.name: c.version for _, c in moved if c.kind == "Evaluator"}
    saved = None
    if pins_ds or pins_ev:
        saved = update_pinned_versions(config_path, datasets=pins_ds, evaluators=pins_ev)
    if remote and project_endpoint:
        for change in changes:
            if change.kind == "Dataset" and change.changed:
                change.remote = upload_dataset(
                    registry,
                    change.name,
                    change.version,
                    project_endpoint,
                    client_factory=client_factory,
                )
    return UpdateResult(config_path=config_path, changes=changes, backup=saved)


def _plan_dataset(
    registry: Registry, key: str, ref: DatasetRef, problems: list[Problem]
) -> list[_Planned]:
    assert ref.name
    edited = _edited_pinned(registry, "datasets", ref.name, ref.version)
    copy: Path | None = None
    if ref.local_uri is not None:
        try:
            copy = resolve_dataset_path(ref.local_uri)
        except InputError as exc:
            problems.extend(exc.problems)
            return []
    if copy is not None and edited is not None and copy.resolve() == edited.resolve():
        copy = None  # local_uri is the registered file itself: one file, one edit
    path = edited or copy
    if path is None:
        return []
    found = validate_dataset(path)
    problems.extend(found)
    if any(p.severity == "error" for p in found):
        return []
    content = path.read_bytes()
    ext = _ext(path)

    def sha(scheme: str) -> str:
        return dataset_sha256(content, ext, scheme)

    if edited is not None and copy is not None:
        copy_bytes = copy.read_bytes()
        pinned = _entry(
            registry, "datasets", ref.name, ref.version or registry.latest("datasets", ref.name)
        )
        assert pinned is not None
        if dataset_sha256(copy_bytes, _ext(copy), pinned.hashing or BYTES) != pinned.sha256:
            problems.append(_two_edits(edited, copy))
        if dataset_sha256(copy_bytes, _ext(copy)) == sha(CANONICAL):
            copy = None  # it holds that content already
    return [
        _Planned(
            "Dataset", key, ref.name, ref.version, path, sha, content, copy=copy if edited else None
        )
    ]


def _plan_evaluator(
    registry: Registry, entry: EvaluatorEntry, problems: list[Problem]
) -> list[_Planned]:
    edited = _edited_pinned(registry, "evaluators", entry.name, entry.version)
    copy = Path(entry.local_uri) if entry.local_uri is not None else None
    if copy is not None and copy.is_dir() and (copy / RUBRIC_FILE).is_file():
        copy = copy / RUBRIC_FILE
    if copy is not None and copy.suffix.lower() not in (".json", ".yaml", ".yml"):
        copy = None  # code and .prompty evaluators are used in place, not registered
    if copy is not None and edited is not None and copy.resolve() == edited.resolve():
        copy = None  # local_uri is the registered file itself: one file, one edit
    source = edited or copy
    if source is None:
        return []
    try:
        spec = _evaluator_spec(registry, entry, source)
        copy_spec = _evaluator_spec(registry, entry, copy) if edited and copy else None
    except InputError as exc:
        problems.extend(exc.problems)
        return []
    semantic = evaluator_sha256(spec)
    if edited is not None and copy is not None and copy_spec is not None:
        pinned = _entry(
            registry,
            "evaluators",
            entry.name,
            entry.version or registry.latest("evaluators", entry.name),
        )
        assert pinned is not None
        if evaluator_sha256(copy_spec) != pinned.sha256:
            problems.append(_two_edits(edited, copy))
    return [
        _Planned(
            "Evaluator",
            entry.name,
            entry.name,
            entry.version,
            source,
            lambda _scheme: semantic,
            spec=spec,
            copy=copy if edited else None,
        )
    ]


def _evaluator_spec(registry: Registry, entry: EvaluatorEntry, path: Path) -> EvaluatorSpec:
    if path.suffix.lower() == ".json":
        return _rubric_spec(registry, entry, load_rubric_located(path))
    return parse_evaluator_yaml(read_text(path, shown=str(path)), str(path))


def _ext(path: Path) -> str:
    return path.suffix.lstrip(".").lower() or "jsonl"


def _edited_pinned(
    registry: Registry, kind: AssetKind, name: str, version: str | None
) -> Path | None:
    """The pinned (else latest) version's file, when it was edited by hand."""
    version = version or registry.latest(kind, name)
    found = find_version(registry.versions(kind, name), version) if version else None
    if found is None:
        return None
    return dict(registry.edited_versions(kind, name)).get(found)


def _two_edits(edited: Path, copy: Path) -> Problem:
    """A working copy edited as well as the registered file: keep one edit, lose none."""
    return Problem(
        str(edited),
        "",
        f"edited by hand, and its working copy {copy} was edited too: keep one of the two "
        "edits (restore the other file) and run `agentopt eval update` again",
    )


def load_rubric_located(path: Path) -> list[RubricDimension]:
    """rubric_dimensions.json validated like the rubric loader, with each problem's line.

    JSON has no line index of its own; JSON is YAML, so the YAML reader supplies one.
    """
    shown = str(path)
    text = read_text(path, shown=shown)
    data = parse_json(text, shown)
    try:
        _, lines = parse_yaml(text, shown)
    except InputError:  # tabs and the like: valid JSON, not valid YAML — no lines then
        lines = LineIndex()
    c = Collector(shown, lines)
    prefix: tuple[str | int, ...] = ()
    if isinstance(data, dict) and "dimensions" in data:
        data, prefix = data["dimensions"], ("dimensions",)
    dims = check_dimensions(c, prefix, data)
    c.raise_if_errors()
    return dims


def _rubric_spec(
    registry: Registry, entry: EvaluatorEntry, dims: list[RubricDimension]
) -> EvaluatorSpec:
    """The pinned version's spec with the edited dimensions (threshold, description kept)."""
    base: EvaluatorSpec | None = None
    version = entry.version or registry.latest("evaluators", entry.name)
    if _entry(registry, "evaluators", entry.name, version) is not None:
        path = registry.lookup("evaluators", entry.name, version, verify=False)
        try:  # even a hand-edited version lends its threshold and description
            base = parse_evaluator_yaml(read_text(path, shown=str(path)), str(path))
        except InputError:
            base = None
    if base is not None and base.type == "rubric":
        return base.model_copy(update={"definition": RubricDefinition(dimensions=dims)})
    return EvaluatorSpec(
        name=entry.name,
        type="rubric",
        description="Quality rubric edited by hand.",
        threshold=DEFAULT_THRESHOLD,
        definition=RubricDefinition(dimensions=dims),
    )


def _apply(registry: Registry, item: _Planned, config: EvalConfig) -> AssetChange:
    kind_dir: AssetKind = "datasets" if item.kind == "Dataset" else "evaluators"
    current = item.pinned or registry.latest(kind_dir, item.name)
    entry = _entry(registry, kind_dir, item.name, current)
    shown = _shown(item.copy or item.path, config)
    edited = item.copy is not None or _is_registered_file(registry, item.path)
    if entry is not None and not edited and item.sha(entry.hashing or BYTES) == entry.sha256:
        return AssetChange(
            kind=item.kind, name=item.name, version=current or "1", previous=current, file=shown
        )
    source = {"kind": "edited", "file": _shown(item.path, config).as_posix()}
    before = len(registry.restored)
    if item.kind == "Dataset":
        assert item.content is not None
        ext = item.path.suffix.lstrip(".").lower() or "jsonl"
        version, _ = registry.register_dataset(
            item.name, item.content, source, ext=ext, after=item.pinned
        )
    else:
        assert item.spec is not None
        version, _ = registry.register_evaluator(item.name, item.spec, source, after=item.pinned)
    notes = []
    if edited:
        notes.append(
            f"{_shown(item.path, config)} was edited by hand after registration: its content is "
            f"version {version} now; the file itself was left as it is"
        )
    if item.copy is not None:
        saved = backup(item.copy)
        _write_copy(item, item.copy)
        notes.append(f"{shown} now holds version {version} (backup: {_shown(saved, config)})")
    for path in registry.restored[before:]:
        notes.append(
            f"{_shown(path, config)} had been edited by hand; it holds its registered content "
            "again (the same sha256)"
        )
    return AssetChange(
        kind=item.kind,
        name=item.name,
        version=version,
        previous=item.pinned,
        file=shown,
        notes=notes,
    )


def _write_copy(item: _Planned, copy: Path) -> None:
    """Bring a working copy in line with a hand-edited registered version (after a backup)."""
    if item.kind == "Dataset":
        assert item.content is not None
        write_bytes_atomic(copy, item.content)
        return
    assert item.spec is not None
    if copy.suffix.lower() == ".json" and isinstance(item.spec.definition, RubricDefinition):
        dims = [d.model_dump(exclude_defaults=True) for d in item.spec.definition.dimensions]
        write_json_atomic(copy, dims)
    else:
        write_bytes_atomic(copy, item.path.read_bytes())


def _is_registered_file(registry: Registry, path: Path) -> bool:
    try:
        path.resolve().relative_to(registry.root.resolve())
    except ValueError:
        return False
    return True


def _entry(
    registry: Registry, kind: AssetKind, name: str, version: str | None
) -> VersionEntry | None:
    if version is None or find_version(registry.versions(kind, name), version) is None:
        return None
    return registry.entry(kind, name, version)


def _shown(path: Path, config: EvalConfig) -> Path:
    try:
        return path.resolve().relative_to(config.base_dir.resolve())
    except ValueError:
        return path
