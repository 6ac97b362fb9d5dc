"""The start command of a hosted agent that gives only `codeConfiguration` (`runtime`,
`entryPoint`) or a `runtime:` stack, derived the way `azd ai agent run` starts it locally
(`internal/cmd/run.go`, `helpers.go` `detectProjectType`, `resolveVenvCommand`).

- Python: the project's own interpreter when it has a `.venv`; `uv run python ENTRY` when a
  `uv.lock` (or a `pyproject.toml` and `uv` on PATH) says the project is managed by uv; else the
  `python3` on PATH. The entry point defaults to `main.py` (or `app.py`) when it exists.
- .NET: `dotnet run` in the project folder, when the .NET SDK is on PATH.

An explicit `startupCommand` always wins. When nothing can be derived, `StartCommandError`
names the key to add.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from agentopt.core.errors import ConfigError
from agentopt.core.files.agent_definition import AgentDefinition

PYTHON_ENTRIES = ("main.py", "app.py")


@dataclass(frozen=True)
class StartCommand:
    """A derived command and a phrase saying where it came from (shown in the target block)."""

    argv: list[str]
    source: str


def derive_start_command(defn: AgentDefinition) -> StartCommand | None:
    """The command to start `defn`, or None when it has `startupCommand` already, is not a
    code-configured agent, or nothing on this machine can run it (see `missing_start_hint`)."""
    if defn.startup_command or defn.kind != "hosted":
        return None
    runtime = (defn.code_runtime or "").lower()
    folder = Path(defn.folder)
    if runtime.startswith("dotnet") or (not runtime and any(folder.glob("*.csproj"))):
        dotnet = shutil.which("dotnet")
        if dotnet is None:
            return None
        return StartCommand(["dotnet", "run"], _why(defn, ".NET project"))
    if runtime and not runtime.startswith("python"):
        return None
    entry = defn.code_entry_point or next(
        (name for name in PYTHON_ENTRIES if (folder / name).is_file()), None
    )
    if entry is None:
        return None
    return StartCommand(_python(folder, entry), _why(defn, entry))


def missing_start_hint(defn: AgentDefinition) -> str:
    """What to add when no start command can be derived (the key, with an example)."""
    runtime = (defn.code_runtime or "").lower()
    if runtime.startswith("dotnet"):
        return (
            "the .NET SDK (`dotnet`) is not on PATH: install it, or set `startupCommand` on the "
            "service in azure.yaml"
        )
    return (
        "set `startupCommand: python main.py` on the service in azure.yaml, or "
        "`codeConfiguration: {runtime: python_3_13, entryPoint: main.py}`"
    )


def require_start_command(defn: AgentDefinition) -> list[str] | str:
    """The command to start a hosted agent: its own, else derived, else a ConfigError that
    names the key to add."""
    if defn.startup_command:
        return defn.startup_command
    derived = derive_start_command(defn)
    if derived is not None:
        return derived.argv
    raise ConfigError(
        f"cannot start hosted agent '{defn.name}': it has no start command",
        hint=missing_start_hint(defn),
    )


def _python(folder: Path, entry: str) -> list[str]:
    venv = folder / ".venv" / "bin" / "python"
    if venv.is_file():
        return [str(venv), entry]
    uv = shutil.which("uv")
    if uv is not None and ((folder / "uv.lock").is_file() or (folder / "pyproject.toml").is_file()):
        return ["uv", "run", "python", entry]
    return ["python3" if shutil.which("python3") else "python", entry]


def _why(defn: AgentDefinition, what: str) -> str:
    if defn.code_entry_point:
        return f"derived from codeConfiguration.entryPoint ({defn.code_runtime or 'runtime?'})"
    if defn.code_runtime:
        return f"derived from runtime {defn.code_runtime} ({what})"
    return f"derived from the project files ({what})"
