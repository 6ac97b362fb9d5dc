"""The rules of each declaration in azure.eval.yaml (azd-eval.md §3.2), checked the way the
extension's strict decoder checks them: an unknown key is an error (with the closest known
key), and every problem is collected before anything is refused."""

from __future__ import annotations

import math
import re
from datetime import datetime
from pathlib import Path
from typing import Any

from agentopt.core.errors import InputError
from agentopt.core.files.azure_eval import (
    ASSET_NAME_RE,
    DatasetDecl,
    EvalDecl,
    EvaluatorDecl,
    EvaluatorUseDecl,
    ResponsesSource,
    Simulation,
    Target,
    TraceSource,
)
from agentopt.core.files.problems import Collector, KeyPath, closest, describe
from agentopt.core.files.rubric import RubricDimension, check_dimensions
from agentopt.core.files.yaml_source import load_json

DATASET_KEYS = ("name", "file", "version", "tags")
EVALUATOR_KEYS = ("name", "source", "definition", "version")
DEFINITION_KEYS = ("type", "dimensions", "pass_threshold", "description")
EVAL_KEYS = (
    "name",
    "id",
    "description",
    "dataset",
    "source",
    "evaluation_level",
    "max_samples",
    "evaluators",
    "target",
    "simulation",
)
TRACE_KEYS = (
    "type",
    "agent_name",
    "agent_version",
    "lookback_hours",
    "start_time",
    "end_time",
    "max_traces",
)
RESPONSES_KEYS = ("type", "response_ids", "max_turns")
USE_KEYS = ("evaluator", "name", "version", "initialization_parameters", "data_mapping")
TARGET_KEYS = ("type", "name")
SIMULATION_KEYS = ("model", "num_conversations", "max_turns")
MAX_LOOKBACK_HOURS = 87_600
_MAPPING_RE = re.compile(r"^\{\{\s*(item|sample)\.([A-Za-z0-9_.]+)\s*\}\}$")


def strict_keys(c: Collector, path: KeyPath, node: dict[str, Any], known: tuple[str, ...]) -> None:
    """An unknown key is refused, as the extension's decoder refuses it."""
    for key in node:
        if key in known:
            continue
        guess = closest(str(key), known)
        hint = f'; did you mean "{guess}"?' if guess else f"; expected one of: {', '.join(known)}"
        c.error((*path, key), f'unknown key "{key}"{hint}')


def text(c: Collector, path: KeyPath, value: Any, *, required: bool = False) -> str | None:
    """A string; an integer is read as text (YAML `version: 2` is the string "2")."""
    if value is None:
        if required:
            c.error(path, "missing: expected text")
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, str) and value.strip():
        return value
    c.error(path, f"expected text, found {describe(value)}")
    return None


def integer(
    c: Collector, path: KeyPath, value: Any, lo: int = 0, hi: int | None = None
) -> int | None:
    if value is None:
        return None
    ok = isinstance(value, int) and not isinstance(value, bool)
    if ok and value >= lo and (hi is None or value <= hi):
        return int(value)
    bound = f"an integer {lo}–{hi}" if hi is not None else f"an integer ≥ {lo}"
    c.error(path, f"expected {bound}, found {describe(value)}")
    return None


def asset_name(c: Collector, path: KeyPath, value: Any, what: str) -> str | None:
    name = text(c, path, value, required=True)
    if name is not None and not ASSET_NAME_RE.match(name):
        c.error(
            path,
            f"expected a {what} name of letters, digits, - and _ (at most 255), "
            f"found {describe(name)}",
        )
        return None
    return name


def mapping(c: Collector, path: KeyPath, value: Any, what: str) -> dict[str, Any] | None:
    if isinstance(value, dict):
        return value
    c.error(path, f"expected {what}, found {describe(value)}")
    return None


def sub_mapping(
    c: Collector, path: KeyPath, node: dict[str, Any], key: str, what: str
) -> dict[str, Any]:
    """`node[key]` when it is a mapping; {} when it is absent, or not one (the error noted)."""
    return mapping(c, (*path, key), node.get(key, {}), what) or {}


def local_path(base: Path, value: str) -> Path:
    """A path of the file, resolved against its folder."""
    p = Path(value).expanduser()
    return p if p.is_absolute() else (base / p).resolve()


