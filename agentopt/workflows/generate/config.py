"""Writing eval.yaml for `eval generate`: a fresh file in canonical keys with a comment header,
or — when only the dataset or only the rubric is regenerated — a round-trip edit of the
user's file that changes that one section and keeps everything else (key order, comments).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, NamedTuple

from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.scalarstring import DoubleQuotedScalarString

from agentopt.core.atomic import backup, write_text_atomic
from agentopt.core.files.eval_yaml import EvalConfig
from agentopt.core.files.eval_yaml_write import (
    dump_eval_config,
    load_round_trip,
    save_round_trip,
)

HEADER = """\
# Evaluation suite for {agent}, written by `agentopt eval generate`.
# The tasks and the rubric are pinned to registered versions (.azure/.foundry/). To change
# them, edit the working copies under datasets/ and evaluators/, then run
# `agentopt eval update`: it registers the edits as new versions and re-pins them here.
"""
RUBRIC_FILE = "rubric_dimensions.json"


def fresh_config_text(config: EvalConfig, agent: str, base_dir: Path) -> str:
    """The whole eval.yaml: the comment header, then the canonical keys."""
    return HEADER.format(agent=agent) + dump_eval_config(config, base_dir)


def write_fresh_config(path: Path, config: EvalConfig, agent: str) -> Path | None:
    """Write eval.yaml atomically; an existing file is backed up first (backup returned)."""
    saved = backup(path) if path.exists() else None
    write_text_atomic(path, fresh_config_text(config, agent, path.resolve().parent))
    return saved


def pin_sections(
    path: Path,
    *,
    dataset: PinnedAsset | None = None,
    evaluator: PinnedAsset | None = None,
) -> Path:
    """Point `dataset:` and/or the rubric entry of `evaluators:` at new registered versions
    and their working copies, editing eval.yaml in place (other keys and comments untouched).

    The rubric entry is the one with the same name, else the one holding a
    rubric_dimensions.json; it is appended when there is none. Returns the backup.
    """
    doc, rt = load_round_trip(path)
    if dataset is not None:
        section = doc.get("dataset")
        if not isinstance(section, dict):
            section = CommentedMap()
            doc["dataset"] = section
            doc.pop("dataset_file", None)
            doc.pop("dataset_reference", None)
        _set(section, dataset, path)
    if evaluator is not None:
        _set(_rubric_entry(doc, evaluator.name), evaluator, path)
    return save_round_trip(path, doc, rt)


class PinnedAsset(NamedTuple):
    """A registered asset to pin: its name, version and working copy."""

    name: str
    version: str
    local_uri: Path


def _rubric_entry(doc: CommentedMap, name: str) -> Any:
    entries = doc.get("evaluators")
    if not isinstance(entries, list):
        entries = CommentedSeq()
        doc["evaluators"] = entries
    for i, entry in enumerate(entries):
        if entry == name:
            entries[i] = CommentedMap([("name", name)])
            return entries[i]
        if isinstance(entry, dict) and (
            entry.get("name") == name or str(entry.get("local_uri", "")).endswith(RUBRIC_FILE)
        ):
            return entry
    entry = CommentedMap([("name", name)])
    entries.append(entry)
    return entry


def find_rubric_entry(config: EvalConfig, default_name: str) -> str:
    """The name of the suite's generated rubric evaluator (default when there is none)."""
    for entry in config.evaluators:
        if entry.name == default_name:
            return entry.name
    for entry in config.evaluators:
        if entry.local_uri is not None and entry.local_uri.name == RUBRIC_FILE:
            return entry.name
    return default_name


def _set(section: Any, asset: PinnedAsset, config_path: Path) -> None:
    section["name"] = asset.name
    section["version"] = DoubleQuotedScalarString(asset.version)
    section["local_uri"] = _rel(asset.local_uri, config_path)


def _rel(target: Path, config_path: Path) -> str:
    base = config_path.resolve().parent
    try:
        return Path(os.path.relpath(Path(target).resolve(), base)).as_posix()
    except ValueError:  # another drive on Windows
        return Path(target).as_posix()
