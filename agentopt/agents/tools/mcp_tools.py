"""MCP tools: stdio servers from `metadata.yaml` `mcp_servers`, through the official `mcp` SDK.

Each server is started once per target and kept until the target is closed. The SDK's
transport and session are anyio context managers that must be entered and left by the same
task, so each server lives in one background task that owns them; tool calls from any task go
through the session, and closing the target tells that task to leave its contexts (which
stops the server process).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import tempfile
from pathlib import Path
from typing import Any, TextIO, cast

from agentopt.agents import process_guard
from agentopt.core import trust
from agentopt.core.errors import AgentError
from agentopt.core.files.agent_definition import McpServer
from agentopt.core.redaction import redact

START_TIMEOUT_S = 30.0
STOP_TIMEOUT_S = 15.0
_STDERR_TAIL_LINES = 15


class _ServerConnection:
    """One running MCP server and its client session."""

    def __init__(self, server: McpServer, folder: Path) -> None:
        self.server = server
        self.folder = folder
        self.tools: list[Any] = []
        self._session: Any = None
        self._stop = asyncio.Event()
        self._ready: asyncio.Future[None] | None = None
        self._task: asyncio.Task[None] | None = None
        self._pids: list[int] = []
        # Lives as long as the server; its tail explains a failed start.
        self._stderr = cast(TextIO, tempfile.TemporaryFile(mode="w+", encoding="utf-8"))  # noqa: SIM115

    async def start(self, timeout_s: float) -> None:
        trust.about_to_run(
            f"MCP server '{self.server.name}'", command=[self.server.command, *self.server.args]
        )
        self._ready = asyncio.get_running_loop().create_future()
        self._task = asyncio.create_task(self._serve(), name=f"mcp:{self.server.name}")
        try:
            await asyncio.wait_for(asyncio.shield(self._ready), timeout_s)
        except TimeoutError:
            cause = f"no answer within {timeout_s:g} s"
        except Exception as exc:
            cause = f"{type(exc).__name__}: {exc}"
        else:
            return
        await self._stop_task()
        message = self._start_failure(cause)
        self._stderr.close()
        raise AgentError(message)

    async def _serve(self) -> None:
        from mcp import ClientSession, StdioServerParameters
        from mcp.client.stdio import stdio_client

        assert self._ready is not None
        params = StdioServerParameters(
            command=self.server.command,
            args=list(self.server.args),
            # merged over the SDK's default environment; the marker names this agentopt
            env=process_guard.child_env(dict(self.server.env)),
            cwd=str(self.folder),
        )
        try:
            async with (
                stdio_client(params, errlog=self._stderr) as (read, write),
                ClientSession(read, write) as session,
            ):
                # The SDK starts the server in its own session; guard it like our own children.
                self._pids = process_guard.register_new_children()
                await session.initialize()
                listed = await session.list_tools()
                self.tools = list(listed.tools)
                self._session = session
                self._ready.set_result(None)
                await self._stop.wait()
        except BaseException as exc:
            if not self._ready.done():
                self._ready.set_exception(exc if isinstance(exc, Exception) else RuntimeError(exc))
            if not isinstance(exc, Exception):
                raise
        finally:
            self._session = None

    async def call(self, name: str, arguments: dict[str, Any]) -> tuple[Any, str | None]:
        """(result, error) of one tool call; the error is the tool's own error text."""
        if self._session is None:
            return None, f"MCP server '{self.server.name}' is not running"
        result = await self._session.call_tool(name, arguments)
        return _result_value(result)

    async def aclose(self) -> None:
        await self._stop_task()
        for pid in self._pids:  # the SDK stopped its process tree when its context closed
            process_guard.unregister(pid)
        self._stderr.close()

    async def _stop_task(self) -> None:
        self._stop.set()
        if self._task is not None and not self._task.done():
            try:
                await asyncio.wait_for(self._task, STOP_TIMEOUT_S)
            except (TimeoutError, Exception):
                self._task.cancel()
                with contextlib.suppress(BaseException):
                    await self._task

    def _start_failure(self, cause: str) -> str:
        tail = ""
        with contextlib.suppress(ValueError, OSError):
            self._stderr.seek(0)
            lines = self._stderr.read().splitlines()[-_STDERR_TAIL_LINES:]
            tail = "\n".join(lines)
        command = " ".join([self.server.command, *self.server.args])
        message = f"MCP server '{self.server.name}' ({command}) could not start: {cause}"
        return redact(f"{message}\nlast lines of its stderr:\n{tail}" if tail else message)


class McpTools:
    """All MCP servers of an agent: started together, tools looked up by name."""

    def __init__(self, servers: list[McpServer], folder: Path) -> None:
        self._servers = servers
        self._folder = folder
        self._connections: list[_ServerConnection] = []
        self._by_tool: dict[str, _ServerConnection] = {}
        self._lock = asyncio.Lock()
        self._started = False

    async def start(self, timeout_s: float = START_TIMEOUT_S) -> None:
        """Start every server and list its tools (idempotent). Raises `AgentError` on failure."""
        async with self._lock:
            if self._started:
                return
            for server in self._servers:
                connection = _ServerConnection(server, self._folder)
                try:
                    await connection.start(timeout_s)
                except BaseException:
                    await self._close_all()
                    raise
                self._connections.append(connection)
                for tool in connection.tools:
                    self._by_tool.setdefault(tool.name, connection)  # first server wins
            self._started = True

    def tool_defs(self) -> list[dict[str, Any]]:
        """The servers' tools as chat-completions function tools."""
        out = []
        for name, connection in self._by_tool.items():
            tool = next(t for t in connection.tools if t.name == name)
            schema = getattr(tool, "input_schema", None) or getattr(tool, "inputSchema", None)
            function: dict[str, Any] = {
                "name": name,
                "parameters": schema or {"type": "object", "properties": {}},
            }
            if tool.description:
                function["description"] = tool.description
            out.append({"type": "function", "function": function})
        return out

    def has(self, name: str) -> bool:
        return name in self._by_tool

    def server_of(self, name: str) -> str:
        """The name of the server that serves tool `name` (its M365 `plugin_name`)."""
        return self._by_tool[name].server.name

    async def call(self, name: str, arguments: dict[str, Any]) -> tuple[Any, str | None]:
        return await self._by_tool[name].call(name, arguments)

    async def aclose(self) -> None:
        async with self._lock:
            await self._close_all()
            self._started = False

    async def _close_all(self) -> None:
        connections, self._connections = self._connections, []
        self._by_tool = {}
        for connection in reversed(connections):
            await connection.aclose()


def _result_value(result: Any) -> tuple[Any, str | None]:
    texts = [getattr(c, "text", "") for c in result.content if getattr(c, "type", "") == "text"]
    text = "\n".join(texts)
    is_error = getattr(result, "is_error", None) or getattr(result, "isError", False)
    if is_error:
        return None, text or "the MCP tool reported an error"
    structured = getattr(result, "structured_content", None)
    if structured is None:
        structured = getattr(result, "structuredContent", None)
    if isinstance(structured, dict) and set(structured) == {"result"}:
        return structured["result"], None  # the SDK's wrapper for non-object return values
    if structured is not None:
        return structured, None
    if len(texts) == 1 and text.lstrip().startswith(("{", "[")):
        with contextlib.suppress(ValueError):
            return json.loads(text), None  # an object serialised as text: keep its structure
    return text, None
