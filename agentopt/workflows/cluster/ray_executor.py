"""`--executor ray`: the driver's side of a run on a Ray cluster.

Connects to the cluster (`--ray-address`, else `RAY_ADDRESS`, else a local instance started by
`ray_host`), places the call coordinator on the driver's own node (it opens the project's cache
file), starts the worker pool with the project folder as Ray's `working_dir`, and hands the
engine a `ClusterRunner` per candidate. The driver keeps the journal and results.json: workers
only return records.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import ray
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from agentopt.contracts.task import Task
from agentopt.contracts.task_record import UnitResult
from agentopt.contracts.transcript import Transcript
from agentopt.core.errors import ConfigError
from agentopt.core.files.agent_definition import AgentDefinition
from agentopt.models.call_state import CallState
from agentopt.models.settings import CallSettings
from agentopt.workflows.cluster.pool import UnitLost, WorkerPool
from agentopt.workflows.cluster.ray_host import LocalRayHost
from agentopt.workflows.cluster.shared_state import CallCoordinator, RemoteCallState
from agentopt.workflows.cluster.wire import UnitReply, UnitSpec, env_names
from agentopt.workflows.run.engine import RunEngine, UnitRunner

EXCLUDES = [
    ".agentopt/",
    ".git/",
    ".venv/",
    "venv/",
    "node_modules/",
    "__pycache__/",
    ".mypy_cache/",
    ".pytest_cache/",
    ".ruff_cache/",
]
"""Never sent to workers: run state and caches stay with the driver; environments are big."""
REFRESH_EVERY_S = 0.25
"""How often finished units refresh the driver's view of the cluster's totals (progress);
budget checks refresh it every time (`sync`)."""


class RaySession:
    """This process's connection to a cluster, and the local instance it started, if any."""

    def __init__(
        self, connected_here: bool, host: LocalRayHost | None, env: dict[str, str | None]
    ) -> None:
        self.connected_here = connected_here
        self.host = host
        self._saved_env = env

    @classmethod
    def connect(
        cls,
        address: str | None,
        host: LocalRayHost | None,
        saved_env: dict[str, str | None],
        project_dir: Path,
    ) -> RaySession:
        """Connect to `address`, or to `host` (started before ray was imported, its
        environment applied; `saved_env` is what to restore at close), with the project
        folder as the job's `working_dir` (Ray uploads local folders for whole jobs only)."""
        if ray.is_initialized():  # a library caller (a notebook) connected with its own job
            return cls(False, None, {})
        if host is not None:
            address = host.address
        if not address:
            raise ConfigError(
                "no Ray cluster to connect to: ray was imported before agentopt could start "
                "a local instance",
                hint="pass --ray-address (or RAY_ADDRESS), or call ray.init() first",
            )
        if address.startswith("ray://"):
            raise ConfigError(
                f"Ray Client addresses ({address}) are not supported: the driver writes the "
                "journal and cache in the project folder, so it runs on a node of the cluster",
                hint="run agentopt on the head node (or `ray job submit`) with --ray-address auto",
            )
        session = cls(False, host, saved_env)
        try:
            ray.init(
                address=address,
                runtime_env={"working_dir": str(project_dir), "excludes": EXCLUDES},
                logging_level=logging.WARNING,
                log_to_driver=False,
            )
        except (ConnectionError, RuntimeError, ValueError) as exc:
            session.close()
            raise ConfigError(
                f"cannot connect to the Ray cluster at {address}: {exc}",
                hint="start one with `ray start --head`, check --ray-address / RAY_ADDRESS, "
                "or use --executor local",
            ) from None
        session.connected_here = True
        return session

    def close(self) -> None:
        if self.connected_here:
            ray.shutdown()
        if self.host is not None:
            self.host.stop()
        for name, value in self._saved_env.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


class RayExecutor:
    """Units on Ray workers; journal, results and the call state's owner stay here."""

    def __init__(
        self,
        session: RaySession,
        coordinator: Any,
        state: RemoteCallState,
        pool: WorkerPool,
    ) -> None:
        self.session = session
        self.coordinator = coordinator
        self.state = state
        self.call_state: CallState | None = state
        self.pool = pool
        self._refreshed = 0.0

    @classmethod
    async def open(
        cls,
        project_dir: Path,
        settings: CallSettings,
        *,
        address: str | None,
        host: LocalRayHost | None,
        saved_env: dict[str, str | None],
        agent: AgentDefinition | None,
        on_notice: Callable[[str], None],
    ) -> RayExecutor:
        project = Path(project_dir).resolve()
        session = RaySession.connect(address, host, saved_env, project)
        coordinator: Any = None
        pool: WorkerPool | None = None
        try:
            settings_json = settings.model_dump_json()
            here = NodeAffinitySchedulingStrategy(
                ray.get_runtime_context().get_node_id(), soft=False
            )
            coordinator = CallCoordinator.options(  # type: ignore[attr-defined]
                scheduling_strategy=here
            ).remote(str(project), settings_json)
            state = RemoteCallState(coordinator, settings, "driver")
            size = max(1, int(ray.cluster_resources().get("CPU", 1)))  # one worker per CPU
            pool = WorkerPool(
                coordinator, settings_json, size, env_names(settings, agent), on_notice
            )
            executor = cls(session, coordinator, state, pool)
            await pool.start()
        except BaseException:
            await _abandon(session, coordinator, pool)
            raise
        return executor

    def runner(self, engine: RunEngine) -> UnitRunner:
        return ClusterRunner(self, engine)

    async def refresh(self, *, force: bool = False) -> None:
        """Take the cluster's totals into the driver's call layer (progress, budgets)."""
        now = time.monotonic()
        if force or now - self._refreshed >= REFRESH_EVERY_S:
            self._refreshed = now
            await self.state.refresh()

    async def sync(self) -> None:
        await self.refresh(force=True)

    async def aclose(self) -> None:
        """Close the workers, then the coordinator (it flushes the cache), then the session."""
        try:
            await self.pool.aclose()
            await self.state.refresh()
            await self.coordinator.aclose.remote()
        finally:
            await _abandon(self.session, self.coordinator, None)


async def _abandon(session: RaySession, coordinator: Any, pool: WorkerPool | None) -> None:
    try:
        if pool is not None:
            for worker in pool.workers:
                ray.kill(worker.handle, no_restart=True)
        if coordinator is not None:
            ray.kill(coordinator, no_restart=True)
    finally:
        await asyncio.to_thread(session.close)


class ClusterRunner:
    """Plays one engine's units on the cluster (the engine's `UnitRunner`)."""

    def __init__(self, executor: RayExecutor, engine: RunEngine) -> None:
        self.executor = executor
        self.engine = engine
        self.key = uuid.uuid4().hex
        self.spec = ray.put(UnitSpec.of(engine.spec).model_dump_json())

    async def run_unit(
        self, task: Task, repeat: int, answered: Transcript | None = None
    ) -> UnitResult:
        answers = answered.model_dump_json() if answered is not None else None
        try:
            pool = self.executor.pool
            reply = await pool.run(self.key, self.spec, task.model_dump_json(), repeat, answers)
        except UnitLost as lost:
            return self.engine.failed_unit(task, repeat, "workerLost", f"task {task.name}: {lost}")
        unit = UnitReply.model_validate_json(reply).unit()
        await self.executor.refresh()
        return unit

    async def aclose(self) -> None:
        """Release what this engine opened on the workers, and settle the totals."""
        await self.executor.pool.close_key(self.key)
        await self.executor.refresh(force=True)
