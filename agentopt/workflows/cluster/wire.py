"""What crosses the process boundary between the driver and a Ray worker, as JSON: the engine
spec a worker builds its `RunEngine` from (once per candidate), a task record per unit, and the
unit's result (or the systemic error that stopped it) back.

JSON rather than pickles, so each side validates what it receives into the same typed records
and a version skew between driver and workers is an error, not a silent misreading. No secret
is ever part of it: providers are named by their settings (`api_key_env`), never by a key.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pydantic import ConfigDict

from agentopt.contracts.task import Dataset
from agentopt.contracts.task_record import UnitResult
from agentopt.core import errors
from agentopt.core.errors import AgentoptError
from agentopt.core.files.agent_definition import AgentDefinition
from agentopt.core.lazy_model import LazyModel
from agentopt.evaluators.base import EvaluatorUse
from agentopt.models.settings import CallSettings
from agentopt.workflows.run.engine import EngineSpec
from agentopt.workflows.run.simulated_user import Simulation

MODEL_ENV = (
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "OPENAI_API_VERSION",
    "AZURE_OPENAI_ENDPOINT",
    "AZURE_OPENAI_API_KEY",
    "AZURE_CLIENT_ID",
    "AZURE_TENANT_ID",
    "AZURE_CLIENT_SECRET",
    "FOUNDRY_PROJECT_ENDPOINT",
    "AZURE_AI_PROJECT_ENDPOINT",
    "OLLAMA_HOST",
    "AGENTOPT_LOCAL_GGUF",
)
"""Environment the call layer resolves models and keys from: a worker that lacked one the
driver has would resolve a model differently (or fall back to the embedded one)."""


def env_names(settings: CallSettings, agent: AgentDefinition | None) -> list[str]:
    """Names (never values) of the driver's environment that every worker must also have."""
    wanted = set(MODEL_ENV)
    wanted |= {p.api_key_env for p in settings.providers.values() if p.api_key_env}
    if agent is not None:
        wanted |= set(agent.headers_from_env.values())
    return sorted(name for name in wanted if name in os.environ)


class UnitSpec(LazyModel):
    """Everything a worker needs to play one candidate's units (the tasks come one by one):
    the fields of `EngineSpec` of the same names, but for the tasks, the repeat count and the
    error stop, which stay with the driver."""

    model_config = ConfigDict(extra="forbid")

    project_dir: str
    """The driver's project folder: paths under it are moved to the worker's copy."""
    dataset: Dataset
    """Without its tasks: dataset-level settings (format, default evaluators) only."""
    agent: AgentDefinition
    evaluators: list[EvaluatorUse]
    judge_model: str | None
    real_tools: bool | None
    turn_timeout_s: float
    candidate_id: str
    simulation: Simulation | None = None
    """Simulated users and the evaluation level: a worker plays the same conversations."""

    @classmethod
    def of(cls, spec: EngineSpec) -> UnitSpec:
        dataset = spec.dataset.model_copy(
            update={"tasks": [], "document": None, "warnings": [], "upgrade": None}
        )
        carried = {name: getattr(spec, name) for name in cls.model_fields}
        project_dir = str(Path(spec.project_dir).resolve())
        return cls(**{**carried, "project_dir": project_dir, "dataset": dataset})

    def engine_spec(self, root: Path) -> EngineSpec:
        """The engine spec on a worker whose copy of the project is `root`."""
        move = _Mover(Path(self.project_dir), root)
        agent = self.agent.model_copy(
            update={
                "folder": Path(move(str(self.agent.folder))),
                "tools_module": move(self.agent.tools_module),
                "command": [move(a) for a in self.agent.command] if self.agent.command else None,
                "startup_command": _move_command(self.agent.startup_command, move),
                "mcp_servers": [
                    s.model_copy(
                        update={"command": move(s.command), "args": list(map(move, s.args))}
                    )
                    for s in self.agent.mcp_servers
                ],
                # Several workers share a machine: a hosted agent gets a free port each start.
                "port": 0 if self.agent.target == "hosted" else self.agent.port,
            }
        )
        evaluators = [
            u.model_copy(update={"local_uri": move(u.local_uri)}) if u.local_uri else u
            for u in self.evaluators
        ]
        carried = {name: getattr(self, name) for name in type(self).model_fields}
        moved = {"project_dir": root, "agent": agent, "evaluators": evaluators}
        return EngineSpec(**{**carried, **moved}, tasks=[])


class _Mover:
    """Rewrites a path (or a command word) under the driver's project to the worker's copy;
    anything else is left as it is (it works on a one-machine cluster only; docs/scale-out.md)."""

    def __init__(self, source: Path, root: Path) -> None:
        self.source = str(source).rstrip("/")
        self.root = str(root).rstrip("/")

    def __call__(self, value: str | None) -> Any:
        if value is None or self.source == self.root:
            return value
        if value == self.source:
            return self.root
        if value.startswith(self.source + "/"):
            return self.root + value[len(self.source) :]
        return value


def _move_command(command: str | list[str] | None, move: _Mover) -> str | list[str] | None:
    if command is None or isinstance(command, str):
        return command
    return [move(word) for word in command]


class RaisedError(LazyModel):
    """A systemic error a unit raised on a worker (budget reached, interrupted, …)."""

    model_config = ConfigDict(extra="forbid")

    kind: str
    message: str
    hint: str | None = None

    @classmethod
    def of(cls, err: AgentoptError) -> RaisedError:
        return cls(kind=type(err).__name__, message=err.message, hint=err.hint)

    def error(self) -> AgentoptError:
        """The same kind of error on the driver (the base class for kinds it does not know)."""
        kind = getattr(errors, self.kind, None)
        simple = (
            errors.BudgetExceeded,
            errors.TooManyErrors,
            errors.Interrupted,
            errors.AgentError,
            errors.ConfigError,
        )
        if isinstance(kind, type) and issubclass(kind, simple):
            return kind(self.message, hint=self.hint)
        return errors.AgentError(self.message, hint=self.hint)


class UnitReply(LazyModel):
    """A worker's answer for one unit: its typed result, or the error that stopped it."""

    model_config = ConfigDict(extra="forbid")

    result: UnitResult | None = None
    raised: RaisedError | None = None

    def unit(self) -> UnitResult:
        """The unit's result, or the worker's error raised again here."""
        if self.raised is not None:
            raise self.raised.error()
        assert self.result is not None
        return self.result
