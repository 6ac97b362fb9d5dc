"""agentopt: build, run and optimize evaluation suites for LLM agents.

The top-level package re-exports only what scripts need; everything else lives in the
layer packages (cli → workflows → evaluators/agents/datasets/registry/reports → models → core).
"""

from agentopt.core.errors import AgentoptError, ConfigError, InputError

__version__ = "0.1.0"

__all__ = ["AgentoptError", "ConfigError", "InputError", "__version__"]
