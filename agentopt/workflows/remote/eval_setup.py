"""`eval run --remote`, before anything is sent: the same inputs as a local run (flags,
eval.yaml, the azd environment), plus what Foundry needs — the project endpoint and the
deployed agent's name and version (AGENT_<SVC>_NAME / _VERSION, else eval.yaml
`agent.name` / `agent.version`, as azd resolves them). Every problem here is exit 2.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from agentopt.contracts.task import Task
from agentopt.core.errors import ConfigError, Problem
from agentopt.core.files.azd_env import service_env_prefix
from agentopt.evaluators.base import BuildContext, EvaluatorUse
from agentopt.evaluators.build import EvaluatorCache
from agentopt.evaluators.registry import canonical_name
from agentopt.evaluators.selection import select_evaluators
from agentopt.models.call import CallLayer
from agentopt.models.settings import CallSettings, call_settings
from agentopt.reports.outputs import check_output_paths
from agentopt.workflows.generate.remote import require_endpoint
from agentopt.workflows.remote.eval_request import RemoteCriterion, split_evaluators
from agentopt.workflows.resolve_suite import call_flags
from agentopt.workflows.run.engine import EngineSpec
from agentopt.workflows.run.eval_run import restore_options
from agentopt.workflows.run.inputs import Ask, ResolvedInputs, RunOptions, resolve_inputs
from agentopt.workflows.run.simulated_user import Simulation, simulation_of
from agentopt.workflows.run.store import RunStore
from agentopt.workflows.run.task_filter import tasks_to_run


@dataclass
class RemoteSetup:
    """A remote run, resolved and validated."""

    opts: RunOptions
    inputs: ResolvedInputs
    spec: EngineSpec
    settings: CallSettings
    endpoint: str
    agent_name: str
    """The deployed agent's name in the project."""
    agent_version: str | None
    criteria: list[RemoteCriterion]
    """Judged by Foundry."""
    local: list[EvaluatorUse]
    """Run here over the remote transcripts."""
    selected: list[list[str]]
    """Per task (position): the canonical names of its evaluators, in order."""
    outputs: list[Path]
    seed: int
    store: RunStore | None = None
    """The run folder being resumed or watched."""
    notices: list[str] = field(default_factory=list)

    @property
    def tasks(self) -> Sequence[Task]:
        return self.spec.tasks


def _deployed(inputs: ResolvedInputs, notices: list[str]) -> tuple[str, str | None]:
    agent = inputs.agent
    if agent.deployed_name:
        return agent.deployed_name, agent.deployed_version
    if inputs.detected is None or not agent.name:
        raise ConfigError(
            problems=[
                Problem(
                    "",
                    "--remote",
                    "the remote run needs the deployed agent's name: set "
                    "AGENT_<SERVICE>_NAME (azd deploy writes it) or eval.yaml `agent.name`",
                )
            ]
        )
    notices.append(
        f"{service_env_prefix(agent.name)}NAME is not set: evaluating the deployed agent "
        f"named '{agent.name}' (eval.yaml / azure.yaml name)"
    )
    return agent.name, agent.deployed_version


def _check_tasks(tasks: Sequence[Task], repeat: int, simulation: Simulation) -> None:
    local_only = (
        (
            [t.name for t in tasks if simulation.plays(t)],
            "task(s) for a simulated user",
            "agentopt does not send simulated conversations to Foundry yet",
        ),
        (
            [t.name for t in tasks if t.is_multi_turn],
            "multi-turn task(s)",
            "Foundry's agent-target evaluation sends one user message per row",
        ),
    )
    problems = []
    for names, what, why in local_only:
        if names:
            shown = ", ".join(names[:5]) + (" …" if len(names) > 5 else "")
            problems.append(
                Problem(
                    "",
                    "--remote",
                    f"{len(names)} {what} ({shown}): {why}; run them locally or --filter them out",
                )
            )
    if repeat > 1:
        problems.append(
            Problem("", "--repeat", "--repeat is not supported with --remote (one run per row)")
        )
    if problems:
        raise ConfigError(problems=problems)


def prepare_remote(opts: RunOptions, cwd: Path, ask: Ask | None) -> RemoteSetup:
    """Resolve and validate a remote run (or the run folder `--resume` names)."""
    store: RunStore | None = None
    if opts.resume:
        store = RunStore.open_existing(cwd, opts.resume)
        opts = restore_options(opts, store)
        opts.remote = True
    outputs = [p if p.is_absolute() else cwd / p for p in check_output_paths(opts.outputs)]
    inputs = resolve_inputs(opts, cwd, ask)
    project = inputs.project_dir
    if store is not None and project.resolve() != cwd.resolve():
        store = RunStore.open_existing(project, store.run_id)
    tasks = tasks_to_run(inputs.dataset.tasks, opts.filter, opts.limit)
    options = inputs.options
    repeat = inputs.suite["repeat"]
    notices: list[str] = []
    endpoint = require_endpoint(inputs.agent.project_endpoint or opts.project_endpoint)
    agent_name, agent_version = _deployed(inputs, notices)
    seed = inputs.suite["seed"]
    _check_tasks(tasks, repeat, simulation_of(options, inputs.judge_model, seed))
    settings = call_settings(options, call_flags(inputs.suite, dry_run=opts.dry_run))
    per_task = [
        select_evaluators(t, configured=inputs.evaluators, dataset=inputs.dataset)[0] for t in tasks
    ]
    union: list[EvaluatorUse] = []
    for uses in per_task:
        union.extend(u for u in uses if canonical_name(u.name) not in _names(union))
    planner = CallLayer(
        project, settings.model_copy(update={"cache_enabled": False}), on_notice=notices.append
    )
    cache = EvaluatorCache(
        BuildContext(judge_model=inputs.judge_model, layer=planner, project_dir=project)
    )
    criteria, local = split_evaluators(union, cache)
    if not criteria:
        raise ConfigError(
            problems=[
                Problem(
                    "",
                    "evaluators",
                    "--remote needs at least one evaluator Foundry runs (a builtin judge such as "
                    "builtin.relevance or builtin.task_adherence, or a rubric); "
                    f"these run only locally: {', '.join(u.name for u in local)}",
                )
            ]
        )
    spec = EngineSpec.of(inputs, tasks)
    return RemoteSetup(
        opts=opts,
        inputs=inputs,
        spec=spec,
        settings=settings,
        endpoint=endpoint,
        agent_name=agent_name,
        agent_version=agent_version,
        criteria=criteria,
        local=local,
        selected=[[canonical_name(u.name) for u in uses] for uses in per_task],
        outputs=outputs,
        seed=seed,
        store=store,
        notices=notices,
    )


def _names(uses: list[EvaluatorUse]) -> set[str]:
    return {canonical_name(u.name) for u in uses}
