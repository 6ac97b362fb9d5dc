"""`.agentopt/remote.json`: what agentopt already created in which Foundry project, by content
hash, so an unchanged rubric or evaluation definition is reused instead of created again
(datasets are tracked in the registry's `remote` field, as `eval update --remote` does).

    {"evaluators": {"<endpoint>|<name>|<sha256>": "<version>"},
     "evals": {"<endpoint>|<sha256>": "<eval id>"}}
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

from agentopt.core.atomic import write_json_atomic
from agentopt.core.paths import state_dir

Kind = Literal["evaluators", "evals"]


class RemoteIndex:
    def __init__(self, project: Path) -> None:
        self.path = state_dir(project) / "remote.json"

    def _read(self) -> dict[str, dict[str, str]]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def get(self, kind: Kind, key: str) -> str | None:
        value = self._read().get(kind, {}).get(key)
        return value if isinstance(value, str) else None

    def put(self, kind: Kind, key: str, value: str) -> None:
        data = self._read()
        data.setdefault(kind, {})[key] = value
        write_json_atomic(self.path, data)
