"""Resolve what `eval run` should run from its flags, eval.yaml and the project (cli.md).

Inputs, first that applies: --prompts, --prompts-file, --config, ./eval.yaml (in the agent
folder), then an M365 eval document found by discovery (asking to create a starter file).
The agent: --instructions/--agent-model (an ad-hoc local prompt agent), else the detected
agent (azure.yaml, eval.yaml `agent:`, `.agent_configs/baseline/`).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentopt.agents.base import default_target
from agentopt.agents.captured import needs_response
from agentopt.contracts.task import Dataset
from agentopt.core.errors import AgentoptError, ConfigError, InputError, Problem
from agentopt.core.files.agent_definition import AgentDefinition
from agentopt.core.files.azd_env import load_azd_environment
from agentopt.core.files.eval_yaml import EvalConfig
from agentopt.core.files.toolkit_env import JUDGE_MODEL_VAR
from agentopt.core.files.yaml_source import read_text
from agentopt.datasets import (
    STARTER_QUESTION,
    dataset_from_prompts,
    discover_dataset,
    discovery_candidates,
    load_dataset,
    write_starter_file,
)
from agentopt.datasets.row_shape import shape_rows
from agentopt.evaluators.base import EvaluatorUse
from agentopt.evaluators.registry import lookup
from agentopt.workflows.azure_eval.suite import load_suite, suite_home
from agentopt.workflows.detect import DetectedTarget, detect_target, find_azure_yaml
from agentopt.workflows.eval_model import DEFAULT_MODEL
from agentopt.workflows.resolve_suite import RUN, resolve_suite
from agentopt.workflows.suite_assets import dataset_path, verify_pinned_assets
from agentopt.workflows.suite_flags import SuiteFlags
from agentopt.workflows.suite_inputs import SuiteInputs


@dataclass
class RunOptions(SuiteFlags):
    """The flags of `eval run` (None = not given)."""

    prompts: list[str] | None = None
    expected: list[str] | None = None
    first_prompt: int | None = None
    """The number of the first --prompts task (`task_<n>`; None: 1). Set by --interactive."""
    prompts_file: Path | None = None
    agent_model: str | None = None
    instructions: str | None = None
    target: str | None = None
    repeat: int | None = None
    judge_concurrency: int | None = None
    limit: int | None = None
    filter: str | None = None
    outputs: list[Path] = field(default_factory=list)
    fail_under: float | None = None
    min_pass_rate: float | None = None
    baseline: str | None = None
    max_errors: int | None = None
    retry_errors: bool = False
    """`--retry-errors`: resume the latest run (or `resume`), redoing its errored units."""
    no_cache: bool = False
    name: str | None = None
    strict: bool = False
    no_upgrade: bool = False
    evaluate_only: bool = False
    """Score captured responses (M365 evaluate-only mode); the agent is not resolved or run."""
    timeout: float | None = None
    toolkit_env: str | None = None
    """`--env NAME`: the M365 Agents Toolkit environment read for this command (its
    `AZURE_AI_MODEL_NAME` is the default judge deployment, as in runevals)."""
    real_tools: bool | None = None
    """None: tool mocks first, then real tools (eval run); see agents.RunConfig."""
    remote: bool = False
    """Run in the Foundry project (cloud evaluation) instead of on this machine."""
    no_wait: bool = False
    """--remote: return once the evaluation run is created (follow it with `eval show --watch`)."""


@dataclass(kw_only=True)
class ResolvedInputs(SuiteInputs):
    """What the run uses, with the warnings met while resolving it."""

    detected: DetectedTarget | None = None


Ask = Callable[[str, bool], bool]
"""A yes/no question with its default; None when prompting is impossible (--no-prompt)."""


def _adhoc_agent(opts: RunOptions, cwd: Path) -> AgentDefinition | None:
    """--instructions makes an ad-hoc local prompt agent (with --agent-model or the default
    model). --agent-model alone only does so when no agent is detected (see resolve_inputs);
    with a detected agent it overrides that agent's model."""
    if opts.instructions is None and opts.agent_model is None:
        return None
    text = opts.instructions or "You are a helpful assistant. Answer concisely."
    if text.startswith("@"):
        path = Path(text[1:])
        path = path if path.is_absolute() else cwd / path
        if not path.is_file():
            raise ConfigError.at("", "--instructions", f"file not found: {text[1:]}")
        text = read_text(path, shown=text[1:], kind="text")
    return AgentDefinition(
        name="adhoc-agent",
        folder=cwd,
        model=opts.agent_model or DEFAULT_MODEL,
        instructions=text,
        source="--agent-model/--instructions",
    )


