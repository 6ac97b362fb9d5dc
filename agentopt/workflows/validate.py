"""`agentopt eval validate`: load each file with the tool's own loader (detected from content)
and collect every problem, not only the first (cli.md). A loader is imported for the first
file of its kind: validating a task file does not build eval.yaml's or azure.eval.yaml's
models (`eval validate` of 5 tasks has a 0.25 s CPU budget, issue 37)."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentopt.core.errors import AgentoptError, InputError, Problem
from agentopt.core.files import bounded
from agentopt.core.files.yaml_source import load_json, parse_yaml, read_text
from agentopt.datasets import load_dataset, validate_dataset

AZURE_EVAL = "azure.eval.yaml (azd ai eval)"
EVALUATOR_YAML_MARKS = {"type", "definition", "threshold", "created_at"}
"""Keys only an evaluator YAML has (files.md §5.2): any one of them, with none of eval.yaml's
own keys, makes a YAML file an evaluator definition — also one that lacks `definition:`."""
EVAL_YAML_MARKS = {
    "agent",
    "dataset",
    "dataset_file",
    "dataset_reference",
    "validation_dataset",
    "validation_reference",
    "test_dataset",
    "evaluators",
    "options",
    "max_samples",
}


@dataclass
class FileReport:
    """Validation outcome of one path: what it was taken for, and its problems."""

    path: Path
    kind: str
    problems: list[Problem] = field(default_factory=list)
    backup: str | None = None
    """Set when `--upgrade` rewrote a legacy M365 file: where its original bytes are."""

    @property
    def ok(self) -> bool:
        return not any(p.severity == "error" for p in self.problems)

    def display_path(self, cwd: Path) -> str:
        try:
            return str(self.path.resolve().relative_to(cwd.resolve()))
        except (ValueError, OSError, RuntimeError):  # RuntimeError: a symlink loop (3.11)
            return str(self.path)


def _json_kind(text: str) -> tuple[str, Any]:
    try:
        data = bounded.loads(text)
    except json.JSONDecodeError:
        return "task dataset (JSON lines)", None
    if isinstance(data, list) and data and all(isinstance(x, dict) for x in data):
        first = data[0]
        if any(k in first for k in ("id", "dimension_id", "rubric_id", "weight")):
            return "rubric", data
        return "M365 eval document (legacy)", None
    if isinstance(data, dict):
        if "prompts" in data or "items" in data or "schemaVersion" in data:
            return "M365 eval document", None
        if "query" in data or "turns" in data or "prompt" in data:
            return "task dataset (JSON lines)", None
    return "unknown", data


def detect_kind(path: Path) -> str:
    """What a file is, from its extension and content."""
    if path.is_dir():
        return "task dataset (folder)"
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".ndjson"):
        return "task dataset"
    if suffix == ".csv":
        return "task dataset (CSV)"
    if suffix not in (".json", ".yaml", ".yml"):
        return "unknown"
    # Only to tell the kind: decoding problems are reported by the loader that reads it.
    text = bounded.read_bytes(path, kind="dataset").decode("utf-8", errors="replace")
    if suffix == ".json":
        return _json_kind(text)[0]
    if suffix in (".yaml", ".yml"):
        try:
            data = parse_yaml(text, str(path))[0]
        except InputError:
            return "eval.yaml"
        if isinstance(data, dict) and _is_evaluator_yaml(data):
            return "evaluator YAML"
        from agentopt.core.files.azure_eval_load import is_azure_eval_data

        if is_azure_eval_data(data, path):
            return AZURE_EVAL
        return "eval.yaml"
    return "unknown"


def _is_evaluator_yaml(data: dict[Any, Any]) -> bool:
    keys = {str(k) for k in data}
    return bool(keys & EVALUATOR_YAML_MARKS) and not keys & EVAL_YAML_MARKS


def validate_file(path: Path, *, strict: bool = False, upgrade: bool = False) -> FileReport:
    """One file's report; never raises for bad content. With `upgrade`, a legacy M365 file
    that loads is rewritten in the versioned shape (after a backup), like `eval run` does."""
    shown = str(path)
    try:
        if not os.path.lexists(path):
            return FileReport(path, "missing", [Problem(shown, "", "no such file or folder")])
        if not path.is_dir():
            bounded.check_regular(path, shown=shown)  # a FIFO, a device, a loop: named
        kind = detect_kind(path)
    except AgentoptError as err:
        return FileReport(path, "unreadable", _problems(err, shown))
    except OSError as err:  # a name too long for the file system, a loop of links
        return FileReport(path, "unreadable", [Problem(shown, "", f"cannot read: {err.strerror}")])
    try:
        if upgrade and kind == "M365 eval document (legacy)":
            dataset = load_dataset(path, upgrade=True)
            saved = dataset.upgrade.backup if dataset.upgrade else None
            return FileReport(path, kind, list(dataset.warnings), backup=saved)
        if kind.startswith(("task dataset", "M365")):
            problems = validate_dataset(path, strict=strict)
            if kind == "M365 eval document" and _clean(problems):
                problems += _m365_option_problems(path)
        elif kind == "rubric":
            from agentopt.core.files.rubric import rubric_problems

            problems = rubric_problems(load_json(path, shown=shown), shown)
        elif kind == "evaluator YAML":
            from agentopt.core.files.evaluator_yaml import evaluator_yaml_problems

            problems = evaluator_yaml_problems(read_text(path, shown=shown, kind="yaml"), shown)
        elif kind == "eval.yaml":
            from agentopt.core.files.eval_yaml_load import validate_eval_config

            problems = validate_eval_config(path) + _suite_problems(path)
            if _clean(problems):
                problems += _eval_yaml_option_problems(path)
        elif kind == AZURE_EVAL:
            from agentopt.core.files.azure_eval_load import azure_eval_problems

            problems = azure_eval_problems(path)
            if _clean(problems):
                problems += _azure_eval_option_problems(path)
        else:
            problems = [
                Problem(
                    shown,
                    "",
                    "cannot tell what this file is: expected eval.yaml, a task .jsonl/.csv, an "
                    "M365 eval document (.json), rubric_dimensions.json or an evaluator .yaml",
                )
            ]
    except AgentoptError as err:
        problems = _problems(err, shown)
    return FileReport(path, kind, problems)


def _problems(err: AgentoptError, shown: str) -> list[Problem]:
    return list(getattr(err, "problems", [])) or [Problem(shown, "", err.message)]


def _suite_problems(path: Path) -> list[Problem]:
    """What makes a loadable eval.yaml unusable as a suite: it names no dataset."""
    from agentopt.core.files.eval_yaml_load import load_eval_config

    try:
        config, _ = load_eval_config(path)
    except AgentoptError:
        return []  # already reported by validate_eval_config
    if config.dataset is not None:
        return []
    return [
        Problem(
            str(path),
            "dataset",
            "the suite has no dataset: expected `dataset:` with `local_uri` (a file or folder) "
            "or `name` and `version` (a registered dataset)",
        )
    ]


def _clean(problems: list[Problem]) -> bool:
    return not any(p.severity == "error" for p in problems)


def _eval_yaml_option_problems(path: Path) -> list[Problem]:
    """Evaluator options eval.yaml gives that the evaluator does not take (options.py)."""
    from agentopt.core.files.eval_yaml_load import load_eval_config
    from agentopt.evaluators.registry import written_options_problems

    config, _ = load_eval_config(path)
    problems: list[Problem] = []
    for i, entry in enumerate(config.evaluators):
        where = f"evaluators[{i}].initialization_parameters"
        problems += written_options_problems(
            entry.name, entry.initialization_parameters, file=str(path), where=where
        )
    return problems


def _azure_eval_option_problems(path: Path) -> list[Problem]:
    """The same for the built-ins an azure.eval.yaml eval uses."""
    from agentopt.core.files.azure_eval_load import load_azure_eval
    from agentopt.evaluators.registry import written_options_problems

    file, _ = load_azure_eval(path)
    problems: list[Problem] = []
    for decl in file.evals:
        for use in decl.evaluators:
            if not use.is_builtin:
                continue  # a rubric's parameters go to the rubric judge
            where = f"evals.{decl.name}.evaluators.{use.label}.initialization_parameters"
            problems += written_options_problems(
                use.evaluator, use.initialization_parameters, file=str(path), where=where
            )
    return problems


def _m365_option_problems(path: Path) -> list[Problem]:
    """The same for an M365 document's evaluator maps: the schema types the built-ins it
    names, not the `options` bag of the others, nor agentopt's own built-ins."""
    from agentopt.evaluators.registry import written_options_problems

    dataset = load_dataset(path, upgrade=False)
    found: list[tuple[str, list[Any] | None]] = [("default_evaluators", dataset.default_evaluators)]
    for task in dataset.tasks:
        item = f"items[{task.index}]"
        found.append((f"{item}.evaluators", task.evaluators))
        for j, turn in enumerate(task.turns):
            turn_at = f"{item}.turns[{j}]" if len(task.turns) > 1 else item
            found.append((f"{turn_at}.evaluators", turn.evaluators))
    problems: list[Problem] = []
    for where, refs in found:
        for ref in refs or []:
            problems += written_options_problems(
                ref.name, ref.options, file=str(path), where=f"{where}.{ref.name}"
            )
    return list(dict.fromkeys(problems))


def validate_paths(
    paths: list[Path], *, strict: bool = False, upgrade: bool = False
) -> list[FileReport]:
    """Reports for every path, in order."""
    return [validate_file(Path(p), strict=strict, upgrade=upgrade) for p in paths]
