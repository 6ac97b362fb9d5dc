"""The settings one command resolved, each with the place it came from.

`eval run`, `optimize` and a remote run share this type (`workflows.resolve_suite` builds it),
so a `--dry-run` of either prints the same provenance table and a test can compare them:
"the judge is X, from `.azure/dev/.env`" is a fact about the project, not about a command.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

FLAG = "flag"
EVAL_YAML = "eval.yaml"
AZURE_EVAL_YAML = "azure.eval.yaml"
AZD_ENV_FILE = "azd env file"
ENVIRONMENT = "environment variable"
AGENT_FILE = "agent definition"
DEFAULT = "default"
KINDS = (FLAG, EVAL_YAML, AZURE_EVAL_YAML, AZD_ENV_FILE, ENVIRONMENT, AGENT_FILE, DEFAULT)
"""Where a setting can come from, highest precedence first (a flag always wins)."""


@dataclass(frozen=True)
class Setting:
    """One resolved value and where it came from."""

    value: Any
    kind: str
    """One of `KINDS`: what a test compares across commands."""
    where: str
    """The exact place, as a user would look for it: `--repeat`, `eval.yaml options.repeat
    (line 7)`, `.azure/dev/.env AZURE_AI_MODEL_DEPLOYMENT_NAME`, `default`."""


@dataclass
class ResolvedSuite:
    """Every merged setting of one command, by name (`judge_model`, `repeat`, …)."""

    settings: dict[str, Setting] = field(default_factory=dict)

    def __getitem__(self, name: str) -> Any:
        return self.settings[name].value

    def get(self, name: str, default: Any = None) -> Any:
        found = self.settings.get(name)
        return default if found is None else found.value

    def given(self, name: str) -> bool:
        """Whether the user set it (anywhere), rather than it being the default."""
        found = self.settings.get(name)
        return found is not None and found.kind != DEFAULT and found.value is not None

    def source(self, name: str) -> Setting:
        return self.settings[name]

    def put(self, name: str, value: Any, kind: str, where: str) -> None:
        self.settings[name] = Setting(value, kind, where)
