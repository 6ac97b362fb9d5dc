"""Write `eval.yaml`: a fresh file in canonical keys (`eval generate`), and a round-trip edit
of the pinned versions that keeps the user's key order and comments (`eval update`)."""

from __future__ import annotations

import io
import itertools
import os
import re
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap
from ruamel.yaml.error import YAMLError
from ruamel.yaml.util import load_yaml_guess_indent

from agentopt.core.atomic import backup, write_text_atomic
from agentopt.core.errors import ConfigError
from agentopt.core.files.eval_yaml import DatasetRef, EvalConfig, InstructionFile
from agentopt.core.files.yaml_source import dump_yaml, read_text

_DATASET_ALIASES = {
    "dataset": ("dataset", "dataset_reference"),
    "validation_dataset": ("validation_dataset", "validation_reference"),
    "test_dataset": ("test_dataset",),
}


def dump_eval_config(config: EvalConfig, base_dir: Path | None = None) -> str:
    """Canonical YAML text of `config`, with paths relative to `base_dir` (its folder)."""
    base = Path(base_dir or config.base_dir).resolve()
    out: dict[str, Any] = {}
    if config.name:
        out["name"] = config.name
    if config.agent is not None:
        agent = config.agent.model_dump(mode="json", exclude_none=True, exclude_defaults=True)
        if config.agent.config is not None:
            agent["config"] = _rel(config.agent.config, base)
        if isinstance(config.agent.instruction, InstructionFile):
            agent["instruction"] = {"file": _rel(config.agent.instruction.file, base)}
        out["agent"] = agent
    for key in ("dataset", "validation_dataset", "test_dataset"):
        ref: DatasetRef | None = getattr(config, key)
        if ref is not None:
            out[key] = _ref(ref, base)
    if config.evaluators:
        out["evaluators"] = [_evaluator(e, base) for e in config.evaluators]
    options = config.options.model_dump(mode="json", exclude_none=True, exclude_defaults=True)
    if options:
        out["options"] = options
    if config.max_samples is not None:
        out["max_samples"] = config.max_samples
    return dump_yaml(out)


def write_eval_config(path: Path, config: EvalConfig) -> Path | None:
    """Write eval.yaml atomically; an existing file is backed up first (backup path returned)."""
    path = Path(path)
    saved = backup(path) if path.exists() else None
    write_text_atomic(path, dump_eval_config(config, path.resolve().parent))
    return saved


def update_pinned_versions(
    path: Path,
    *,
    datasets: dict[str, str] | None = None,
    evaluators: dict[str, str] | None = None,
) -> Path | None:
    """Set `dataset.version` etc. and `evaluators[name].version`, keeping comments and order.

    Args:
        path: the eval.yaml to edit.
        datasets: `{"dataset" | "validation_dataset" | "test_dataset": version}`.
        evaluators: `{evaluator name: version}`; a bare-string entry becomes a mapping.

    Returns:
        The backup path when the file changed, else None (nothing written).
    """
    path = Path(path)
    doc, rt = load_round_trip(path)
    changed = False
    for key, version in (datasets or {}).items():
        section = next((doc[k] for k in _DATASET_ALIASES[key] if k in doc), None)
        if not isinstance(section, dict):
            raise ConfigError.at(str(path), key, "no such dataset section to pin a version in")
        if str(section.get("version")) != version:
            section["version"] = _quoted(version)
            changed = True
    entries = doc.get("evaluators") or []
    for name, version in (evaluators or {}).items():
        for i, entry in enumerate(entries):
            if entry == name:
                entries[i] = CommentedMap([("name", name), ("version", _quoted(version))])
                changed = True
            elif (
                isinstance(entry, dict)
                and entry.get("name") == name
                and str(entry.get("version")) != version
            ):
                entry["version"] = _quoted(version)
                changed = True
    if not changed:
        return None
    return save_round_trip(path, doc, rt)


def load_round_trip(path: Path) -> tuple[Any, YAML]:
    """The round-trip document of a user's eval.yaml, and a dumper set to the file's own
    indentation (so an edit does not re-indent every list of a hand-written file)."""
    text = read_text(path, shown=str(path))
    rt = YAML(typ="rt")
    rt.preserve_quotes = True
    rt.width = 100
    rt.indent(**_indentation(text))
    doc = rt.load(io.StringIO(text))
    if not isinstance(doc, dict):
        raise ConfigError.at(str(path), "", "expected a mapping; cannot update pinned versions")
    return doc, rt


def save_round_trip(path: Path, doc: Any, rt: YAML) -> Path:
    """Back the file up, then write the edited document atomically; returns the backup."""
    buf = io.StringIO()
    rt.dump(doc, buf)
    saved = backup(path)
    write_text_atomic(path, buf.getvalue())
    return saved


def _indentation(text: str) -> dict[str, int]:
    """The file's mapping indent, and its sequence indent and dash offset."""
    mapping = 2
    lines = [ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    for prev, line in itertools.pairwise(lines):
        child = re.match(r"^( +)[^\s-][^:]*:", line)
        if child and re.match(r"^\S[^#]*:\s*(#.*)?$", prev):
            mapping = len(child[1])
            break
    try:
        _data, sequence, offset = load_yaml_guess_indent(text)
    except (YAMLError, ValueError):  # unparsable text is reported by the loader, not here
        sequence, offset = None, None
    if not sequence:
        sequence, offset = mapping, 0
    return {"mapping": mapping, "sequence": sequence, "offset": offset or 0}


def _quoted(version: str) -> Any:
    from ruamel.yaml.scalarstring import DoubleQuotedScalarString

    return DoubleQuotedScalarString(version)


def _rel(path: Path, base: Path) -> str:
    """A path as the user would write it in eval.yaml: relative, forward slashes."""
    p = Path(path)
    if not p.is_absolute():
        return p.as_posix()
    try:
        return Path(os.path.relpath(p.resolve(), base)).as_posix()
    except ValueError:  # another drive on Windows
        return p.as_posix()


def _ref(ref: DatasetRef, base: Path) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if ref.name:
        out["name"] = ref.name
    if ref.version:
        out["version"] = ref.version
    if ref.local_uri is not None:
        out["local_uri"] = _rel(ref.local_uri, base)
    return out


def _evaluator(entry: Any, base: Path) -> Any:
    if entry.version is None and entry.local_uri is None and not entry.initialization_parameters:
        return entry.name
    out: dict[str, Any] = {"name": entry.name}
    if entry.version:
        out["version"] = entry.version
    if entry.local_uri is not None:
        out["local_uri"] = _rel(entry.local_uri, base)
    if entry.initialization_parameters:
        out["initialization_parameters"] = entry.initialization_parameters
    return out
