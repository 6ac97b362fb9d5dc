"""`local` — a prompt agent run by agentopt itself: the composed system prompt, the model
through the call layer, and a tool loop answering tool calls from mocks, Python functions or
MCP servers (agents.md §1)."""

from __future__ import annotations

from typing import Any

from agentopt.agents.base import RunConfig, register_target
from agentopt.agents.conversation import (
    TOOL_NOT_ALLOWED,
    TOOL_ROUNDS_EXCEEDED,
    TurnFailed,
    allowed_tools,
    not_allowed_message,
    run_turns,
)
from agentopt.agents.skills import load_skill_tool
from agentopt.agents.tools.mcp_tools import McpTools
from agentopt.agents.tools.mocks import ToolMocks
from agentopt.agents.tools.python_tools import PythonTools
from agentopt.agents.tools.toolbox import Toolbox, tool_message_content
from agentopt.contracts.task import Task
from agentopt.contracts.transcript import ToolCallRecord, Transcript, TurnResult
from agentopt.contracts.usage import Usage
from agentopt.core.errors import ConfigError
from agentopt.core.files.agent_config import compose_system_prompt
from agentopt.core.files.agent_definition import AgentDefinition
from agentopt.models.call import CallLayer
from agentopt.models.types import ChatRequest, Message, ToolDef


@register_target("local")
class LocalTarget:
    """Runs the agent definition's prompt, model and tools in-process."""

    name = "local"

    def __init__(
        self,
        definition: AgentDefinition,
        *,
        model: str | None = None,
    ) -> None:
        self.definition = definition
        self.model = model or definition.model or ""
        if not self.model:
            raise ConfigError.at(
                "",
                "agent.model",
                f"agent '{definition.name}' has no model: set `model:` in its metadata.yaml "
                "or `agent.model` in eval.yaml",
            )
        self.system_prompt = compose_system_prompt(definition)
        self.mocks = ToolMocks.parse(definition.tool_mocks, "tool_mocks.json")
        self.mcp = (
            McpTools(definition.mcp_servers, definition.folder) if definition.mcp_servers else None
        )
        self.toolbox = Toolbox(
            skills=definition.skills, python=PythonTools.for_definition(definition), mcp=self.mcp
        )
        self._tools: list[dict[str, Any]] | None = None

    async def tool_definitions(self) -> list[dict[str, Any]]:
        """The function tools offered to the model: the definition's, then MCP tools it does
        not already declare, then `load_skill` when there are skills. Starts MCP servers."""
        if self._tools is None:
            tools = [t for t in self.definition.tools if t.get("type") == "function"]
            if self.mcp is not None:
                await self.mcp.start()
                declared = {_tool_name(t) for t in tools}
                tools += [t for t in self.mcp.tool_defs() if _tool_name(t) not in declared]
            if self.definition.skills:
                tools.append(load_skill_tool(self.definition.skills))
            self._tools = tools
        return self._tools

    async def run(self, task: Task, config: RunConfig) -> Transcript:
        if config.calls is None:
            raise ValueError("RunConfig.calls (the call layer) is required by the local target")
        calls = config.calls
        mocks = self.mocks
        if task.tool_mocks:
            source = f"task '{task.name}' tool_mocks"
            mocks = ToolMocks.parse(task.tool_mocks, source).then(self.mocks)
        tools = await self.tool_definitions()
        history: list[Message] = []
        if self.system_prompt:
            history.append(Message(role="system", content=self.system_prompt))

        async def send(query: str) -> TurnResult:
            messages = [*history, Message(role="user", content=query)]
            result = await self._turn(calls, messages, tools, mocks, config)
            if config.user is not None:  # a simulated conversation can be resumed mid-way
                exchange = messages[len(history) :]  # this turn's, tool rounds included
                result.state = {"messages": [m.model_dump(exclude_none=True) for m in exchange]}
            history[:] = messages  # only a successful turn's exchange carries over
            return result

        def restore(turn: TurnResult) -> None:
            kept = (turn.state or {}).get("messages") or [
                {"role": "user", "content": turn.query},
                {"role": "assistant", "content": turn.response},
            ]
            history.extend(Message.model_validate(m) for m in kept)

        turns = await run_turns(task, config, send, restore=restore)
        return Transcript(
            turns=turns,
            target=self.name,
            model=self.model,
            tool_definitions=tools,
            system_prompt=self.system_prompt,
        )

    async def _turn(
        self,
        calls: CallLayer,
        messages: list[Message],
        tools: list[dict[str, Any]],
        mocks: ToolMocks,
        config: RunConfig,
    ) -> TurnResult:
        """The tool loop for one user turn; appends the exchange to `messages`."""
        tool_defs = [ToolDef(function=t["function"]) for t in tools] or None
        limit = self.definition.max_tool_rounds
        result = TurnResult(query=str(messages[-1].content or ""))
        usage: Usage | None = None
        cost, rounds = 0.0, 0
        while True:
            request = ChatRequest(
                messages=list(messages),
                tools=tool_defs,
                tool_choice=self._tool_choice() if rounds == 0 and tool_defs else None,
                temperature=self.definition.temperature,
                max_tokens=self.definition.max_tokens,
            )
            response = await calls.complete(self.model, request, pool="agent", repeat=config.repeat)
            usage = response.usage if usage is None else usage + response.usage
            cost += response.cost_usd
            result.usage, result.cost_usd = usage, cost
            messages.append(response.message)
            if not response.tool_calls:
                result.response = response.text
                return result
            if rounds >= limit:
                raise TurnFailed(
                    TOOL_ROUNDS_EXCEEDED,
                    f"the agent was still calling tools after max_tool_rounds={limit} rounds "
                    "(raise max_tool_rounds in metadata.yaml if it needs more)",
                    partial=result,
                )
            rounds += 1
            _refuse_unless_allowed(response.tool_calls, result)
            for call in response.tool_calls:
                arguments = call.function.parsed_arguments()
                record: ToolCallRecord = await self.toolbox.call(
                    call.function.name, arguments, mocks=mocks, real_tools=config.real_tools
                )
                result.tool_calls.append(record)
                messages.append(
                    Message(
                        role="tool",
                        tool_call_id=call.id,
                        name=call.function.name,
                        content=tool_message_content(record),
                    )
                )

    def _tool_choice(self) -> str | dict[str, Any] | None:
        choice = self.definition.tool_choice
        if choice is None or choice in ("auto", "required", "none"):
            return choice
        return {"type": "function", "function": {"name": choice}}

    async def aclose(self) -> None:
        if self.mcp is not None:
            await self.mcp.aclose()


def _refuse_unless_allowed(calls: list[Any], result: TurnResult) -> None:
    """Fail the turn before any call of this round runs when one of them is outside the turn's
    `allowed_tools`: a refused tool is never executed (M365 `toolCallNotAllowed`)."""
    allowed = allowed_tools()
    refused = [c for c in calls if allowed is not None and c.function.name not in allowed]
    if not refused or allowed is None:
        return
    for call in refused:
        result.tool_calls.append(
            ToolCallRecord(
                name=call.function.name,
                arguments=call.function.parsed_arguments(),
                source="refused",
                error="not in allowed_tools: not executed",
            )
        )
    raise TurnFailed(
        TOOL_NOT_ALLOWED, not_allowed_message(refused[0].function.name, allowed), partial=result
    )


def _tool_name(tool: dict[str, Any]) -> str:
    return str((tool.get("function") or {}).get("name", ""))