def _runnable(agent: AgentDefinition) -> bool:
    """Whether some target can run this definition (agents.md's default rule finds one)."""
    try:
        default_target(agent)
    except ConfigError:
        return False
    return True


def _deployed_only(detected: DetectedTarget, config: EvalConfig | None) -> AgentDefinition | None:
    """--remote needs no local definition: the deployed agent's name is enough (azd reads it
    from AGENT_<SVC>_NAME, else eval.yaml `agent.name`)."""
    section = config.agent if config is not None else None
    name = detected.agent_name or (section.name if section else None) or detected.deployed_name
    if not name:
        return None
    return AgentDefinition(
        name=name,
        folder=detected.project_dir,
        target="foundry",
        deployed_name=detected.deployed_name,
        deployed_version=detected.deployed_version or (section.version if section else None),
        project_endpoint=detected.project_endpoint,
        source="deployed agent (--remote)",
    )


def _config_path(opts: RunOptions, cwd: Path, notices: list[str]) -> Path | None:
    if opts.config is not None:
        return _given_config(opts, cwd, notices)
    candidate = cwd / "eval.yaml"
    return candidate if candidate.is_file() else None


def _given_config(opts: RunOptions, cwd: Path, notices: list[str]) -> Path:
    """`--config PATH` as azd resolves it: relative to the agent's project folder
    (`eval_run.go` joins it with the service's project path); a file that exists relative to
    the working folder is kept, as before. Which one was used is said when both could be."""
    assert opts.config is not None
    if opts.config.is_absolute():
        if not opts.config.is_file():
            raise ConfigError.at("", "--config", f"file not found: {opts.config}")
        return opts.config
    here = cwd / opts.config
    agent_dir = _agent_folder(opts, cwd)
    there = agent_dir / opts.config if agent_dir is not None else None
    same = there is not None and there.resolve() == here.resolve()
    if here.is_file():
        if there is not None and not same and there.is_file():
            notices.append(
                f"--config {opts.config}: using {here} (relative to the working folder); the "
                f"agent's project folder has its own {there}"
            )
        return here
    if there is not None and there.is_file():
        if not same:
            notices.append(
                f"--config {opts.config}: using {there} (relative to the agent's project "
                "folder, as azd resolves it)"
            )
        return there
    looked = f"{cwd}" + (f" and {agent_dir}" if agent_dir is not None and not same else "")
    raise ConfigError.at("", "--config", f"file not found: {opts.config} (looked in {looked})")


def _agent_folder(opts: RunOptions, cwd: Path) -> Path | None:
    """The agent's project folder when azure.yaml names one (None: no agent to go by)."""
    try:
        found = detect_target(
            cwd, agent=opts.agent, no_prompt=True, environment=opts.environment,
            eval_config=EvalConfig(),
        )  # fmt: skip
    except AgentoptError:
        return None
    return found.project_dir


def evaluator_uses(
    config: EvalConfig | None, flags: list[str] | None, warnings: list[Problem] | None = None
) -> list[EvaluatorUse]:
    """--evaluator flags replace eval.yaml's evaluators; none → the defaults of §5. A version
    given to an evaluator that has none (a built-in or plugin one) is said to be ignored."""
    if flags:
        return [EvaluatorUse(name=n) for n in flags]
    if config is None:
        return []
    for i, entry in enumerate(config.evaluators):
        if entry.version is not None and warnings is not None and lookup(entry.name):
            warnings.append(
                Problem(
                    str(config.path or "eval.yaml"),
                    f"evaluators[{i}].version",
                    f"ignored: {entry.name} is built into agentopt (or a plugin) and has no "
                    "versions; versions pin registered rubric, prompt and code evaluators",
                    severity="warning",
                )
            )
    return [
        EvaluatorUse(
            name=e.name,
            version=e.version,
            local_uri=str(e.local_uri) if e.local_uri else None,
            options=dict(e.initialization_parameters),
        )
        for e in config.evaluators
    ]


