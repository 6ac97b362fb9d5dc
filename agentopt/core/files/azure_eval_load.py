"""Read `evals/azure.eval.yaml` (azd-eval.md §3): the one loader of this format.

Found through azure.yaml (the `host: azure.ai.eval` service's `$ref`, or its inline body) or
named directly. Any list item may be `{$ref: file, …overlay}` and a rubric `definition:` may be
a `$ref`; relative paths resolve against the file's folder. Keys are strict, as the extension's
decoder is: an unknown key is an error naming the file, the line and the closest known key.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agentopt.core.errors import ConfigError, InputError, Problem
from agentopt.core.files import azure_eval_rules as rules
from agentopt.core.files.azure_eval import (
    DEFAULT_FILE,
    EVAL_HOST,
    AzureEvalFile,
    DatasetDecl,
    EvalDecl,
    EvaluatorDecl,
)
from agentopt.core.files.problems import Collector, KeyPath, LineIndex, closest, describe
from agentopt.core.files.yaml_refs import BASE_KEY, REF_KEY, resolve_refs
from agentopt.core.files.yaml_source import parse_yaml, read_text

TOP_KEYS = ("datasets", "evaluators", "evals")
AZURE_YAML_NAMES = ("azure.yaml", "azure.yml")
_SERVICE_KEYS = ("host", "uses", "project", "$ref", "config", "env", "hooks", "docker")
"""Keys of an azure.yaml service that belong to azd, not to the evaluation body."""


def is_azure_eval_data(data: Any, path: Path) -> bool:
    """Whether parsed YAML is this format rather than agentopt's own eval.yaml: an azure.yaml
    with an evaluation service, or a file with `evals:`/`datasets:` (eval.yaml has neither)."""
    if not isinstance(data, dict):
        return path.name.endswith(".eval.yaml")
    if path.name in AZURE_YAML_NAMES:
        return bool(_eval_services(data))
    return "evals" in data or "datasets" in data or path.name.endswith(".eval.yaml")


def is_azure_eval_file(path: Path) -> bool:
    """`is_azure_eval_data` for a file on disk (False when it cannot be read or parsed)."""
    if path.name.endswith(".eval.yaml"):
        return True
    try:
        data, _ = parse_yaml(read_text(path, shown=str(path), kind="yaml"), str(path))
    except InputError:
        return False
    return is_azure_eval_data(data, path)


def _eval_services(data: dict[str, Any]) -> list[str]:
    services = data.get("services")
    if not isinstance(services, dict):
        return []
    return [
        str(name)
        for name, svc in services.items()
        if isinstance(svc, dict) and svc.get("host") == EVAL_HOST
    ]


def find_azure_eval(start: Path) -> Path | None:
    """The azure.yaml (at or above `start`, up to the repository root) that declares an
    evaluation service, or None."""
    for folder in (start, *start.parents):
        for name in AZURE_YAML_NAMES:
            candidate = folder / name
            if candidate.is_file() and is_azure_eval_file(candidate):
                return candidate
        if (folder / ".git").exists():
            return None
    return None


def load_azure_eval(path: Path | str) -> tuple[AzureEvalFile, list[Problem]]:
    """Read an azure.eval.yaml, or the evaluation service of an azure.yaml.

    Raises:
        ConfigError: every error found (file, key path and line, expected, found).
    """
    config, c = _load(Path(path))
    c.raise_if_errors(config=True)
    assert config is not None
    return config, c.warnings


def azure_eval_problems(path: Path | str) -> list[Problem]:
    """Every problem of the file (errors and warnings) without raising, for `eval validate`."""
    try:
        return _load(Path(path))[1].problems
    except InputError as exc:
        return exc.problems


def _load(path: Path) -> tuple[AzureEvalFile | None, Collector]:
    shown = str(path)
    try:
        data, lines = parse_yaml(read_text(path, shown=shown, kind="yaml"), shown)
    except InputError as exc:
        c = Collector(shown)
        c.problems.extend(exc.problems)
        return None, c
    if path.name in AZURE_YAML_NAMES:
        return _from_azure_yaml(path, data, lines)
    return _from_body(path, data, lines, (), None)


def _from_azure_yaml(
    path: Path, data: Any, lines: LineIndex
) -> tuple[AzureEvalFile | None, Collector]:
    c = Collector(str(path), lines)
    services = _eval_services(data) if isinstance(data, dict) else []
    if not services:
        c.error(("services",), f"expected a service with host: {EVAL_HOST}, found none")
        return None, c
    if len(services) > 1:
        c.error(
            ("services",),
            f"{len(services)} evaluation services ({', '.join(services)}); "
            "pass --config with the file of one of them",
        )
        return None, c
    name = services[0]
    body = data["services"][name]
    ref = body.get(REF_KEY)
    if ref is not None:
        if not isinstance(ref, str) or not ref.strip():
            c.error(("services", name, REF_KEY), f"expected a path, found {describe(ref)}")
            return None, c
        target = (path.parent / ref).resolve()
        if not target.is_file():
            c.error(
                ("services", name, REF_KEY),
                f"expected the evaluation file, found nothing at {target}",
            )
            return None, c
        config, inner = _load(target)
        c.problems.extend(inner.problems)
        if config is not None:
            config.service = name
        return config, c
    inline = {k: v for k, v in body.items() if k not in _SERVICE_KEYS}
    return _from_body(path, inline, lines, ("services", name), name)


def _from_body(
    path: Path, data: Any, lines: LineIndex, prefix: KeyPath, service: str | None
) -> tuple[AzureEvalFile | None, Collector]:
    c = Collector(str(path), lines)
    if data is None:
        data = {}
    if not isinstance(data, dict):
        c.error(
            prefix, f"expected a mapping with datasets, evaluators, evals; found {describe(data)}"
        )
        return None, c
    rules.strict_keys(c, prefix, data, TOP_KEYS)
    base = path.resolve().parent
    datasets = [
        rules.dataset_decl(c, where, node, base)
        for where, node in _items(c, path, prefix, data, "datasets")
    ]
    evaluators = [
        rules.evaluator_decl(c, where, node, base)
        for where, node in _items(c, path, prefix, data, "evaluators")
    ]
    evals = [
        rules.eval_decl(c, where, node) for where, node in _items(c, path, prefix, data, "evals")
    ]
    _cross_check(c, prefix, datasets, evaluators, evals)
    config = AzureEvalFile(
        path=path, service=service, datasets=datasets, evaluators=evaluators, evals=evals
    )
    return (None if c.errors else config), c


def _items(
    c: Collector, path: Path, prefix: KeyPath, data: dict[str, Any], key: str
) -> list[tuple[KeyPath, dict[str, Any]]]:
    """The list's mappings, each with its `$ref`s spliced in (overlay keys win)."""
    value = data.get(key)
    if value is None:
        return []
    where: KeyPath = (*prefix, key)
    if not isinstance(value, list):
        c.error(where, f"expected a list, found {describe(value)}")
        return []
    out: list[tuple[KeyPath, dict[str, Any]]] = []
    for i, item in enumerate(value):
        at = (*where, i)
        if not isinstance(item, dict):
            c.error(at, f"expected a mapping, found {describe(item)}")
            continue
        try:
            resolved = _strip_base(resolve_refs(item, path, at))
        except ConfigError as exc:
            c.problems.extend(exc.problems)
            continue
        if not isinstance(resolved, dict):
            c.error(at, f"the $ref holds {describe(resolved)}; expected a mapping")
            continue
        if key == "evaluators" and "dimensions" in resolved and "definition" not in resolved:
            # `- {$ref: ./evaluators/quality.json, name: quality}`: the rubric's keys are
            # spliced in and become its definition (the extension's README).
            body = {k: resolved.pop(k) for k in list(resolved) if k in rules.DEFINITION_KEYS}
            resolved["definition"] = body
        out.append((at, resolved))
    return out