def dataset_decl(c: Collector, path: KeyPath, node: dict[str, Any], base: Path) -> DatasetDecl:
    if "source" in node and "file" not in node:
        c.warn(
            (*path, "source"),
            '"source" is the older name of "file" (renamed 2026-08-20; the extension\'s '
            "current decoder refuses it); read as file: — rename it",
        )
        node = {("file" if k == "source" else k): v for k, v in node.items()}
    strict_keys(c, path, node, DATASET_KEYS)
    name = asset_name(c, (*path, "name"), node.get("name"), "dataset") or ""
    file = text(c, (*path, "file"), node.get("file"))
    resolved = local_path(base, file) if file else None
    if resolved is not None and resolved.suffix.lower() != ".jsonl":
        c.error((*path, "file"), f"expected a .jsonl file, found {describe(file)}")
    tags = sub_mapping(c, path, node, "tags", "a mapping of tag → text")
    for key, value in tags.items():
        if not isinstance(value, str | int | float) or isinstance(value, bool):
            c.error((*path, "tags", key), f"expected text, found {describe(value)}")
    return DatasetDecl(
        name=name,
        file=resolved,
        version=text(c, (*path, "version"), node.get("version")),
        tags={str(k): str(v) for k, v in tags.items()},
        line=c.lines.line(path),
    )


def evaluator_decl(c: Collector, path: KeyPath, node: dict[str, Any], base: Path) -> EvaluatorDecl:
    strict_keys(c, path, node, EVALUATOR_KEYS)
    name = asset_name(c, (*path, "name"), node.get("name"), "evaluator") or ""
    version = text(c, (*path, "version"), node.get("version"))
    source = text(c, (*path, "source"), node.get("source"))
    if source is not None and "definition" in node:
        c.error(
            (*path, "definition"),
            "a rubric is named (source:) or written out (definition:), never both",
        )
    if version is not None and (source is not None or "definition" in node):
        c.error(
            (*path, "version"),
            "version pins a registered evaluator; it cannot be given with source: or definition:",
        )
    dims: list[RubricDimension] | None = None
    threshold: float | None = None
    resolved = local_path(base, source) if source else None
    if resolved is not None:
        dims, threshold = _rubric_file(c, (*path, "source"), resolved)
    elif "definition" in node:
        definition = mapping(c, (*path, "definition"), node["definition"], "a rubric mapping")
        if definition is not None:
            dims, threshold = rubric_body(c, (*path, "definition"), definition)
    return EvaluatorDecl(
        name=name,
        source=resolved,
        dimensions=dims,
        pass_threshold=threshold,
        version=version,
        line=c.lines.line(path),
    )


def rubric_body(
    c: Collector, path: KeyPath, body: dict[str, Any]
) -> tuple[list[RubricDimension] | None, float | None]:
    """`{type: rubric, dimensions: [...], pass_threshold?}`; a dimension may say `name:` for
    `id:` (the extension's own inline example does)."""
    strict_keys(c, path, body, DEFINITION_KEYS)
    kind = body.get("type", "rubric")
    if kind != "rubric":
        c.error((*path, "type"), f"expected rubric, found {describe(kind)}")
    threshold = body.get("pass_threshold")
    if threshold is not None and (
        isinstance(threshold, bool) or not isinstance(threshold, int | float)
    ):
        c.error((*path, "pass_threshold"), f"expected a number, found {describe(threshold)}")
        threshold = None
    if "dimensions" not in body:
        c.error(path, 'missing "dimensions": expected a list of {id, description, weight}')
        return None, None
    raw = body["dimensions"]
    rows = [_id_alias(r) for r in raw] if isinstance(raw, list) else raw
    before = len(c.errors)
    dims = check_dimensions(c, (*path, "dimensions"), rows)
    return (None if len(c.errors) > before else dims), threshold


def _id_alias(row: Any) -> Any:
    if isinstance(row, dict) and "id" not in row and isinstance(row.get("name"), str):
        return {("id" if k == "name" else k): v for k, v in row.items()}
    return row


def _rubric_file(
    c: Collector, path: KeyPath, file: Path
) -> tuple[list[RubricDimension] | None, float | None]:
    if not file.is_file():
        c.error(path, f"expected a rubric .json file, found nothing at {file}")
        return None, None
    try:
        data = load_json(file)
    except InputError as exc:
        c.problems.extend(exc.problems)
        return None, None
    inner = Collector(str(file))
    body = data if isinstance(data, dict) else {"dimensions": data}
    known = {k: v for k, v in body.items() if k in DEFINITION_KEYS}  # the service adds keys
    dims, threshold = rubric_body(inner, (), known)
    c.problems.extend(inner.problems)
    return dims, threshold