def resolve_inputs(opts: RunOptions, cwd: Path, ask: Ask | None) -> ResolvedInputs:
    """Pick the dataset, the agent and the evaluators (raises ConfigError with the flag to set;
    the warnings met before the error, did-you-mean lines included, go with it)."""
    warnings: list[Problem] = []
    try:
        return _resolve_inputs(opts, cwd, ask, warnings)
    except InputError as err:
        raise err.after(warnings) from None


def _resolve_inputs(
    opts: RunOptions, cwd: Path, ask: Ask | None, warnings: list[Problem]
) -> ResolvedInputs:
    adhoc = _adhoc_agent(opts, cwd) if opts.instructions is not None else None
    if adhoc is not None and opts.environment:
        # Nothing is detected for an ad-hoc agent, but a wrong -e is still an error.
        azure = find_azure_yaml(cwd.resolve())
        load_azd_environment(azure.parent if azure else cwd, name=opts.environment)
    config: EvalConfig | None = None
    detected: DetectedTarget | None = None
    project = cwd
    notices: list[str] = []
    config_path = None if opts.prompts or opts.prompts_file else _config_path(opts, cwd, notices)
    if config_path is not None:
        config, more = load_suite(config_path, opts.eval_name)
        warnings.extend(more)
        project = config_path.resolve().parent
    if adhoc is None and not opts.evaluate_only:
        detected = detect_target(
            project if config_path else cwd,
            agent=opts.agent,
            project_endpoint=opts.project_endpoint,
            no_prompt=ask is None,
            eval_config=config,
            environment=opts.environment,
        )
        warnings.extend(detected.warnings)
        project = detected.project_dir
        adhoc_data = bool(opts.prompts or opts.prompts_file)
        if config is None and opts.config is None and not adhoc_data:
            # detect_target already read the agent folder's eval.yaml (warnings included).
            config = detected.eval_config
    if config is not None:
        verify_pinned_assets(config)
    dataset = _dataset(opts, cwd, project, config, ask)
    agent = (
        _captured(dataset, project)
        if opts.evaluate_only
        else _agent(opts, cwd, adhoc, detected, config)
    )
    suite = resolve_suite(
        RUN, opts, config, detected,
        agent=agent, agent_flag=opts.agent_model, toolkit=_toolkit_judge(opts),
    )  # fmt: skip
    return ResolvedInputs(
        project_dir=suite_home(config) or project,
        dataset=dataset,
        agent=agent,
        evaluators=evaluator_uses(config, opts.evaluators, warnings),
        judge_model=suite["judge_model"],
        eval_config=config,
        detected=detected,
        warnings=warnings,
        notices=notices,
        suite=suite,
    )


def _toolkit_judge(opts: RunOptions) -> str | None:
    """With `--env NAME`: runevals' judge deployment `AZURE_AI_MODEL_NAME` on Azure OpenAI."""
    name = os.environ.get(JUDGE_MODEL_VAR, "").strip() if opts.toolkit_env else ""
    return f"azure:{name}" if name else None


