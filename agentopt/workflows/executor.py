"""Where the units of `eval run` and `optimize` are played: `--executor local` (this process,
the default) or `ray` (Ray workers, `workflows/cluster`). Either way the engine on the driver
schedules, journals and counts; an executor only says who runs `RunEngine.run_unit` and which
call state the command's call layer shares."""

from __future__ import annotations

import asyncio
import importlib.util
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol

from agentopt.core.errors import ConfigError
from agentopt.core.files.agent_definition import AgentDefinition
from agentopt.models.call_state import CallState
from agentopt.models.settings import CallSettings
from agentopt.workflows.cluster.ray_host import LocalRayHost

if TYPE_CHECKING:  # the engine imports this module's users; only its types are needed here
    from agentopt.workflows.run.engine import RunEngine, UnitRunner

ExecutorKind = Literal["local", "ray"]
EXECUTORS: tuple[str, ...] = ("local", "ray")


@dataclass(frozen=True)
class ExecutorSettings:
    """`--executor` / eval.yaml `options.executor`, `--ray-address` / `RAY_ADDRESS`."""

    kind: ExecutorKind = "local"
    address: str | None = None
    """A running cluster (`host:port`, `auto`); None: `RAY_ADDRESS`, else a local instance."""

    @classmethod
    def of(cls, flag: str | None, configured: str | None, address: str | None) -> ExecutorSettings:
        """Flag over eval.yaml over the default; an unknown name is a ConfigError."""
        kind = flag or configured or "local"
        if kind not in EXECUTORS:
            raise ConfigError(
                f"unknown executor '{kind}'", hint=f"use one of: {', '.join(EXECUTORS)}"
            )
        if address and kind != "ray":
            raise ConfigError("--ray-address needs --executor ray")
        if kind == "ray" and importlib.util.find_spec("ray") is None:
            raise ConfigError(
                "--executor ray needs Ray, which is not installed",
                hint="pip install 'agentopt[ray]'",
            )
        return cls(kind=kind, address=address)  # type: ignore[arg-type]


class Executor(Protocol):
    """Who plays units, and the call state every call layer of the command shares."""

    call_state: CallState | None

    def runner(self, engine: RunEngine) -> UnitRunner: ...

    async def sync(self) -> None:
        """Bring this process's view of the call totals up to date (before a budget check)."""

    async def aclose(self) -> None: ...


class LocalExecutor:
    """Units on this process's event loop: the engine is its own runner."""

    call_state: CallState | None = None

    def runner(self, engine: RunEngine) -> UnitRunner:
        return engine

    async def sync(self) -> None:
        return None

    async def aclose(self) -> None:
        return None


async def open_executor(
    settings: ExecutorSettings,
    project_dir: Path,
    call_settings: CallSettings,
    *,
    agent: AgentDefinition | None = None,
    on_notice: Callable[[str], None] = lambda _: None,
) -> Executor:
    """The executor `settings` names, connected and ready (Ray: workers started)."""
    if settings.kind == "local":
        return LocalExecutor()
    address = settings.address or os.environ.get("RAY_ADDRESS") or None
    host: LocalRayHost | None = None
    saved: dict[str, str | None] = {}
    if address is None and "ray" not in sys.modules:
        # Ray reads its network and auth settings when imported: start the host first.
        log = project_dir / ".agentopt" / "ray-host.log"
        host = await asyncio.to_thread(LocalRayHost.start, num_cpus=os.cpu_count(), log=log)
        saved = {name: os.environ.get(name) for name in host.driver_env}
        os.environ.update(host.driver_env)
    try:
        from agentopt.workflows.cluster.ray_executor import RayExecutor
    except ImportError as exc:
        if host is not None:
            host.stop()
        raise ConfigError(
            f"--executor ray needs Ray, which is not installed ({exc})",
            hint="pip install 'agentopt[ray]'",
        ) from None
    return await RayExecutor.open(
        project_dir,
        call_settings,
        address=address,
        host=host,
        saved_env=saved,
        agent=agent,
        on_notice=on_notice,
    )
