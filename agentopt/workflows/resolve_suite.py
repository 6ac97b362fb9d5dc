"""The one merge of flags over the suite file over the azd environment over defaults.

`eval run` (local and `--remote`) and `optimize` resolve their settings here, from one table
(`KNOBS`: setting → flag → eval.yaml key → default), so a rule such as "`--repeat` wins over
`options.repeat`" is written once and every command reports the same value from the same
place. The judge model keeps its one resolution (`workflows.eval_model`); this module only
says where its answer came from. Each value carries its source (`contracts.resolved_suite`),
which `--dry-run` and `--debug` print.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentopt.agents.base import DEFAULT_TURN_TIMEOUT_S
from agentopt.contracts.resolved_suite import (
    AGENT_FILE,
    AZURE_EVAL_YAML,
    DEFAULT,
    ENVIRONMENT,
    EVAL_YAML,
    FLAG,
    ResolvedSuite,
)
from agentopt.core.errors import InputError
from agentopt.core.files.azure_eval_load import is_azure_eval_file
from agentopt.core.files.foundry_context import MODEL_DEPLOYMENT_VAR
from agentopt.core.files.problems import LineIndex
from agentopt.core.files.yaml_source import load_yaml
from agentopt.core.limits import DEFAULT_MAX_ANSWER_BYTES
from agentopt.models.settings import (
    DEFAULT_CALL_TIMEOUT_S,
    DEFAULT_CONCURRENCY,
    DEFAULT_STALL_TIMEOUT_S,
    CallFlags,
)
from agentopt.workflows.eval_model import DEFAULT_MODEL, resolve_eval_model
from agentopt.workflows.optimize.options import (
    DEFAULT_MAX_CANDIDATES,
    DEFAULT_MAX_STALLS,
    DEFAULT_PARALLEL_PROPOSALS,
    DEFAULT_SCREENING_SIZE,
)
from agentopt.workflows.resolve_endpoints import endpoint_settings, env_source

if TYPE_CHECKING:
    from agentopt.core.files.agent_definition import AgentDefinition
    from agentopt.core.files.eval_yaml import EvalConfig
    from agentopt.workflows.detect import DetectedTarget

RUN = "run"
OPTIMIZE = "optimize"
GENERATE = "generate"
"""`eval init` / `eval generate`: they write the suite file, so they read it too."""
BOTH = frozenset({RUN, OPTIMIZE})


@dataclass(frozen=True)
class Knob:
    """One setting: the flag that sets it, its suite-file key, its default, and the commands
    that have it."""

    name: str
    flag: str | None
    key: str | None
    default: Any = None
    commands: frozenset[str] = BOTH
    switched: Any = None
    """For an on/off flag (`--no-cache`): the value the setting takes when the flag is given;
    the flag's False is then "not given"."""

    @property
    def attr(self) -> str | None:
        """The options attribute of the flag (`--max-errors` → `max_errors`)."""
        return self.flag.lstrip("-").replace("-", "_") if self.flag else None


_R, _O = frozenset({RUN}), frozenset({OPTIMIZE})
_POOLS = DEFAULT_CONCURRENCY
"""The call layer's pool defaults: `models.settings` owns them; the table only shows them."""
_AGENTS, _JUDGES = "options.max_concurrent_agent_runs", "options.judge_concurrency"
_CALL_TIMEOUT = DEFAULT_CALL_TIMEOUT_S
"""Raised for the embedded model and self-hosted servers unless set (`models.deadlines`)."""
_SCREENING = "options.optimization_config.candidate_screening_sample_size"
_SPACE = "options.optimization_config.model_search_space"
KNOBS: tuple[Knob, ...] = (
    Knob("repeat", "--repeat", "options.repeat", 1, _R),
    Knob("seed", "--seed", "options.seed", 0),
    Knob("agent_concurrency", "--concurrency", _AGENTS, _POOLS["agent"]),
    Knob("judge_concurrency", "--judge-concurrency", _JUDGES, _POOLS["judge"], _R),
    Knob("judge_concurrency", None, _JUDGES, _POOLS["judge"], _O),
    Knob("call_timeout_s", "--call-timeout", "options.call_timeout_seconds", _CALL_TIMEOUT),
    Knob("attempt_timeout_s", None, "options.attempt_timeout_seconds"),
    Knob("stall_timeout_s", None, "options.stall_timeout_seconds", DEFAULT_STALL_TIMEOUT_S),
    Knob("run_timeout_s", "--timeout", None, None, _R),
    Knob("cache_reads", "--no-cache", None, True, _R, switched=False),
    Knob("max_answer_bytes", None, "options.max_answer_bytes", DEFAULT_MAX_ANSWER_BYTES),
    Knob("turn_timeout_s", None, "options.timeout_seconds", DEFAULT_TURN_TIMEOUT_S),
    Knob("executor", "--executor", "options.executor", "local"),
    Knob("fail_under", "--fail-under", "options.fail_under", None, _R),
    Knob("min_pass_rate", "--min-pass-rate", "options.min_pass_rate", None, _R),
    Knob("max_errors", "--max-errors", "options.max_errors", None, _R),
    Knob("max_errors", None, "options.max_errors", 0, _O),
    Knob("max_cost", "--max-cost", "options.max_cost"),
    Knob("budget_calls", "--budget-calls", "options.budget_calls", None, _O),
    Knob("real_tools", "--real-tools", "options.real_tools", False, _O),
    Knob("name", "--name", "name", None, frozenset({RUN, GENERATE})),
    Knob("max_samples", "--max-samples", "max_samples", None, frozenset({GENERATE})),
    Knob("optimization_model", "--optimize-model", "options.optimization_model", None, _O),
    Knob("targets", "--targets", "options.targets", None, _O),
    Knob(
        "max_candidates", "--max-candidates", "options.max_candidates", DEFAULT_MAX_CANDIDATES, _O
    ),
    Knob("max_stalls", "--max-stalls", "options.max_stalls", DEFAULT_MAX_STALLS, _O),
    Knob(
        "parallel_proposals",
        "--parallel-proposals",
        "options.parallel_proposals",
        DEFAULT_PARALLEL_PROPOSALS,
        _O,
    ),
    Knob("screening_size", None, _SCREENING, DEFAULT_SCREENING_SIZE, _O),
    Knob("model_search_space", "--model-search-space", _SPACE, None, _O),
)
"""The flag-over-file merge, declared once. A value of None or an empty list is "not set"."""

