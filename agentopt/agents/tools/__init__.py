"""Tool implementations for the local target: mocks, Python functions, MCP servers."""

from agentopt.agents.tools.mcp_tools import McpTools
from agentopt.agents.tools.mocks import MockHit, MockRule, ToolMocks
from agentopt.agents.tools.python_tools import PythonTools
from agentopt.agents.tools.toolbox import Toolbox, tool_message_content

__all__ = [
    "McpTools",
    "MockHit",
    "MockRule",
    "PythonTools",
    "ToolMocks",
    "Toolbox",
    "tool_message_content",
]
