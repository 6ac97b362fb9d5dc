"""The Ray actor that plays units on a worker: it builds the same `RunEngine` the local executor
uses (target, evaluators, call layer) from the driver's `UnitSpec`, once per candidate, and runs
`RunEngine.run_unit` for each task record it is sent — the one unit-of-work code path.

The actor is asynchronous: many units are in flight in one worker process, as on the driver's
event loop locally; its call layer shares the cluster's one call state (`shared_state`). It
runs in its copy of the project (Ray's `working_dir`), and reads secrets from its own
environment only.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import ray

from agentopt import __version__
from agentopt.agents.base import AgentTarget, make_target
from agentopt.contracts.task import Task
from agentopt.contracts.transcript import Transcript
from agentopt.core.errors import AgentoptError
from agentopt.evaluators.base import BuildContext
from agentopt.evaluators.build import EvaluatorCache
from agentopt.models.call import CallLayer
from agentopt.models.settings import CallSettings
from agentopt.workflows.cluster.shared_state import RemoteCallState, holding
from agentopt.workflows.cluster.wire import RaisedError, UnitReply, UnitSpec
from agentopt.workflows.events import NullSink
from agentopt.workflows.run.engine import RunEngine


def _project_copy() -> Path | None:
    """This worker's copy of the project (the job's `working_dir`, its current folder), or
    None when the job has none (a caller's own `ray.init`: the driver's paths are used)."""
    runtime_env = ray.get_runtime_context().runtime_env
    return Path.cwd() if runtime_env.get("working_dir") else None


class _Engine:
    """One candidate's engine on this worker, and the target it opened."""

    def __init__(self, engine: RunEngine, target: AgentTarget) -> None:
        self.engine = engine
        self.target = target


@ray.remote(num_cpus=1, max_restarts=0, max_concurrency=1000)  # type: ignore[call-overload]
class UnitWorker:
    """Plays units for the driver (see the module docstring)."""

    def __init__(self, worker_id: str, coordinator: Any, settings_json: str) -> None:
        self.worker_id = worker_id
        self.root = _project_copy()
        settings = CallSettings.model_validate_json(settings_json)
        self.state = RemoteCallState(coordinator, settings, worker_id)
        self.notices: list[str] = []
        # The project folder only locates a cache file, and the cache here is the coordinator's.
        self.layer = CallLayer(self.root, settings, state=self.state, on_notice=self.notices.append)
        self.engines: dict[str, asyncio.Future[_Engine]] = {}

    async def info(self, env_names: list[str]) -> dict[str, Any]:
        """Who this worker is, and which of the driver's environment names it lacks."""
        return {
            "worker": self.worker_id,
            "pid": os.getpid(),
            "node": ray.get_runtime_context().get_node_id(),
            "version": __version__,
            "ray": ray.__version__,
            "missing_env": [name for name in env_names if name not in os.environ],
        }

    async def run_unit(
        self,
        key: str,
        spec: list[Any],
        task_json: str,
        repeat: int,
        held: list[str],
        answered_json: str | None,
    ) -> str:
        """One (task, repeat) of the candidate `key`; `spec` holds the UnitSpec's object ref
        (inside a list, so Ray fetches it only the first time this worker meets `key`); `held`
        are the pools whose slot the driver holds for this unit; `answered_json` the journaled
        answers of a resumed unit whose evaluators only must run again."""
        try:
            entry = await self._engine(key, spec[0])
            task = Task.model_validate_json(task_json)
            answered = (
                Transcript.model_validate_json(answered_json) if answered_json is not None else None
            )
            with holding(held):
                unit = await entry.engine.run_unit(task, repeat, answered)
        except AgentoptError as err:
            return UnitReply(raised=RaisedError.of(err)).model_dump_json()
        return UnitReply(result=unit).model_dump_json()

    async def close_engine(self, key: str) -> None:
        """Release what the candidate `key` opened here (its hosted agent, MCP servers), and
        send its pending call records, so the driver's totals are exact afterwards."""
        future = self.engines.pop(key, None)
        if future is not None and future.done() and future.exception() is None:
            await future.result().target.aclose()
        await self.state.sync()

    async def aclose(self) -> None:
        """Close every engine's target and send every pending call record."""
        for key in list(self.engines):
            await self.close_engine(key)
        await self.layer.aclose()

    async def _engine(self, key: str, spec_ref: Any) -> _Engine:
        future = self.engines.get(key)
        if future is None:
            future = self.engines[key] = asyncio.get_running_loop().create_future()
            try:
                future.set_result(await self._build(await spec_ref))
            except BaseException as exc:
                self.engines.pop(key, None)
                future.set_exception(exc)
                future.exception()  # retrieved: the waiters raise it themselves
                raise
        return await asyncio.shield(future)

    async def _build(self, spec_json: str) -> _Engine:
        unit_spec = UnitSpec.model_validate_json(spec_json)
        root = self.root or Path(unit_spec.project_dir)
        spec = unit_spec.engine_spec(root)
        target = make_target(spec.agent.target, spec.agent)
        cache = EvaluatorCache(
            BuildContext(judge_model=spec.judge_model, layer=self.layer, project_dir=root)
        )
        engine = RunEngine(spec, target, self.layer, None, NullSink(), cache)
        return _Engine(engine, target)
