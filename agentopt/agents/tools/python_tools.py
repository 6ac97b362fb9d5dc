"""Python tools: a function in the agent's `tools.py` (or `metadata.yaml` `tools_module:`)
named like the tool, called with the parsed arguments (agents.md §1).

The module is imported lazily, on the first tool call that needs it, so that runs using only
mocks never execute the user's module.
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib
import importlib.util
import inspect
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from agentopt.core import trust
from agentopt.core.errors import ConfigError
from agentopt.core.files import bounded
from agentopt.core.files.agent_definition import AgentDefinition


class PythonTools:
    """The functions of one user module, callable as tools."""

    def __init__(self, module: str | Path) -> None:
        self.module_ref = module
        self._module: ModuleType | None = None

    @classmethod
    def for_definition(cls, definition: AgentDefinition) -> PythonTools | None:
        """The agent's tools module: `tools_module` if set, else `tools.py` in its folder."""
        if definition.tools_module:
            ref = definition.tools_module
            path = Path(ref) if Path(ref).is_absolute() else Path(definition.folder) / ref
            if path.suffix == ".py" or bounded.exists(path):
                return cls(path)
            return cls(ref)  # a dotted module name on sys.path
        default = Path(definition.folder) / "tools.py"
        return cls(default) if bounded.is_file(default) else None

    def has(self, name: str) -> bool:
        """Whether the module defines a public function called `name`."""
        if name.startswith("_"):
            return False
        return callable(getattr(self._load(), name, None))

    async def call(self, name: str, arguments: dict[str, Any]) -> Any:
        """Call the function; sync functions run in a worker thread so the loop keeps going.

        Exceptions propagate: the caller turns them into the tool's error result.
        """
        fn = getattr(self._load(), name)
        if inspect.iscoroutinefunction(fn):
            return await fn(**arguments)
        result = await asyncio.to_thread(fn, **arguments)
        if inspect.isawaitable(result):
            result = await result
        return result

    def _load(self) -> ModuleType:
        if self._module is None:
            self._module = _import(self.module_ref)
        return self._module


def _import(ref: str | Path) -> ModuleType:
    if isinstance(ref, str):
        try:
            found = importlib.util.find_spec(ref.split(".")[0])
            if found is not None and found.origin and Path(found.origin).is_file():
                trust.about_to_run("a tools module", file=Path(found.origin))
            return importlib.import_module(ref)
        except Exception as exc:
            message = f"cannot import '{ref}': {exc}"
            raise ConfigError.at("metadata.yaml", "tools_module", message) from None
    path = Path(ref).resolve()
    if not path.is_file():
        raise ConfigError.at(str(ref), "", "tools module not found (metadata.yaml tools_module)")
    digest = hashlib.sha256(str(path).encode()).hexdigest()[:12]
    spec = importlib.util.spec_from_file_location(f"agentopt_user_tools_{digest}", path)
    if spec is None or spec.loader is None:
        raise ConfigError.at(str(ref), "", "not a Python module")
    trust.about_to_run("a tools module", file=path)
    module = importlib.util.module_from_spec(spec)
    # Let the module import its siblings while it loads.
    sys.path.insert(0, str(path.parent))
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        raise ConfigError.at(
            str(ref), "", f"importing the tools module failed: {type(exc).__name__}: {exc}"
        ) from None
    finally:
        sys.path.remove(str(path.parent))
    return module
