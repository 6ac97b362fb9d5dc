"""The driver's pool of `UnitWorker` actors: sends each unit to the least busy live worker, and
when a worker dies mid-unit, sends the unit again to another one and starts a replacement.

A unit whose worker died is played again from its start; the calls it had answered are served
by the cluster's cache, so no answered call is repeated, and the driver journals a unit only
when a worker returned it, so none is lost or written twice. A unit that kills
`MAX_UNIT_ATTEMPTS` workers in a row is recorded as an agent error (`workerLost`) — an error,
never a score — and the run goes on.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import ray
from ray.exceptions import ActorUnavailableError, RayActorError, WorkerCrashedError

from agentopt import __version__
from agentopt.core.errors import AgentError, ConfigError, Interrupted
from agentopt.workflows.cluster.shared_state import held_pools
from agentopt.workflows.cluster.unit_worker import UnitWorker

MAX_UNIT_ATTEMPTS = 3
START_TIMEOUT_S = 300.0
CLOSE_TIMEOUT_S = 60.0
LOST = (RayActorError, ActorUnavailableError, WorkerCrashedError)


class UnitLost(Exception):
    """The unit's worker died `MAX_UNIT_ATTEMPTS` times: the caller records an error."""


@dataclass
class _Worker:
    id: str
    handle: Any
    in_flight: int = 0
    alive: bool = True
    pid: int | None = None


class WorkerPool:
    """Ray worker actors of one command.

    Args:
        coordinator: the cluster's `CallCoordinator` (each worker's call layer reaches it).
        settings_json: the command's call settings.
        size: how many workers (the executor starts one per CPU of the cluster).
        env_names: environment names set on the driver that workers must also have.
        on_notice: receives one line per lost worker.
    """

    def __init__(
        self,
        coordinator: Any,
        settings_json: str,
        size: int,
        env_names: list[str],
        on_notice: Callable[[str], None],
    ) -> None:
        self.coordinator = coordinator
        self.settings_json = settings_json
        self.size = max(1, size)
        self.env_names = env_names
        self.on_notice = on_notice
        self.workers: list[_Worker] = []
        self.replacements_left = 2 * self.size
        self.lost_workers = 0
        self._ids = itertools.count()
        self._starting: set[asyncio.Future[None]] = set()

    async def start(self) -> None:
        """Start every worker and check it: same agentopt version, the driver's env names."""
        started = [self._spawn() for _ in range(self.size)]
        await asyncio.gather(*(self._check(w) for w in started))

    def _spawn(self) -> _Worker:
        worker_id = f"worker-{next(self._ids)}"
        handle = UnitWorker.options(  # type: ignore[attr-defined]
            scheduling_strategy="SPREAD"
        ).remote(worker_id, self.coordinator, self.settings_json)
        worker = _Worker(worker_id, handle)
        self.workers.append(worker)
        return worker

    async def _check(self, worker: _Worker) -> None:
        try:
            info = await asyncio.wait_for(
                worker.handle.info.remote(self.env_names), timeout=START_TIMEOUT_S
            )
        except TimeoutError:
            raise AgentError(
                f"a Ray worker did not start within {START_TIMEOUT_S:g} s",
                hint="check the cluster's free CPUs (`ray status`) and the workers' logs",
            ) from None
        except ray.exceptions.RuntimeEnvSetupError as exc:
            raise ConfigError(
                f"the project folder could not be sent to the Ray workers: {_first_line(exc)}",
                hint="keep large files out of the project or list them in .gitignore "
                "(Ray's working_dir limit applies)",
            ) from None
        worker.pid = int(info["pid"])
        if info["version"] != __version__:
            raise ConfigError(
                f"Ray worker on node {info['node'][:12]} runs agentopt {info['version']}, "
                f"the driver {__version__}",
                hint="install the same agentopt version on every node of the cluster",
            )
        if info["missing_env"]:
            raise ConfigError(
                f"Ray worker on node {info['node'][:12]} lacks environment variables set here: "
                + ", ".join(info["missing_env"]),
                hint="secrets never travel through Ray: set them in the environment the "
                "cluster's nodes run in (before `ray start`, or a Kubernetes secret with KubeRay)",
            )

    async def run(
        self, key: str, spec: Any, task_json: str, repeat: int, answered: str | None
    ) -> str:
        """One unit on a live worker, again on another one if the worker dies."""
        held = held_pools()
        for _ in range(MAX_UNIT_ATTEMPTS):
            worker = self._pick()
            worker.in_flight += 1
            ref = worker.handle.run_unit.remote(key, [spec], task_json, repeat, held, answered)
            try:
                reply: str = await ref
                return reply
            except asyncio.CancelledError:
                ray.cancel(ref)  # Ctrl-C / stop: the unit stops on the worker too
                raise
            except ray.exceptions.TaskCancelledError:
                raise Interrupted("interrupted: the unit was cancelled") from None
            except LOST as exc:
                await self._lost(worker, exc)
            finally:
                worker.in_flight -= 1
        raise UnitLost(f"its Ray worker died {MAX_UNIT_ATTEMPTS} times while running it")

    def _pick(self) -> _Worker:
        """The least busy live worker (a dead one's replacement is live from its start: its
        units wait in Ray's queue until it is up)."""
        live = [w for w in self.workers if w.alive]
        if not live:
            raise AgentError(
                f"every Ray worker died ({self.lost_workers} lost, no replacement left)",
                hint="see the workers' logs (`ray logs`); finished units are saved: resume the run",
            )
        return min(live, key=lambda w: w.in_flight)

    async def _lost(self, worker: _Worker, exc: BaseException) -> None:
        if not worker.alive:
            return
        worker.alive = False
        self.lost_workers += 1
        await self.coordinator.worker_lost.remote(worker.id)
        replace = self.replacements_left > 0
        self.on_notice(
            f"Ray {worker.id} (pid {worker.pid}) died: {_first_line(exc)}; its units run again "
            + ("on the other workers and a replacement" if replace else "on the other workers")
        )
        if replace:
            self.replacements_left -= 1
            fresh = self._spawn()
            task = asyncio.ensure_future(self._ready(fresh))
            self._starting.add(task)
            task.add_done_callback(self._starting.discard)

    async def _ready(self, worker: _Worker) -> None:
        try:
            await self._check(worker)
        except Exception as exc:  # a replacement that cannot start is one more lost worker
            await self._lost(worker, exc)

    async def close_key(self, key: str) -> None:
        """Tell every live worker to release what candidate `key` opened."""
        await self._each(lambda w: w.handle.close_engine.remote(key))

    async def aclose(self) -> None:
        """Close every worker (targets, pending call records), then end the actors."""
        await self._each(lambda w: w.handle.aclose.remote())
        for worker in self.workers:
            ray.kill(worker.handle, no_restart=True)
        self.workers = []

    async def _each(self, call: Callable[[_Worker], Any]) -> None:
        live = [w for w in self.workers if w.alive]
        refs = [call(w) for w in live]
        results = await asyncio.wait_for(
            asyncio.gather(*refs, return_exceptions=True), timeout=CLOSE_TIMEOUT_S
        )
        for worker, result in zip(live, results, strict=True):
            if isinstance(result, LOST):
                worker.alive = False


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:200] if text else type(exc).__name__
