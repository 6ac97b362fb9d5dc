"""`eval generate` (cli.md): the seed dataset and the rubric evaluator, registered as new
versions under `.azure/.foundry/`, their editable working copies, and eval.yaml pinned to them.

    request = SuiteRequest(...)               # built by the CLI (or `init.plan_suite`)
    result = run_generate(request, settings)  # or `await generate_suite(request, layer)`

Order matters for a person reading the files afterwards: everything the model must produce is
produced first (tasks, rubric); only then is anything written, so a failed generation leaves
no half-made suite. The rubric self-check runs last and only warns.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from pydantic import ConfigDict, Field

from agentopt.contracts.task import Task
from agentopt.core.aio import run_loop
from agentopt.core.atomic import backup, write_bytes_atomic
from agentopt.core.errors import AgentoptError, Problem
from agentopt.core.files.eval_yaml import (
    AgentSection,
    DatasetRef,
    EvalConfig,
    EvaluatorEntry,
    Options,
)
from agentopt.core.files.evaluator_yaml import EvaluatorSpec, RubricDefinition
from agentopt.core.files.rubric import RubricDimension, dump_rubric
from agentopt.core.lazy_model import LazyModel
from agentopt.datasets import load_dataset, resolve_dataset_path
from agentopt.evaluators.build import build_evaluator
from agentopt.evaluators.judges.rubric import DEFAULT_THRESHOLD
from agentopt.models import settings as settings_module
from agentopt.models.call import CallLayer, CallSettings
from agentopt.models.settings import CallFlags
from agentopt.registry import Registry, dataset_copy_path, rubric_copy_path
from agentopt.workflows.events import NullPhases, PhaseSink
from agentopt.workflows.generate.config import PinnedAsset, pin_sections, write_fresh_config
from agentopt.workflows.generate.dataset import (
    DEFAULT_CATEGORIES,
    DatasetSpec,
    GenerationStats,
    generate_dataset,
)
from agentopt.workflows.generate.prompts import AgentContext, tool_summaries
from agentopt.workflows.generate.remote import ClientFactory, require_endpoint, upload_dataset
from agentopt.workflows.generate.rubric import generate_rubric
from agentopt.workflows.generate.rubric_check import RubricCheck, check_rubric

DEFAULT_EVAL_MODEL = "gpt-4.1-mini"
RUBRIC_DESCRIPTION = "Quality rubric generated from the agent description."


class SuiteRequest(LazyModel):
    """Everything `generate_suite` needs, resolved (paths absolute, defaults applied)."""

    model_config = ConfigDict(extra="forbid")

    project_dir: Path
    """The agent project: `.azure/.foundry/` and `.agentopt/` live here."""
    config_path: Path
    """eval.yaml to write; working copies go beside it."""
    suite_name: str
    agent_name: str
    agent_kind: str | None = None
    agent_config: Path | None = None
    """`.agent_configs/baseline/metadata.yaml`, when there is one."""
    agent_instructions: str | None = None
    tools: list[dict[str, Any]] = Field(default_factory=list)
    skills: list[dict[str, str]] = Field(default_factory=list)
    """`{"name", "description"}` of each skill the agent can load."""
    instruction: str
    """The generation instruction."""
    eval_model: str = DEFAULT_EVAL_MODEL
    max_samples: int = Field(default=15, ge=1, le=1000)
    categories: list[str] = Field(default_factory=lambda: list(DEFAULT_CATEGORIES))
    multi_turn: int = Field(default=0, ge=0)
    evaluation_level: Literal["item", "conversation"] | None = None
    """`--evaluation-level`, else the suite's own: conversation makes the `--multi-turn` tasks
    persona/goal tasks a simulated user plays, and is written into eval.yaml."""
    seed: int = 0
    dataset_file: Path | None = None
    """`--dataset`: bring your own; only the rubric is generated."""
    extra_evaluators: list[str] = Field(default_factory=list)
    """`--evaluator` names, listed before the rubric."""
    dataset_name: str
    evaluator_name: str
    write_dataset: bool = True
    """False: keep the suite's dataset (only the rubric is regenerated)."""
    write_evaluator: bool = True
    """False: keep the suite's rubric (only the dataset is regenerated)."""
    fresh_config: bool = True
    """True: write eval.yaml from scratch (backing up any old one); False: re-pin in place."""
    remote: bool = False
    project_endpoint: str | None = None
    base_config: EvalConfig | None = None
    """The eval.yaml being replaced (`--reset-defaults`): its agent and options are kept."""


class AssetInfo(LazyModel):
    """One registered asset, for the summary."""

    model_config = ConfigDict(extra="forbid")

    name: str
    version: str
    changed: bool
    """False when the content equalled the latest version (no new version)."""
    path: Path
    """The editable working copy (or the user's own dataset file)."""
    count: int = 0
    """Tasks (datasets) or dimensions (evaluators)."""
    remote: dict[str, Any] | None = None


