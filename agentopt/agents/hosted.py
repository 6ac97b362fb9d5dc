"""`hosted` — the user's own agent process, run the way Foundry runs a hosted agent
(agents.md §2).

agentopt starts `startupCommand` in the agent folder with the candidate configuration in the
environment (`OPTIMIZATION_CONFIG`, `OPTIMIZATION_LOCAL_DIR`, `OPTIMIZATION_CANDIDATE_ID`,
`PORT`), waits for the port, and talks the protocol it declares (`hosted_protocol`): Responses
(`previous_response_id` carries a conversation) or invocations (one agent session per
conversation, `invocations_wire`). One process per candidate, reused across tasks, and
always stopped: on `aclose`, on cancellation (Ctrl-C), when it fails to start, and — through a
finalizer — even when the target is dropped without being closed.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import tempfile
import weakref
from typing import IO, Any

from agentopt.agents import process_guard, processes
from agentopt.agents.base import RunConfig, definition_transcript, register_target
from agentopt.agents.conversation import run_turns
from agentopt.agents.hosted_protocol import hosted_protocol
from agentopt.agents.invocations_wire import invocations_sender
from agentopt.agents.openai_wire import responses_sender
from agentopt.agents.retrying import DEFAULT_ATTEMPTS
from agentopt.agents.start_command import require_start_command
from agentopt.contracts.task import Task
from agentopt.contracts.transcript import Transcript
from agentopt.core.errors import AgentError
from agentopt.core.files.agent_definition import AgentDefinition
from agentopt.core.paths import AGENT_CONFIGS_DIR
from agentopt.core.redaction import redact
from agentopt.models.http_client import LeanClient

STARTUP_TIMEOUT_S = 60.0


def candidate_config(definition: AgentDefinition) -> dict[str, Any]:
    """The candidate JSON a hosted agent reads from `OPTIMIZATION_CONFIG`."""
    return {
        "name": definition.name,
        "instructions": definition.instructions or "",
        "model": definition.model,
        "temperature": definition.temperature,
        "skills": [
            {"name": s.name, "description": s.description, "body": s.body}
            for s in definition.skills
        ],
        "tools": definition.tools,
    }


@register_target("hosted")
class HostedTarget:
    """Starts the agent's own server and talks Responses or invocations to it."""

    name = "hosted"

    def __init__(
        self,
        definition: AgentDefinition,
        *,
        port: int | None = None,
        startup_timeout_s: float = STARTUP_TIMEOUT_S,
        stop_grace_s: float = processes.STOP_GRACE_S,
        retry_attempts: int = DEFAULT_ATTEMPTS,
    ) -> None:
        self.wire = hosted_protocol(definition)
        """`responses` or `invocations`; refused before anything starts otherwise."""
        command = (
            definition.startup_command or definition.command or require_start_command(definition)
        )
        self.definition = definition
        self.argv = processes.split_command(command)
        self.port = definition.port if port is None else port
        """0 = pick a free port at each start."""
        self.startup_timeout_s = startup_timeout_s
        self.stop_grace_s = stop_grace_s
        self.retry_attempts = retry_attempts
        self._lock = asyncio.Lock()
        self._process: asyncio.subprocess.Process | None = None
        self._client: Any = None
        self._candidate: str | None = None
        self._log: IO[bytes] | None = None
        self._finalizer: weakref.finalize[Any, Any] | None = None

    @property
    def pid(self) -> int | None:
        """The agent process's id while it runs."""
        return self._process.pid if self._process is not None else None

    async def run(self, task: Task, config: RunConfig) -> Transcript:
        try:
            client = await self._ensure_started(config.candidate_id)
            # No restore: the agent's conversations live in its process, which a resumed run
            # starts afresh, so a resumed simulated conversation is played from its start.
            send, _restore = self._sender(client)
            turns = await run_turns(task, config, send)
        except asyncio.CancelledError:
            await self._stop()  # Ctrl-C: never leave the agent running
            raise
        return definition_transcript(turns, self.name, self.definition)

    def _sender(self, client: Any) -> Any:
        if self.wire == "invocations":
            io = self.definition.invocations_io
            return invocations_sender(client, io=io, source=self.name), None
        fixed = {"model": self.definition.model} if self.definition.model else {}
        return responses_sender(client, source=self.name, attempts=self.retry_attempts, **fixed)

    async def _ensure_started(self, candidate_id: str) -> Any:
        async with self._lock:
            process = self._process
            alive = process is not None and process.returncode is None
            if alive and candidate_id == self._candidate:
                return self._client
            await self._stop()  # crashed, or another candidate: one process per candidate
            await self._start(candidate_id)
            return self._client

    async def _start(self, candidate_id: str) -> None:
        from openai import AsyncOpenAI

        port = self.port or processes.free_port()
        if await processes.port_open(port):
            owner = process_guard.port_owner(port)
            raise AgentError(
                f"port {port} is already in use"
                + (f" by {owner.description}" if owner else "")
                + ", so the hosted agent cannot be started there",
                hint=(f"stop it (`kill {owner.pid}`)" if owner else "stop what listens on it")
                + ", or set agent.port to a free port",
            )
        env = {
            **os.environ,
            "OPTIMIZATION_CONFIG": json.dumps(candidate_config(self.definition)),
            "OPTIMIZATION_LOCAL_DIR": AGENT_CONFIGS_DIR,
            "OPTIMIZATION_CANDIDATE_ID": candidate_id,
            "PORT": str(port),
        }
        self._log = tempfile.TemporaryFile()  # noqa: SIM115 - lives as long as the process
        try:
            process = await processes.spawn(
                self.argv, cwd=self.definition.folder, env=env, stdout=self._log, stderr=self._log
            )
        except OSError as exc:
            self._close_log()
            raise AgentError(
                f"cannot start the hosted agent `{' '.join(self.argv)}`: {exc}",
                hint="check startupCommand and that its program is installed",
            ) from None
        self._process, self._candidate = process, candidate_id
        self._finalizer = weakref.finalize(self, processes.kill_group_now, process.pid)
        try:
            problem = await processes.wait_for_port(process, port, self.startup_timeout_s)
        except BaseException:
            await self._stop()
            raise
        if problem is not None:
            output = processes.tail(self._log)
            await self._stop()
            message = f"the hosted agent `{' '.join(self.argv)}` did not start: {problem}"
            if output:
                message += f"\nlast lines of its output:\n{output}"
            raise AgentError(redact(message))
        base_url = f"http://127.0.0.1:{port}"
        if self.wire == "invocations":
            self._client = LeanClient(base_url)
        else:
            self._client = AsyncOpenAI(base_url=base_url, api_key="unused", max_retries=0)

    async def _stop(self) -> None:
        process, self._process = self._process, None
        client, self._client = self._client, None
        finalizer, self._finalizer = self._finalizer, None
        if process is not None:
            await processes.stop(process, self.stop_grace_s)
        if finalizer is not None:
            finalizer.detach()
        if client is not None:
            with contextlib.suppress(Exception):
                await (client.aclose() if isinstance(client, LeanClient) else client.close())
        self._close_log()

    def _close_log(self) -> None:
        log, self._log = self._log, None
        if log is not None:
            log.close()

    async def aclose(self) -> None:
        """Stop the agent process (idempotent)."""
        await self._stop()
