"""`eval update` (cli.md): register edited working copies as new versions and re-pin eval.yaml.

For every dataset section and evaluator entry of eval.yaml that has both a registry `name` and
a `local_uri` working copy, the copy is compared by content hash with the version eval.yaml
pins (or the latest, when it pins none). Everything is validated first, with the same loaders
`eval run` uses; one broken file refuses the whole update — file, line and reason — and
nothing is registered. Then changed copies become new versions, and eval.yaml is rewritten
round-trip (comments and key order kept, a backup first) with the new version numbers.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from agentopt.core.errors import InputError, Problem
from agentopt.core.files.eval_yaml import DatasetRef, EvalConfig, EvaluatorEntry
from agentopt.core.files.eval_yaml_load import load_eval_config
from agentopt.core.files.eval_yaml_write import update_pinned_versions
from agentopt.core.files.evaluator_yaml import EvaluatorSpec, RubricDefinition
from agentopt.core.files.problems import Collector, LineIndex
from agentopt.core.files.rubric import RubricDimension, check_dimensions
from agentopt.core.files.yaml_source import parse_json, parse_yaml, read_text
from agentopt.core.paths import REGISTRY_DIR
from agentopt.datasets import resolve_dataset_path, validate_dataset
from agentopt.evaluators.judges.rubric import DEFAULT_THRESHOLD
from agentopt.registry import INDEX_FILE, Registry, content_sha256, evaluator_sha256
from agentopt.workflows.generate.remote import ClientFactory, require_endpoint, upload_dataset

DATASET_SECTIONS = ("dataset", "validation_dataset", "test_dataset")
RUBRIC_FILE = "rubric_dimensions.json"
NOTHING_REGISTERED = (
    "nothing was registered and eval.yaml is unchanged; fix the file, then run "
    "`agentopt eval update` again"
)


class AssetChange(BaseModel):
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

    @property
    def changed(self) -> bool:
        return self.version != self.previous

    def line(self) -> str:
        """`✓ Dataset NAME → version N` or `= Evaluator NAME unchanged (version N)`."""
        if self.changed:
            return f"✓ {self.kind} {self.name} → version {self.version}"
        return f"= {self.kind} {self.name} unchanged (version {self.version})"


class UpdateResult(BaseModel):
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
    sha: str
    content: bytes | None = None
    spec: EvaluatorSpec | None = None


def find_project_dir(config_path: Path) -> Path:
    """The folder holding `.azure/.foundry/` at or above eval.yaml (else eval.yaml's folder)."""
    start = config_path.resolve().parent
    for folder in (start, *start.parents):
        if (folder / REGISTRY_DIR / INDEX_FILE).is_file():
            return folder
    return start


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
            if ref is not None and ref.name and ref.local_uri is not None:
                planned.extend(_plan_dataset(registry, key, ref, problems))
    if evaluators:
        for entry in config.evaluators:
            if entry.local_uri is not None:
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
    assert ref.name and ref.local_uri is not None
    try:
        path = resolve_dataset_path(ref.local_uri)
    except InputError as exc:
        problems.extend(exc.problems)
        return []
    found = validate_dataset(path)
    problems.extend(found)
    if any(p.severity == "error" for p in found):
        return []
    content = path.read_bytes()
    return [_Planned("Dataset", key, ref.name, ref.version, path, content_sha256(content), content)]


def _plan_evaluator(
    registry: Registry, entry: EvaluatorEntry, problems: list[Problem]
) -> list[_Planned]:
    path = Path(entry.local_uri or "")
    if path.is_dir() and (path / RUBRIC_FILE).is_file():
        path = path / RUBRIC_FILE
    suffix = path.suffix.lower()
    if suffix not in (".json", ".yaml", ".yml"):
        return []  # code evaluators (.py) are used in place, not registered
    try:
        if suffix == ".json":
            dims = load_rubric_located(path)
            spec = _rubric_spec(registry, entry, dims)
        else:
            from agentopt.core.files.evaluator_yaml import parse_evaluator_yaml

            spec = parse_evaluator_yaml(read_text(path, shown=str(path)), str(path))
    except InputError as exc:
        problems.extend(exc.problems)
        return []
    sha = evaluator_sha256(spec)
    return [_Planned("Evaluator", entry.name, entry.name, entry.version, path, sha, spec=spec)]


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
    if _entry_sha(registry, "evaluators", entry.name, entry.version) is not None:
        base = registry.read_evaluator(entry.name, entry.version)
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
    kind_dir = "datasets" if item.kind == "Dataset" else "evaluators"
    pinned_sha = _entry_sha(registry, kind_dir, item.name, item.pinned)
    current = item.pinned or registry.latest(kind_dir, item.name)  # type: ignore[arg-type]
    shown = _shown(item.path, config)
    if pinned_sha == item.sha and current is not None:
        return AssetChange(
            kind=item.kind, name=item.name, version=current, previous=current, file=shown
        )
    source = {"kind": "edited", "file": shown.as_posix()}
    if item.kind == "Dataset":
        assert item.content is not None
        ext = item.path.suffix.lstrip(".").lower() or "jsonl"
        version, _ = registry.register_dataset(item.name, item.content, source, ext=ext)
    else:
        assert item.spec is not None
        version, _ = registry.register_evaluator(item.name, item.spec, source)
    return AssetChange(
        kind=item.kind, name=item.name, version=version, previous=item.pinned, file=shown
    )


def _entry_sha(registry: Registry, kind: Any, name: str, version: str | None) -> str | None:
    version = version or registry.latest(kind, name)
    if version is None or version not in registry.versions(kind, name):
        return None
    return registry.entry(kind, name, version).sha256


def _shown(path: Path, config: EvalConfig) -> Path:
    try:
        return path.resolve().relative_to(config.base_dir.resolve())
    except ValueError:
        return path