def _strip_base(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _strip_base(v) for k, v in node.items() if k != BASE_KEY}
    if isinstance(node, list):
        return [_strip_base(v) for v in node]
    return node


def _cross_check(
    c: Collector,
    prefix: KeyPath,
    datasets: list[DatasetDecl],
    evaluators: list[EvaluatorDecl],
    evals: list[EvalDecl],
) -> None:
    for key, names in (
        ("datasets", [d.name for d in datasets]),
        ("evaluators", [e.name for e in evaluators]),
        ("evals", [e.name for e in evals]),
    ):
        seen: dict[str, int] = {}
        for i, name in enumerate(names):
            if name and name in seen:
                c.error(
                    (*prefix, key, i, "name"),
                    f'"{name}" is already declared by {key}[{seen[name]}]',
                )
            seen.setdefault(name, i)
    declared = [d.name for d in datasets]
    bodies: dict[str, int] = {}
    for i, ev in enumerate(evals):
        if ev.dataset is not None and ev.dataset not in declared:
            guess = closest(ev.dataset, declared)
            hint = f'; did you mean "{guess}"?' if guess else ""
            listed = ", ".join(declared) or "none"
            c.error(
                (*prefix, "evals", i, "dataset"),
                f'no dataset "{ev.dataset}" in datasets[] (declared: {listed}){hint}',
            )
        body = ev.model_dump_json(exclude={"name", "id", "description", "line"})
        if body in bodies:
            c.error(
                (*prefix, "evals", i),
                f"identical to evals[{bodies[body]}] but for its "
                "name; the extension refuses copies (give it its own dataset, evaluators "
                "or sample cap)",
            )
        bodies.setdefault(body, i)


def default_location(project_root: Path) -> Path:
    """`<project>/evals/azure.eval.yaml`."""
    return project_root / DEFAULT_FILE