AZURE_EVAL_KEYS = {
    "options.eval_model": "evaluators[].initialization_parameters.model",
    "options.repeat": "simulation.num_conversations",
    "options.simulator_model": "simulation.model",
    "options.desired_num_turns": "simulation.max_turns",
}
"""Where an azure.eval.yaml eval keeps the keys it maps onto (`azure_eval.suite`)."""


def _given(value: Any) -> bool:
    return value is not None and not (isinstance(value, list | tuple) and not value)


def _flag(knob: Knob, opts: object) -> Any:
    """The knob's flag value as given (None: not given)."""
    value = getattr(opts, knob.attr, None) if knob.attr else None
    if knob.switched is not None:
        return knob.switched if value else None
    return value


def _lookup(config: EvalConfig, key: str) -> Any:
    value: Any = config
    for part in key.split("."):
        value = getattr(value, part, None)
        if value is None:
            return None
    return value


class _SuiteFile:
    """How to name a key of the suite file in use (with its line, for an eval.yaml)."""

    def __init__(self, config: EvalConfig | None) -> None:
        self.config = config
        path = config.path if config is not None else None
        self.azure = path is not None and is_azure_eval_file(path)
        self.kind = AZURE_EVAL_YAML if self.azure else EVAL_YAML
        self.shown = _shown(path) if path is not None else "eval.yaml"
        self._lines: LineIndex | None = None

    def where(self, key: str) -> str:
        if self.azure:
            name = self.config.name if self.config is not None else None
            return f"{self.shown} eval '{name}' {AZURE_EVAL_KEYS.get(key, key)}"
        line = self._line(key)
        return f"{self.shown} {key}" + (f" (line {line})" if line else "")

    def place(self, key: str) -> tuple[str, str]:
        """(kind, where) of a key of this suite file."""
        return self.kind, self.where(key)

    def _line(self, key: str) -> int | None:
        path = self.config.path if self.config is not None else None
        if path is None:
            return None
        if self._lines is None:
            try:
                self._lines = load_yaml(path)[1]
            except (InputError, OSError):
                self._lines = LineIndex()
        return self._lines.line(tuple(key.split(".")))


def _shown(path: Path) -> str:
    return f"{path.parent.name}/{path.name}" if path.parent.name == "evals" else path.name


def resolve_suite(
    command: str,
    opts: object,
    config: EvalConfig | None,
    detected: DetectedTarget | None,
    *,
    agent: AgentDefinition | None = None,
    agent_flag: str | None = None,
    toolkit: str | None = None,
    defaults: Mapping[str, Any] | None = None,
    judge_default: str = DEFAULT_MODEL,
) -> ResolvedSuite:
    """Every merged setting of `command` (`run` | `optimize`) with its source.

    Args:
        opts: the command's options (`RunOptions` / `OptimizeOptions`): a knob's `attr` is
            read from it.
        config: the suite in use (eval.yaml, or one eval of an azure.eval.yaml).
        detected: what `detect_target` found (its azd environment).
        agent: the agent that will run, once resolved (its model is reported).
        agent_flag: `--agent-model` when given.
        toolkit: an M365 Toolkit environment's judge (`eval run --env NAME`).
    """
    suite = ResolvedSuite()
    where = _SuiteFile(config)
    if agent is not None:
        _agent_model(suite, agent, agent_flag, detected, config, where)
    _judge(suite, opts, config, detected, where, toolkit, judge_default)
    own = defaults or {}
    for knob in KNOBS:
        if command not in knob.commands:
            continue
        flag = _flag(knob, opts)
        key = _lookup(config, knob.key) if config is not None and knob.key else None
        if _given(flag):
            suite.put(knob.name, flag, FLAG, knob.flag or knob.name)
        elif knob.key and _given(key):
            suite.put(knob.name, key, where.kind, where.where(knob.key))
        else:
            suite.put(knob.name, own.get(knob.name, knob.default), DEFAULT, "default")
    if command in BOTH:
        endpoints = detected.foundry if detected is not None else None
        endpoint_settings(suite, opts, config, endpoints, where.place)
    return suite