def eval_decl(c: Collector, path: KeyPath, node: dict[str, Any]) -> EvalDecl:
    strict_keys(c, path, node, EVAL_KEYS)
    name = text(c, (*path, "name"), node.get("name"), required=True) or ""
    dataset = text(c, (*path, "dataset"), node.get("dataset"))
    source = _source(c, (*path, "source"), node.get("source"))
    if dataset is not None and "source" in node:
        c.error((*path, "source"), "rows come from a catalog dataset or from a source, never both")
    elif dataset is None and "source" not in node:
        c.error(path, 'expected "dataset" (a datasets[] name) or "source" (traces or responses)')
    level = node.get("evaluation_level")
    if level is not None and level not in ("turn", "conversation"):
        c.error(
            (*path, "evaluation_level"), f"expected turn or conversation, found {describe(level)}"
        )
        level = None
    uses = _uses(c, (*path, "evaluators"), node.get("evaluators"))
    target = _target(c, (*path, "target"), node.get("target"))
    max_samples = integer(c, (*path, "max_samples"), node.get("max_samples"))
    simulation = _simulation(c, (*path, "simulation"), node.get("simulation"))
    if simulation is not None:
        if level != "conversation":
            c.error((*path, "simulation"), "needs evaluation_level: conversation")
        if target is None or target.type != "agent":
            c.error((*path, "simulation"), "needs an agent target")
        if source is not None:
            c.error((*path, "simulation"), "its rows are seeds from a dataset, not a source")
        if max_samples:
            c.error((*path, "max_samples"), "a simulated eval takes no positive max_samples")
    if isinstance(source, TraceSource) and target is not None and target.type == "model":
        c.error((*path, "source"), "trace source needs an agent, and the target is a model")
    return EvalDecl(
        name=name,
        id=text(c, (*path, "id"), node.get("id")),
        description=text(c, (*path, "description"), node.get("description")),
        dataset=dataset,
        source=source,
        evaluation_level=level,
        max_samples=max_samples,
        evaluators=uses,
        target=target,
        simulation=simulation,
        line=c.lines.line(path),
    )


def _source(c: Collector, path: KeyPath, value: Any) -> TraceSource | ResponsesSource | None:
    if value is None:
        return None
    node = mapping(c, path, value, "a mapping with type: traces or responses")
    if node is None:
        return None
    kind = node.get("type")
    if kind == "traces":
        strict_keys(c, path, node, TRACE_KEYS)
        lookback = integer(
            c, (*path, "lookback_hours"), node.get("lookback_hours"), hi=MAX_LOOKBACK_HOURS
        )
        start = _time(c, (*path, "start_time"), node.get("start_time"))
        end = _time(c, (*path, "end_time"), node.get("end_time"))
        if lookback and start is not None:
            c.error(
                (*path, "lookback_hours"),
                "over-specified: give lookback_hours or start_time, not both",
            )
        return TraceSource(
            agent_name=text(c, (*path, "agent_name"), node.get("agent_name")),
            agent_version=text(c, (*path, "agent_version"), node.get("agent_version")),
            lookback_hours=lookback,
            start_time=start,
            end_time=end,
            max_traces=integer(c, (*path, "max_traces"), node.get("max_traces")),
        )
    if kind == "responses":
        strict_keys(c, path, node, RESPONSES_KEYS)
        ids = node.get("response_ids", [])
        if not isinstance(ids, list) or not all(isinstance(i, str) and i for i in ids):
            c.error(
                (*path, "response_ids"), f"expected a list of response ids, found {describe(ids)}"
            )
            ids = []
        return ResponsesSource(
            response_ids=list(ids),
            max_turns=integer(c, (*path, "max_turns"), node.get("max_turns")),
        )
    c.error((*path, "type"), f"expected traces or responses, found {describe(kind)}")
    return None


def _time(c: Collector, path: KeyPath, value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, datetime):  # YAML reads an unquoted timestamp as one
        return value.isoformat()
    if isinstance(value, str):
        try:
            datetime.fromisoformat(value.replace("Z", "+00:00"))
            return value
        except ValueError:
            pass
    c.error(path, f'expected an RFC 3339 time like "2026-12-01T00:00:00Z", found {describe(value)}')
    return None