def _agent(
    opts: RunOptions,
    cwd: Path,
    adhoc: AgentDefinition | None,
    detected: DetectedTarget | None,
    config: EvalConfig | None,
) -> AgentDefinition:
    agent = adhoc or (detected.definition if detected else None)
    if opts.agent_model and (agent is None or not _runnable(agent)):
        # Nothing detected, or an eval.yaml `agent:` that only names the agent: ad-hoc.
        agent = adhoc = _adhoc_agent(opts, cwd)
    if agent is None and opts.remote and detected is not None:
        agent = _deployed_only(detected, config)
    if agent is None:
        raise ConfigError(
            "no agent to run: no azure.yaml agent service, eval.yaml `agent:` or "
            ".agent_configs/baseline/ was found",
            hint="pass --agent-model MODEL (and --instructions TEXT|@FILE) for an ad-hoc "
            "agent, or run `agentopt eval init`",
        )
    if adhoc is None and opts.agent_model:
        agent = agent.model_copy(update={"model": opts.agent_model})
    if agent.model is None and (agent.target in (None, "local")):
        agent = agent.model_copy(update={"model": DEFAULT_MODEL})
    if opts.target:
        agent = agent.model_copy(update={"target": opts.target})
    return agent


def _captured(dataset: Dataset, project: Path) -> AgentDefinition:
    """Evaluate-only mode: every turn must carry its captured response or a captured agent
    failure (else exit 2 naming each one); the `captured` target replays them, so no agent
    is resolved or run."""
    missing = [
        Problem(dataset.source, _turn_path(task.index, i, task.is_multi_turn), NO_RESPONSE)
        for task in dataset.tasks
        for i in needs_response(task)
    ]
    if missing:
        raise InputError(
            problems=missing,
            hint="--evaluate-only scores responses captured earlier; drop it to ask the agent",
        )
    name = (dataset.document or {}).get("metadata", {}).get("agentName") or "captured"
    return AgentDefinition(name=str(name), folder=project, target="captured")


NO_RESPONSE = (
    'expected a captured "response" to score, or a captured agent error (--evaluate-only), '
    "found neither"
)


def _turn_path(index: int, turn: int, thread: bool) -> str:
    return f"items[{index}].turns[{turn}]" if thread else f"items[{index}]"


def _dataset(
    opts: RunOptions, cwd: Path, project: Path, config: EvalConfig | None, ask: Ask | None
) -> Dataset:
    upgrade = not opts.no_upgrade
    if opts.prompts:
        return dataset_from_prompts(opts.prompts, opts.expected, first=opts.first_prompt or 1)
    if opts.expected:
        raise ConfigError.at("", "--expected", "--expected needs --prompts")
    if opts.prompts_file is not None:
        path = opts.prompts_file if opts.prompts_file.is_absolute() else cwd / opts.prompts_file
        return load_dataset(path, strict=opts.strict, upgrade=upgrade)
    if config is not None and config.dataset is not None:
        where = str(config.path or "eval.yaml")
        path = dataset_path(project, config.dataset, where)
        dataset = shape_rows(load_dataset(path, strict=opts.strict, upgrade=upgrade), config.rows)
        return dataset.model_copy(
            update={"name": config.dataset.name, "version": config.dataset.version}
        )
    found = discover_dataset(cwd)
    if found is not None:
        return load_dataset(found, strict=opts.strict, upgrade=upgrade)
    looked = ", ".join(str(p.relative_to(cwd)) for p in discovery_candidates(cwd))
    if config is not None:
        raise ConfigError.at(
            str(config.path or "eval.yaml"),
            "dataset",
            "the suite has no dataset: expected `dataset:` with `local_uri` or `name`/`version`",
        )
    if ask is None:
        raise ConfigError(
            f"no dataset: no eval.yaml and no eval document ({looked})",
            hint="pass --prompts-file PATH or --prompts …, or run `agentopt eval init`",
        )
    if not ask(STARTER_QUESTION, True):
        raise ConfigError("no dataset to run", hint="pass --prompts-file PATH or --prompts …")
    path = write_starter_file(cwd)
    return load_dataset(path, strict=opts.strict, upgrade=upgrade)


def snapshot(opts: RunOptions) -> dict[str, Any]:
    """The options as recorded in run.json (paths as text; nothing secret is a flag)."""
    out: dict[str, Any] = {}
    for key, value in vars(opts).items():
        if value in (None, [], False):
            continue
        if isinstance(value, Path):
            value = str(value)
        elif isinstance(value, list):
            value = [str(v) for v in value]
        out[key] = value
    return out