def call_flags(suite: ResolvedSuite, *, dry_run: bool = False) -> CallFlags:
    """The call layer's flags from the resolved settings: only what the user set (by a flag or
    the suite file), so `call_settings` applies the defaults it owns and the run uses exactly
    what the provenance table shows."""

    def given(name: str) -> Any:
        return suite.get(name) if suite.given(name) else None

    def flag(name: str) -> Any:  # the call layer reads the environment itself
        found = suite.settings.get(name)
        return found.value if found is not None and found.kind == FLAG else None

    return CallFlags(
        concurrency=given("agent_concurrency"),
        judge_concurrency=given("judge_concurrency"),
        max_cost=given("max_cost"),
        timeout_s=given("run_timeout_s"),
        call_timeout_s=given("call_timeout_s"),
        project_endpoint=flag("calls_project_endpoint"),
        no_cache=suite.get("cache_reads") is False,
        dry_run=dry_run,
    )


def _judge(
    suite: ResolvedSuite,
    opts: object,
    config: EvalConfig | None,
    detected: DetectedTarget | None,
    where: _SuiteFile,
    toolkit: str | None,
    default: str,
) -> None:
    flag = getattr(opts, "eval_model", None)
    model = resolve_eval_model(flag, config, detected, toolkit=toolkit, default=default)
    if model.source == "--eval-model":
        suite.put("judge_model", model.name, FLAG, "--eval-model")
    elif model.source.startswith("eval.yaml"):
        suite.put("judge_model", model.name, where.kind, where.where("options.eval_model"))
    elif model.source == MODEL_DEPLOYMENT_VAR:
        foundry = detected.foundry if detected is not None else None
        env = foundry.environment if foundry is not None else None
        suite.put("judge_model", model.name, *env_source(env, MODEL_DEPLOYMENT_VAR))
    elif model.source == "default":
        suite.put("judge_model", model.name, DEFAULT, "default")
    else:
        suite.put("judge_model", model.name, ENVIRONMENT, model.source)


def _agent_model(
    suite: ResolvedSuite,
    agent: AgentDefinition,
    flag: str | None,
    detected: DetectedTarget | None,
    config: EvalConfig | None,
    where: _SuiteFile,
) -> None:
    defined = detected.definition if detected is not None else None
    from_file = defined.model if defined is not None else None
    section = config.agent if config is not None else None
    if flag:
        suite.put("agent_model", agent.model, FLAG, "--agent-model")
    elif section is not None and section.model and section.model == agent.model:
        suite.put("agent_model", agent.model, where.kind, where.where("agent.model"))
    elif from_file and from_file == agent.model:
        shown = _relative(defined.source if defined else "", detected)
        suite.put("agent_model", agent.model, AGENT_FILE, shown)
    else:
        suite.put("agent_model", agent.model, DEFAULT, "default")


def _relative(source: str, detected: DetectedTarget | None) -> str:
    """An agent file as the user knows it: relative to the project folder."""
    if detected is None:
        return source
    try:
        return str(Path(source).relative_to(detected.project_dir))
    except ValueError:
        return source


def provenance_rows(
    suite: ResolvedSuite, secrets: Mapping[str, str] | None = None
) -> list[tuple[str, str, str]]:
    """(setting, value, source) rows to print, secrets masked (`core.redaction`)."""
    from agentopt.core.redaction import Redactor, looks_like_secret, secret_values
    from agentopt.models.resolve import shown_server

    redactor = Redactor(secret_values(secrets))
    rows = []
    for name, setting in suite.settings.items():
        value = _text(setting.value)
        if _is_url(value):  # an address: shown without its query and user:password@
            value = redactor.text(shown_server(value))
        else:
            value = "***" if looks_like_secret(value) else redactor.text(value)
        rows.append((name, value, redactor.text(setting.where)))
    return rows


def _is_url(value: str) -> bool:
    return "://" in value and " " not in value


def _text(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, list | tuple):
        return ", ".join(str(v) for v in value) or "-"
    return str(value)
