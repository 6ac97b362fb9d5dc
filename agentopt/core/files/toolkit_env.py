"""The Microsoft 365 Agents Toolkit's environment files, read as runevals reads them with
`--env NAME`.

The Toolkit lays a project's environments out as `env/.env.NAME` (checked in, no secrets) and
`env/.env.NAME.user` (the user's secrets, git-ignored); runevals also reads `.env.NAME` in the
project folder itself (its `.env.local` habit). `--env NAME` reads the first of
`env/.env.NAME`, `./.env.NAME` that exists, then the `.user` file beside it on top. The values
are layered under the process environment (a variable already set wins, as runevals' dotenv
does), and runevals' judge variables stand in for agentopt's own names when those are unset:
`AZURE_AI_OPENAI_ENDPOINT` → `AZURE_OPENAI_ENDPOINT`, `AZURE_AI_API_KEY` →
`AZURE_OPENAI_API_KEY`, `AZURE_AI_API_VERSION` → `OPENAI_API_VERSION`; `AZURE_AI_MODEL_NAME`
is the judge deployment (`judge_model`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from agentopt.core.errors import ConfigError
from agentopt.core.files.azd_env import parse_dotenv
from agentopt.core.files.yaml_source import read_text

FOLDER = "env"
RUNEVALS_NAMES = {
    "AZURE_AI_OPENAI_ENDPOINT": "AZURE_OPENAI_ENDPOINT",
    "AZURE_AI_API_KEY": "AZURE_OPENAI_API_KEY",
    "AZURE_AI_API_VERSION": "OPENAI_API_VERSION",
}
"""runevals' judge variables → the names agentopt's Azure OpenAI provider reads."""
JUDGE_MODEL_VAR = "AZURE_AI_MODEL_NAME"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


@dataclass
class ToolkitEnv:
    """One Toolkit environment, read."""

    name: str
    files: list[Path] = field(default_factory=list)
    """The files read, in order (the `.user` file last)."""
    values: dict[str, str] = field(default_factory=dict)
    """Their variables, later files winning."""

    def layered(self, process: Mapping[str, str]) -> dict[str, str]:
        """The variables to add to `process`: those it does not set, plus agentopt's names for
        runevals' judge variables (when agentopt's are unset)."""
        out = {k: v for k, v in self.values.items() if not process.get(k)}
        for theirs, ours in RUNEVALS_NAMES.items():
            value = process.get(theirs) or self.values.get(theirs)
            if value and not process.get(ours) and ours not in self.values:
                out[ours] = value
        return out


def env_names(project: Path) -> list[str]:
    """The environments a project has (`env/.env.NAME` or `./.env.NAME`, not `.user` files)."""
    names: set[str] = set()
    for folder in (project / FOLDER, project):
        try:
            found = [p.name for p in folder.glob(".env.*") if p.is_file()]
        except OSError:
            continue
        names.update(n.removeprefix(".env.") for n in found if not n.endswith(".user"))
    return sorted(names)


def load_toolkit_env(project: Path, name: str) -> ToolkitEnv:
    """Read the environment `name` of the Toolkit project at `project`.

    Raises:
        ConfigError: a bad name, or no `env/.env.NAME` nor `./.env.NAME` (naming the files
            looked for and the environments there are).
    """
    if not _NAME.match(name) or name.endswith(".user"):
        raise ConfigError.at("", "--env", f"expected an environment name like dev, found {name!r}")
    looked = [project / FOLDER / f".env.{name}", project / f".env.{name}"]
    main = next((p for p in looked if p.is_file()), None)
    if main is None:
        known = env_names(project)
        listed = ", ".join(known) if known else "none"
        raise ConfigError(
            f"no Agents Toolkit environment named {name!r}: neither "
            f"{looked[0].relative_to(project)} nor {looked[1].relative_to(project)} exists in "
            f"{project} (environments: {listed})",
            hint="pass --env with one of them; -e/--environment is the azd environment",
        )
    env = ToolkitEnv(name=name)
    for path in (main, main.with_name(main.name + ".user")):
        if path.is_file():
            env.values.update(parse_dotenv(read_text(path, kind="text")))
            env.files.append(path)
    return env