class SuiteResult(LazyModel):
    """What `generate_suite` did."""

    model_config = ConfigDict(extra="forbid")

    config_path: Path
    dataset: AssetInfo | None = None
    evaluator: AssetInfo | None = None
    dimensions: list[RubricDimension] = Field(default_factory=list)
    categories: dict[str, int] = Field(default_factory=dict)
    stats: GenerationStats | None = None
    check: RubricCheck | None = None
    backups: list[Path] = Field(default_factory=list)
    """Files that were replaced, with where their old content went."""
    warnings: list[Problem] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)


def agent_context(request: SuiteRequest) -> AgentContext:
    return AgentContext(
        instruction=request.instruction.strip(),
        agent_instructions=(request.agent_instructions or "").strip() or None,
        tools=tool_summaries(request.tools),
        skills=[dict(s) for s in request.skills],
    )


async def generate_suite(
    request: SuiteRequest,
    layer: CallLayer,
    *,
    client_factory: ClientFactory | None = None,
    progress: PhaseSink | None = None,
) -> SuiteResult:
    """Generate, register and pin the suite described by `request`.

    Args:
        request: the resolved inputs.
        layer: the call layer for generator and judge calls.
        client_factory: builds the Foundry project client for `--remote` (default: the
            azure-ai-projects client with DefaultAzureCredential).
        progress: told each model phase (tasks, rubric, self-check) and what it made so far.
    """
    phases = progress or NullPhases()
    phases.attach(layer.meter)
    if request.remote:
        require_endpoint(request.project_endpoint)
    for name in request.extra_evaluators:  # fail before spending on generation
        build_evaluator(
            name, judge_model=request.eval_model, layer=layer, project_dir=request.project_dir
        )
    agent = agent_context(request)
    result = SuiteResult(config_path=request.config_path)
    registry = Registry(request.project_dir)
    tasks: list[Task] = []
    content: bytes | None = None
    if request.write_dataset and request.dataset_file is not None:
        source = resolve_dataset_path(request.dataset_file)
        loaded = load_dataset(source, upgrade=False)
        tasks, content = list(loaded.tasks), source.read_bytes()
        result.warnings.extend(loaded.warnings)
    elif request.write_dataset:
        spec = DatasetSpec(
            count=request.max_samples,
            categories=request.categories,
            multi_turn=request.multi_turn,
            simulated=request.evaluation_level == "conversation",
            seed=request.seed,
        )
        phases.phase("generating tasks", spec.count, "tasks")
        generated = await generate_dataset(layer, request.eval_model, agent, spec, phases)
        tasks, content = generated.tasks, generated.jsonl().encode("utf-8")
        result.stats = generated.stats
    dims: list[RubricDimension] = []
    if request.write_evaluator:
        phases.phase("writing the rubric")
        dims = await generate_rubric(layer, request.eval_model, agent, seed=request.seed)
    phases.end()
    if content is not None:
        result.dataset = _register_dataset(request, registry, content, len(tasks), result)
        result.categories = _categories(tasks)
    if request.write_evaluator:
        result.evaluator = _register_rubric(request, registry, dims, result)
        result.dimensions = dims
    _write_config(request, result)
    if result.evaluator is not None:
        check_tasks = tasks or _existing_tasks(request)
        result.check = await check_rubric(
            layer,
            request.eval_model,
            {"name": result.evaluator.name, "version": result.evaluator.version},
            check_tasks,
            agent,
            project_dir=request.project_dir,
            seed=request.seed,
            progress=phases,
        )
        phases.end()
    if request.remote and result.dataset is not None and request.project_endpoint:
        result.dataset.remote = upload_dataset(
            registry,
            result.dataset.name,
            result.dataset.version,
            request.project_endpoint,
            client_factory=client_factory,
        )
        result.notes.append("the rubric evaluator stays local (Foundry has no upload API for it)")
    return result


def run_generate(
    request: SuiteRequest,
    settings: CallSettings | None = None,
    *,
    on_notice: Callable[[str], None] | None = None,
    progress: PhaseSink | None = None,
) -> SuiteResult:
    """`generate_suite` in its own event loop, with a call layer for the project."""

    async def main() -> SuiteResult:
        async with CallLayer(request.project_dir, settings, on_notice=on_notice) as layer:
            try:
                return await generate_suite(request, layer, progress=progress)
            finally:
                if progress is not None:
                    progress.end()

    return run_loop(main())


def _register_dataset(
    request: SuiteRequest, registry: Registry, content: bytes, count: int, result: SuiteResult
) -> AssetInfo:
    name = request.dataset_name
    source: dict[str, Any]
    if request.dataset_file is not None:
        path = resolve_dataset_path(request.dataset_file)
        source = {"kind": "imported", "file": path.name}
        ext = path.suffix.lstrip(".").lower() or "jsonl"
    else:
        path = dataset_copy_path(request.config_path.parent, name)
        _write_copy(path, content, result)
        source = {
            "kind": "generated",
            "model": request.eval_model,
            "instruction_sha256": _sha(request.instruction),
            "seed": request.seed,
        }
        ext = "jsonl"
    version, changed = registry.register_dataset(name, content, source, ext=ext)
    return AssetInfo(name=name, version=version, changed=changed, path=path, count=count)


