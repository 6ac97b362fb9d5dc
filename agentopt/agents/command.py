"""`command` — any program as the agent: one process per turn, the conversation as JSON on
standard input, the answer on standard output (agents.md §4).

Input: `{"messages": [{"role": "user"|"assistant", "content": ...}, ...]}`.
Output: plain text, or JSON `{"output": ..., "tool_calls"?: [...], "citations"?: [...],
"usage"?: {...}, "diagnostics"?: {...}}` (`diagnostics` in the M365 output schema's shape:
`retrieval_executions`, `tool_calls`; a tool call may name its `plugin_name`). A non-zero
exit fails the turn with the last lines of standard error; a turn that runs out of time has
its process group killed.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from typing import Any

from agentopt.agents import processes
from agentopt.agents.base import RunConfig, definition_transcript, register_target
from agentopt.agents.citations import citations_from_items
from agentopt.agents.conversation import (
    AGENT_REQUEST_FAILED,
    ChatHistory,
    TurnFailed,
    run_turns,
)
from agentopt.agents.openai_wire import parse_arguments
from agentopt.contracts.diagnostics import read_diagnostics
from agentopt.contracts.task import Task
from agentopt.contracts.transcript import ToolCallRecord, Transcript, TurnResult
from agentopt.contracts.usage import Usage
from agentopt.core import limits
from agentopt.core.errors import AgentError, ConfigError
from agentopt.core.files.agent_definition import AgentDefinition

_STDERR_TAIL_LINES = 20


@register_target("command")
class CommandTarget:
    """Runs `agent.command` once per turn."""

    name = "command"

    def __init__(self, definition: AgentDefinition) -> None:
        if not definition.command:
            raise ConfigError.at(
                "eval.yaml",
                "agent.command",
                'the command target needs agent.command, e.g. ["python", "my_agent.py"]',
            )
        self.definition = definition
        self.argv = processes.split_command(definition.command)

    async def run(self, task: Task, config: RunConfig) -> Transcript:
        history = ChatHistory()

        async def send(query: str) -> TurnResult:
            result = await self._invoke(history.with_query(query), query)
            history.answered(query, result.response)
            return result

        turns = await run_turns(task, config, send, restore=history.restore)
        return definition_transcript(turns, self.name, self.definition)

    async def _invoke(self, messages: list[dict[str, Any]], query: str) -> TurnResult:
        try:
            process = await processes.spawn(
                self.argv,
                cwd=self.definition.folder,
                env=os.environ,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
            )
        except OSError as exc:
            raise AgentError(
                f"cannot start the agent command `{' '.join(self.argv)}`: {exc}",
                hint="check agent.command in eval.yaml",
            ) from None
        payload = json.dumps({"messages": messages}).encode("utf-8")
        try:
            stdout, stderr = await _communicate(process, payload, limits.max_body_bytes())
        except BaseException:  # timeout or cancellation: the process must not outlive the turn
            await processes.stop(process, grace_s=0.5)
            raise
        processes.release(process)
        if stdout is None:
            raise TurnFailed(
                "agentResponseUnparseable",
                limits.too_large(f"the output of `{' '.join(self.argv)}`", limits.max_body_bytes()),
            )
        if process.returncode != 0:
            lines = stderr.decode("utf-8", errors="replace").rstrip().splitlines()
            message = f"`{' '.join(self.argv)}` exited with code {process.returncode}"
            if lines:
                message += "; last lines of its stderr:\n" + "\n".join(lines[-_STDERR_TAIL_LINES:])
            raise TurnFailed(AGENT_REQUEST_FAILED, message)
        return parse_output(stdout.decode("utf-8", errors="replace"), query, self.name)

    async def aclose(self) -> None:
        """Nothing outlives a turn: each process is reaped before its turn ends."""


async def _communicate(
    process: asyncio.subprocess.Process, payload: bytes, limit: int
) -> tuple[bytes | None, bytes]:
    """`process.communicate(payload)` that holds at most `limit` bytes of standard output
    (None past it: the process is killed, the rest never read) and the last 64 KiB of
    standard error."""
    assert process.stdin and process.stdout and process.stderr

    async def feed() -> None:
        assert process.stdin
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            process.stdin.write(payload)
            await process.stdin.drain()
        process.stdin.close()

    async def out() -> bytes | None:
        assert process.stdout
        buf = bytearray()
        while chunk := await process.stdout.read(1 << 16):
            buf += chunk
            if len(buf) > limit:
                processes.kill_group_now(process.pid)
                return None
        return bytes(buf)

    async def err() -> bytes:
        assert process.stderr
        tail = bytearray()
        while chunk := await process.stderr.read(1 << 16):
            tail = (tail + chunk)[-(1 << 16) :]
        return bytes(tail)

    _, stdout, stderr = await asyncio.gather(feed(), out(), err())
    await process.wait()
    return stdout, stderr


def parse_output(text: str, query: str, source: str = "command") -> TurnResult:
    """A turn from the program's standard output: JSON with `output`, or plain text."""
    stripped = text.strip()
    try:
        data = json.loads(stripped) if stripped.startswith("{") else None
    except json.JSONDecodeError:
        data = None
    if not isinstance(data, dict) or "output" not in data:
        return TurnResult(query=query, response=stripped)
    output = data["output"]
    raw_usage = data.get("usage")
    usage: dict[str, Any] = raw_usage if isinstance(raw_usage, dict) else {}
    return TurnResult(
        query=query,
        response=output if isinstance(output, str) else json.dumps(output, ensure_ascii=False),
        tool_calls=[
            _tool_call(c, source) for c in data.get("tool_calls") or [] if isinstance(c, dict)
        ],
        citations=citations_from_items(data.get("citations") or []),
        diagnostics=read_diagnostics(data.get("diagnostics")),
        usage=Usage(
            input_tokens=int(usage.get("input_tokens") or usage.get("prompt_tokens") or 0),
            output_tokens=int(usage.get("output_tokens") or usage.get("completion_tokens") or 0),
        ),
    )


def _tool_call(raw: dict[str, Any], source: str) -> ToolCallRecord:
    nested = raw.get("function")
    function: dict[str, Any] = nested if isinstance(nested, dict) else raw
    plugin = raw.get("plugin_name", raw.get("server_label"))
    return ToolCallRecord(
        name=str(function.get("name", "")),
        arguments=parse_arguments(function.get("arguments")),
        result=raw.get("result", raw.get("output")),
        error=raw.get("error") or None,
        source=source,
        plugin=plugin if isinstance(plugin, str) and plugin else None,
    )
