"""What `eval run`, `eval run --remote` and `optimize` resolved their suite to, declared once:
the agent, the dataset, the evaluators and judge, eval.yaml and every merged setting."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from agentopt.contracts.resolved_suite import ResolvedSuite
from agentopt.contracts.task import Dataset
from agentopt.core.errors import Problem
from agentopt.core.files.agent_definition import AgentDefinition
from agentopt.core.files.eval_yaml import EvalConfig, Options
from agentopt.evaluators.base import EvaluatorUse


@dataclass(kw_only=True)
class SuiteInputs:
    """The resolved suite, with the warnings and notices met while resolving it."""

    project_dir: Path
    dataset: Dataset
    agent: AgentDefinition
    evaluators: list[EvaluatorUse]
    judge_model: str
    eval_config: EvalConfig | None = None
    warnings: list[Problem] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    suite: ResolvedSuite = field(default_factory=ResolvedSuite)
    """Every merged setting with its source (`workflows.resolve_suite`)."""

    @property
    def options(self) -> Options | None:
        """eval.yaml `options` (None without an eval.yaml)."""
        return self.eval_config.options if self.eval_config else None