def _uses(c: Collector, path: KeyPath, value: Any) -> list[EvaluatorUseDecl]:
    if value is None:
        return []
    if not isinstance(value, list):
        c.error(path, f"expected a list of {{evaluator: ...}} mappings, found {describe(value)}")
        return []
    out: list[EvaluatorUseDecl] = []
    labels: dict[str, int] = {}
    for i, item in enumerate(value):
        where = (*path, i)
        if isinstance(item, str):
            c.error(
                where,
                f"expected a mapping like {{evaluator: {item}}}, found the bare name "
                f'"{item}" (the extension refuses bare names)',
            )
            continue
        node = mapping(c, where, item, "a mapping with evaluator:")
        if node is None:
            continue
        use = _use(c, where, node)
        if use is None:
            continue
        if use.label in labels:
            c.error(
                where,
                f'"{use.label}" is already used by evaluators[{labels[use.label]}]; '
                "give each use of the same evaluator its own name:",
            )
        labels[use.label] = i
        out.append(use)
    return out


def _use(c: Collector, path: KeyPath, node: dict[str, Any]) -> EvaluatorUseDecl | None:
    strict_keys(c, path, node, USE_KEYS)
    evaluator = text(c, (*path, "evaluator"), node.get("evaluator"), required=True)
    params = sub_mapping(c, path, node, "initialization_parameters", "a mapping")
    threshold = params.get("threshold")
    if threshold is not None and (
        isinstance(threshold, bool)
        or not isinstance(threshold, int | float)
        or not math.isfinite(threshold)
    ):
        c.error(
            (*path, "initialization_parameters", "threshold"),
            f"expected a number, found {describe(threshold)}",
        )
    what = "a mapping of input → {{item.column}}"
    data_mapping = sub_mapping(c, path, node, "data_mapping", what)
    for key, template in data_mapping.items():
        if not isinstance(template, str) or not _MAPPING_RE.match(template):
            c.error(
                (*path, "data_mapping", key),
                "expected {{item.<column>}} or "
                f"{{{{sample.<field>}}}}, found {describe(template)}",
            )
    if "messages" in data_mapping and ({"query", "response"} & set(data_mapping)):
        c.error((*path, "data_mapping"), "map messages, or query/response — not both")
    if evaluator is None:
        return None
    return EvaluatorUseDecl(
        evaluator=evaluator,
        name=text(c, (*path, "name"), node.get("name")),
        version=text(c, (*path, "version"), node.get("version")),
        initialization_parameters=dict(params),
        data_mapping={str(k): str(v) for k, v in data_mapping.items()},
    )


def mapping_source(template: str) -> tuple[str, str] | None:
    """`{{item.expected}}` → ("item", "expected")."""
    found = _MAPPING_RE.match(template)
    return (found.group(1), found.group(2)) if found else None


def _section(
    c: Collector, path: KeyPath, value: Any, what: str, keys: tuple[str, ...]
) -> dict[str, Any] | None:
    """An optional section (an eval's `target:`, `simulation:`): None when absent, or not a
    mapping (the error noted); its keys are checked."""
    if value is None:
        return None
    node = mapping(c, path, value, what)
    if node is not None:
        strict_keys(c, path, node, keys)
    return node


def _target(c: Collector, path: KeyPath, value: Any) -> Target | None:
    node = _section(c, path, value, "a mapping {type: agent|model, name}", TARGET_KEYS)
    if node is None:
        return None
    kind = node.get("type", "agent")
    if kind not in ("agent", "model"):
        c.error((*path, "type"), f"expected agent or model, found {describe(kind)}")
        return None
    name = text(c, (*path, "name"), node.get("name"), required=True)
    return Target(type=kind, name=name) if name else None


def _simulation(c: Collector, path: KeyPath, value: Any) -> Simulation | None:
    what = "a mapping {model, num_conversations, max_turns}"
    node = _section(c, path, value, what, SIMULATION_KEYS)
    if node is None:
        return None
    model = text(c, (*path, "model"), node.get("model"), required=True)
    if model is not None and "/" not in model:
        c.error((*path, "model"), f'expected "<connection>/<deployment>", found {describe(model)}')
    conversations = integer(c, (*path, "num_conversations"), node.get("num_conversations"), 1, 5)
    turns = integer(c, (*path, "max_turns"), node.get("max_turns"), 1, 20)
    return (
        Simulation(model=model, num_conversations=conversations, max_turns=turns) if model else None
    )
