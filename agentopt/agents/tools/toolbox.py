"""Answers the local agent's tool calls from the right implementation (agents.md §1).

Three modes (`real_tools`): None, the `eval run` default, takes implementations in the
precedence order of agents.md — mocks, then the agent's Python functions, then its MCP servers;
False, the optimize default, lets only mocks answer, so optimization never fires real side
effects; True (`optimize --real-tools`) skips the mocks. A tool nobody implements gets an
error result the model can read and the trace keeps. `load_skill` is answered from the skills.
"""

from __future__ import annotations

import json
from typing import Any

from agentopt.agents.skills import LOAD_SKILL, load_skill
from agentopt.agents.tools.mcp_tools import McpTools
from agentopt.agents.tools.mocks import ToolMocks
from agentopt.agents.tools.python_tools import PythonTools
from agentopt.contracts.transcript import ToolCallRecord
from agentopt.core import limits
from agentopt.core.errors import AgentoptError
from agentopt.core.files.agent_definition import Skill


class Toolbox:
    """The tool implementations of one agent."""

    def __init__(
        self,
        *,
        skills: list[Skill],
        python: PythonTools | None = None,
        mcp: McpTools | None = None,
    ) -> None:
        self.skills = skills
        self.python = python
        self.mcp = mcp

    async def call(
        self, name: str, arguments: dict[str, Any], *, mocks: ToolMocks, real_tools: bool | None
    ) -> ToolCallRecord:
        """Run one tool call and record what answered it."""
        record = ToolCallRecord(name=name, arguments=arguments)
        if name == LOAD_SKILL and self.skills:
            record.result, record.error = load_skill(self.skills, arguments)
            record.source = "skill"
        elif real_tools is False or (real_tools is None and name in mocks):
            self._from_mocks(record, mocks)
        elif self.python is not None and self.python.has(name):
            record.source = "python"
            try:
                record.result = jsonable(await self.python.call(name, arguments))
            except AgentoptError:
                raise
            except Exception as exc:  # the tool failed: the model sees why, the run goes on
                record.error = f"{type(exc).__name__}: {exc}"
        elif self.mcp is not None and self.mcp.has(name):
            record.source = "mcp"
            record.plugin = self.mcp.server_of(name)
            try:
                record.result, record.error = await self.mcp.call(name, arguments)
            except Exception as exc:
                record.error = f"MCP call failed: {type(exc).__name__}: {exc}"
        else:
            record.source = "none"
            record.error = f"tool '{name}' has no implementation"
        if record.result is not None:
            text = record.result if isinstance(record.result, str) else None
            if text is None:
                text = json.dumps(record.result, default=str)
            size = limits.oversize(text)
            if size is not None:  # neither recorded nor sent on to the model
                record.result = None
                record.error = limits.too_large(f"the result of tool '{name}'", size)
        return record

    @staticmethod
    def _from_mocks(record: ToolCallRecord, mocks: ToolMocks) -> None:
        if record.name not in mocks:
            record.source = "none"
            record.error = (
                f"tool '{record.name}' has no implementation "
                "(no mock for it, and real tools are off)"
            )
            return
        record.source = "mock"
        hit = mocks.lookup(record.name, record.arguments)
        if hit is None:
            args = json.dumps(record.arguments, sort_keys=True, default=str)
            record.error = f"no mock for tool '{record.name}' matches the arguments {args}"
        else:
            record.result = hit.returns


def jsonable(value: Any) -> Any:
    """`value` as plain JSON data (anything else becomes its string form), so a transcript
    holding a tool's return value can always be saved."""
    return json.loads(json.dumps(value, ensure_ascii=False, default=str))


def tool_message_content(record: ToolCallRecord) -> str:
    """What the model reads as the tool's answer."""
    if record.error is not None:
        return f"Error: {record.error}"
    if isinstance(record.result, str):
        return record.result
    return json.dumps(record.result, ensure_ascii=False, default=str)