def _register_rubric(
    request: SuiteRequest, registry: Registry, dims: list[RubricDimension], result: SuiteResult
) -> AssetInfo:
    name = request.evaluator_name
    path = rubric_copy_path(request.config_path.parent, name)
    _write_copy(path, dump_rubric(dims).encode("utf-8"), result)
    source = {
        "kind": "generated",
        "model": request.eval_model,
        "instruction_sha256": _sha(request.instruction),
    }
    spec = EvaluatorSpec(
        name=name,
        type="rubric",
        description=RUBRIC_DESCRIPTION,
        source=source,
        threshold=DEFAULT_THRESHOLD,
        definition=RubricDefinition(dimensions=dims),
    )
    version, changed = registry.register_evaluator(name, spec, source)
    return AssetInfo(name=name, version=version, changed=changed, path=path, count=len(dims))


def _write_copy(path: Path, content: bytes, result: SuiteResult) -> None:
    """Write a working copy; a different existing file is backed up first."""
    if path.is_file():
        if path.read_bytes() == content:
            return
        result.backups.append(backup(path))
    write_bytes_atomic(path, content)


def _write_config(request: SuiteRequest, result: SuiteResult) -> None:
    path = request.config_path
    if request.fresh_config:
        saved = write_fresh_config(path, _fresh_config(request, result), request.agent_name)
    else:
        saved = pin_sections(
            path, dataset=_pinned(result.dataset), evaluator=_pinned(result.evaluator)
        )
    if saved is not None:
        result.backups.append(saved)


def _fresh_config(request: SuiteRequest, result: SuiteResult) -> EvalConfig:
    """The new eval.yaml. With `--reset-defaults` over a readable file, how the agent is
    reached (`agent:`), the other `options` and the optimize splits are carried over: only
    what generation produces is reset."""
    kind = request.agent_kind if request.agent_kind in ("prompt", "hosted") else None
    base = request.base_config
    agent = base.agent.model_copy() if base and base.agent else AgentSection()
    agent.name = request.agent_name
    agent.kind = agent.kind or kind  # type: ignore[assignment]
    agent.config = agent.config or request.agent_config
    options = base.options.model_copy() if base else Options()
    options.eval_model = request.eval_model
    if request.evaluation_level is not None:
        options.evaluation_level = request.evaluation_level
    return EvalConfig(
        name=request.suite_name,
        agent=agent,
        dataset=_dataset_ref(result.dataset),
        validation_dataset=base.validation_dataset if base else None,
        test_dataset=base.test_dataset if base else None,
        evaluators=[EvaluatorEntry(name=n) for n in request.extra_evaluators]
        + _rubric_entries(result.evaluator),
        options=options,
        max_samples=request.max_samples if request.dataset_file is None else None,
    )


def _pinned(asset: AssetInfo | None) -> PinnedAsset | None:
    return None if asset is None else PinnedAsset(asset.name, asset.version, asset.path)


def _dataset_ref(asset: AssetInfo | None) -> DatasetRef | None:
    if asset is None:
        return None
    return DatasetRef(name=asset.name, version=asset.version, local_uri=asset.path)


def _rubric_entries(asset: AssetInfo | None) -> list[EvaluatorEntry]:
    if asset is None:
        return []
    return [EvaluatorEntry(name=asset.name, version=asset.version, local_uri=asset.path)]


def _existing_tasks(request: SuiteRequest) -> list[Task]:
    """The suite's current tasks (for the self-check when only the rubric is regenerated)."""
    from agentopt.core.files.eval_yaml_load import load_eval_config

    try:
        config, _ = load_eval_config(request.config_path)
        if config.dataset is None or config.dataset.local_uri is None:
            return []
        return list(load_dataset(config.dataset.local_uri, upgrade=False).tasks)
    except AgentoptError:  # the self-check is advisory: no tasks simply skips it
        return []


def _categories(tasks: list[Task]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for task in tasks:
        key = task.category or "uncategorized"
        counts[key] = counts.get(key, 0) + 1
    return counts


def _sha(text: str) -> str:
    return hashlib.sha256(text.strip().encode("utf-8")).hexdigest()


MODEL_SECTIONS = (
    "providers",
    "prices",
    "attempt_timeout_seconds",
    "call_timeout_seconds",
    "stall_timeout_seconds",
)
"""The sections of the suite's `options` generation takes (providers, prices, the call
deadlines): its limits and budget (concurrency, max_cost) are the runs'."""


def call_settings(
    config_path: Path | None, project_endpoint: str | None, call_timeout: float | None = None
) -> CallSettings:
    """Call-layer settings from eval.yaml `options` (providers, prices) when the file exists
    and loads, the defaults otherwise (built by the one `models.settings.call_settings`)."""
    from agentopt.core.files.eval_yaml_load import load_eval_config

    flags = CallFlags(project_endpoint=project_endpoint, call_timeout_s=call_timeout)
    if config_path is None or not config_path.is_file():
        return settings_module.call_settings(None, flags)
    try:
        options = load_eval_config(config_path)[0].options
    except AgentoptError:
        return settings_module.call_settings(None, flags)
    models_only = Options(**{name: getattr(options, name) for name in MODEL_SECTIONS})
    return settings_module.call_settings(models_only, flags)
