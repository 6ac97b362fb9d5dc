"""`eval init --format azure-eval` and `eval generate --format azure-eval`: the extension's
layout (`evals/azure.eval.yaml`, `evals/datasets/*.jsonl`, `evals/evaluators/*.json`, and an
`azure.ai.eval` service in azure.yaml), written the way `azd ai eval init|generate` lays it
out — except that a user's file is edited in place (ruamel round trip): its comments, order
and indentation are kept and a backup is taken first, where the extension rewrites the file
through typed structs and drops them (its KNOWN-GAPS §1, issue #10112 family).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ruamel.yaml.comments import CommentedMap, CommentedSeq

from agentopt.core.atomic import write_text_atomic
from agentopt.core.errors import ConfigError
from agentopt.core.files.azure_eval import DEFAULT_FILE, EVAL_HOST, RowShape
from agentopt.core.files.azure_eval_load import load_azure_eval
from agentopt.core.files.eval_yaml_write import load_round_trip, save_round_trip
from agentopt.core.files.rubric import RubricDimension
from agentopt.registry import Registry

DEFAULT_EVALUATOR = "builtin.task_adherence"
PROJECT_HOST = "azure.ai.project"
_ = RowShape  # the suite side of this layout lives in suite.py


@dataclass
class Written:
    """What a scaffold or catalog edit changed, for the summary."""

    config: Path
    created: list[Path] = field(default_factory=list)
    edited: list[Path] = field(default_factory=list)
    backups: list[Path] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def eval_file(root: Path) -> Path:
    return root / DEFAULT_FILE


def init_layout(
    root: Path,
    azure_yaml: Path | None,
    *,
    target: str,
    judge_model: str,
    name: str | None = None,
    dataset: Path | None = None,
    evaluators: list[str] | None = None,
    force: bool = False,
) -> Written:
    """Scaffold one dataset eval for `target` (no service call, like `azd ai eval init`)."""
    config = eval_file(root)
    out = Written(config=config)
    for folder in (config.parent / "datasets", config.parent / "evaluators"):
        folder.mkdir(parents=True, exist_ok=True)
    eval_name = name or f"{target}-eval"
    dataset_name = f"{target}-dataset"
    if dataset is not None:
        rel = _relative(dataset, config.parent)
    else:
        rel = f"./datasets/{dataset_name}.jsonl"
        out.notes.append(f"{rel} is filled by `agentopt eval generate --format azure-eval`")
    uses = evaluators or [DEFAULT_EVALUATOR]
    body = CommentedMap()
    body["name"] = eval_name
    body["description"] = f"Basic quality evaluation for {target}"
    body["dataset"] = dataset_name
    body["evaluation_level"] = "turn"
    body["evaluators"] = CommentedSeq(
        [CommentedMap(evaluator=u, initialization_parameters={"model": judge_model}) for u in uses]
    )
    body["target"] = CommentedMap(type="agent", name=target)
    doc, rt, existed = _document(config)
    datasets = _list(doc, "datasets")
    if not any(d.get("name") == dataset_name for d in datasets if isinstance(d, dict)):
        datasets.append(CommentedMap(name=dataset_name, file=rel))
    evals = _list(doc, "evals")
    same = [i for i, e in enumerate(evals) if isinstance(e, dict) and e.get("name") == eval_name]
    if same and not force:
        raise ConfigError.at(
            str(config),
            f"evals[{same[0]}]",
            f'an eval named "{eval_name}" exists',
        )
    if same:
        evals[same[0]] = body
    else:
        evals.append(body)
    _save(config, doc, rt, existed, out)
    if azure_yaml is not None:
        _wire_service(azure_yaml, config, target, out)
    return out


def add_to_catalog(
    config: Path,
    *,
    dataset: tuple[str, Path] | None = None,
    evaluator: tuple[str, Path] | None = None,
) -> Written:
    """Declare generated assets under `datasets:` / `evaluators:` (as `azd ai eval generate`
    does, without attaching them to an eval), keeping the file's comments."""
    out = Written(config=config)
    doc, rt, existed = _document(config)
    for key, entry, path_key in (
        ("datasets", dataset, "file"),
        ("evaluators", evaluator, "source"),
    ):
        if entry is None:
            continue
        name, path = entry
        items = _list(doc, key)
        rel = _relative(path, config.parent)
        found = next((d for d in items if isinstance(d, dict) and d.get("name") == name), None)
        if found is None:
            items.append(CommentedMap([("name", name), (path_key, rel)]))
        elif found.get(path_key) != rel:
            out.notes.append(
                f"{key}: {name} already declared with {path_key}: "
                f"{found.get(path_key)}; left as it is"
            )
    _save(config, doc, rt, existed, out)
    return out


def write_rubric(path: Path, dims: list[RubricDimension]) -> None:
    """The extension's rubric file: `{"dimensions": [{id, description, weight}]}`."""
    rows = [{"id": d.id, "description": d.description, "weight": d.weight} for d in dims]
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(path, json.dumps({"dimensions": rows}, indent=2, ensure_ascii=False) + "\n")


def register_rows(root: Path, name: str, path: Path, source: dict[str, Any]) -> str:
    """Register a dataset file of the layout as a version (like any generated dataset)."""
    return Registry(root).register_dataset(name, path.read_bytes(), source).version


def check_loads(config: Path) -> None:
    """The written file reads back with the extension's rules."""
    load_azure_eval(config)


def _document(path: Path) -> tuple[Any, Any, bool]:
    if path.is_file():
        doc, rt = load_round_trip(path)
        return doc, rt, True
    from ruamel.yaml import YAML

    rt = YAML(typ="rt")
    rt.indent(mapping=2, sequence=4, offset=2)
    return CommentedMap(), rt, False


def _list(doc: Any, key: str) -> Any:
    if doc.get(key) is None:
        doc[key] = CommentedSeq()
    value = doc[key]
    if not isinstance(value, list):
        raise ConfigError.at("", key, f"expected a list under {key}:")
    return value


def _save(path: Path, doc: Any, rt: Any, existed: bool, out: Written) -> None:
    if existed:
        out.backups.append(save_round_trip(path, doc, rt))
        out.edited.append(path)
        return
    import io

    buf = io.StringIO()
    rt.dump(doc, buf)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(path, buf.getvalue())
    out.created.append(path)


def _relative(path: Path, base: Path) -> str:
    try:
        return "./" + path.resolve().relative_to(base.resolve()).as_posix()
    except ValueError:
        import os

        return os.path.relpath(path.resolve(), base.resolve()).replace(os.sep, "/")


def _wire_service(azure_yaml: Path, config: Path, target: str, out: Written) -> None:
    """Add `<target>-evals` (host azure.ai.eval, `$ref` to the file) unless one exists."""
    doc, rt = load_round_trip(azure_yaml)
    services = doc.get("services")
    if not isinstance(services, dict):
        raise ConfigError.at(str(azure_yaml), "services", "expected a mapping of services")
    if any(isinstance(s, dict) and s.get("host") == EVAL_HOST for s in services.values()):
        return
    uses = [n for n, s in services.items() if isinstance(s, dict) and s.get("host") == PROJECT_HOST]
    entry = CommentedMap()
    entry["host"] = EVAL_HOST
    entry["uses"] = CommentedSeq([*uses[:1], target])
    entry["$ref"] = _relative(config, azure_yaml.parent)
    services[f"{target}-evals"] = entry
    out.backups.append(save_round_trip(azure_yaml, doc, rt))
    out.edited.append(azure_yaml)
