"""The public surface for extensions: everything a provider, evaluator, agent target or optimizer
strategy needs, in one module (docs/extending.md).

    from agentopt.plugins import EvalResult, EvalSample, EvaluatorBase, register_evaluator

A plugin imports from here and nowhere else in agentopt; every other module is private by
convention and may move between releases (Inspect AI's `_` modules, llm's `llm.hookimpl`). This
module is a facade above every layer: it re-exports the one registration function of each kind
(the same decorators the built-ins use in their own modules) and the types they take and return,
and nothing inside agentopt imports it (tests/test_layers.py). Names load on first use (PEP 562),
so a plugin that only registers an evaluator does not import the optimizer.
"""

from __future__ import annotations

import importlib
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agentopt.agents.base import AgentTarget, RunConfig, register_target
    from agentopt.agents.conversation import run_turns
    from agentopt.contracts.eval_result import EvalResult
    from agentopt.contracts.task import Task, Turn
    from agentopt.contracts.transcript import ToolCallRecord, Transcript, TurnResult
    from agentopt.contracts.usage import Usage
    from agentopt.core.errors import ConfigError
    from agentopt.core.files.agent_definition import AgentDefinition
    from agentopt.core.files.eval_yaml import ProviderConfig
    from agentopt.evaluators.base import BuildContext, EvalSample, Evaluator, EvaluatorBase
    from agentopt.evaluators.options import EvaluatorOptions, JudgeOptions
    from agentopt.evaluators.registry import evaluator as register_evaluator
    from agentopt.models.providers.base import Capabilities, Provider
    from agentopt.models.providers.registry import register_provider
    from agentopt.models.settings import CallSettings
    from agentopt.models.types import ChatRequest, ChatResponse, Message, ToolCall
    from agentopt.workflows.optimize.strategies.base import (
        Example,
        NoProposal,
        Proposal,
        ProposalContext,
        Strategy,
        register_strategy,
    )

_HOMES: dict[str, tuple[str, str]] = {
    # Registration: one decorator per kind.
    "register_provider": ("agentopt.models.providers.registry", "register_provider"),
    "register_evaluator": ("agentopt.evaluators.registry", "evaluator"),
    "register_target": ("agentopt.agents.base", "register_target"),
    "register_strategy": ("agentopt.workflows.optimize.strategies.base", "register_strategy"),
    # Providers: the request a provider answers and what it returns.
    "Provider": ("agentopt.models.providers.base", "Provider"),
    "Capabilities": ("agentopt.models.providers.base", "Capabilities"),
    "ProviderConfig": ("agentopt.core.files.eval_yaml", "ProviderConfig"),
    "CallSettings": ("agentopt.models.settings", "CallSettings"),
    "ChatRequest": ("agentopt.models.types", "ChatRequest"),
    "ChatResponse": ("agentopt.models.types", "ChatResponse"),
    "Message": ("agentopt.models.types", "Message"),
    "ToolCall": ("agentopt.models.types", "ToolCall"),
    "Usage": ("agentopt.contracts.usage", "Usage"),
    # Evaluators.
    "Evaluator": ("agentopt.evaluators.base", "Evaluator"),
    "EvaluatorBase": ("agentopt.evaluators.base", "EvaluatorBase"),
    "EvalSample": ("agentopt.evaluators.base", "EvalSample"),
    "BuildContext": ("agentopt.evaluators.base", "BuildContext"),
    "EvalResult": ("agentopt.contracts.eval_result", "EvalResult"),
    "EvaluatorOptions": ("agentopt.evaluators.options", "EvaluatorOptions"),
    "JudgeOptions": ("agentopt.evaluators.options", "JudgeOptions"),
    # Agent targets.
    "AgentTarget": ("agentopt.agents.base", "AgentTarget"),
    "AgentDefinition": ("agentopt.core.files.agent_definition", "AgentDefinition"),
    "RunConfig": ("agentopt.agents.base", "RunConfig"),
    "run_turns": ("agentopt.agents.conversation", "run_turns"),
    "Task": ("agentopt.contracts.task", "Task"),
    "Turn": ("agentopt.contracts.task", "Turn"),
    "Transcript": ("agentopt.contracts.transcript", "Transcript"),
    "TurnResult": ("agentopt.contracts.transcript", "TurnResult"),
    "ToolCallRecord": ("agentopt.contracts.transcript", "ToolCallRecord"),
    # Optimizer strategies.
    "Strategy": ("agentopt.workflows.optimize.strategies.base", "Strategy"),
    "ProposalContext": ("agentopt.workflows.optimize.strategies.base", "ProposalContext"),
    "Example": ("agentopt.workflows.optimize.strategies.base", "Example"),
    "Proposal": ("agentopt.workflows.optimize.strategies.base", "Proposal"),
    "NoProposal": ("agentopt.workflows.optimize.strategies.base", "NoProposal"),
    # What a plugin raises for a bad setting (exit 2 with its message).
    "ConfigError": ("agentopt.core.errors", "ConfigError"),
}

__all__ = [
    "AgentDefinition",
    "AgentTarget",
    "BuildContext",
    "CallSettings",
    "Capabilities",
    "ChatRequest",
    "ChatResponse",
    "ConfigError",
    "EvalResult",
    "EvalSample",
    "Evaluator",
    "EvaluatorBase",
    "EvaluatorOptions",
    "Example",
    "JudgeOptions",
    "Message",
    "NoProposal",
    "Proposal",
    "ProposalContext",
    "Provider",
    "ProviderConfig",
    "RunConfig",
    "Strategy",
    "Task",
    "ToolCall",
    "ToolCallRecord",
    "Transcript",
    "Turn",
    "TurnResult",
    "Usage",
    "register_evaluator",
    "register_provider",
    "register_strategy",
    "register_target",
    "run_turns",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'agentopt.plugins' has no attribute {name!r}")
    module, attribute = home
    value = getattr(importlib.import_module(module), attribute)
    setattr(sys.modules[__name__], name, value)
    return value
