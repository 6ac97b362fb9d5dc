"""`.agent_configs/<id>/` — the agent's optimizable configuration (files.md §2).

`load_agent_config` reads metadata.yaml and the files it names (paths relative to the
metadata file) into an `AgentDefinition`; `write_agent_config` writes one back in the same
layout (used by `optimize apply` and by `eval init` for the baseline);
`compose_system_prompt` builds the system prompt the local target sends.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

from agentopt.core.atomic import free_aside_name, fsync_folder, json_bytes, write_staged_files
from agentopt.core.errors import ConfigError, InputError, Problem
from agentopt.core.files import bounded
from agentopt.core.files.agent_definition import AgentDefinition, McpServer, Skill
from agentopt.core.files.problems import Collector, describe, expect_int, expect_str
from agentopt.core.files.skills import load_skills, render_skill, skill_folder_name
from agentopt.core.files.tools_json import check_tool_mocks, check_tools
from agentopt.core.files.yaml_source import dump_yaml, load_json, load_yaml_mapping, read_text
from agentopt.core.paths import AGENT_CONFIGS_DIR

METADATA_FILE = "metadata.yaml"
TOOL_MOCKS_FILE = "tool_mocks.json"
METADATA_KEYS = (
    "model",
    "instruction_file",
    "tools_file",
    "tool_file",
    "skill_dir",
    "temperature",
    "max_tokens",
    "tools_module",
    "mcp_servers",
    "max_tool_rounds",
    "tool_choice",
    "name",
    "description",
)


def load_agent_config(
    path: Path | str, *, name: str | None = None, project: Path | None = None
) -> tuple[AgentDefinition, list[Problem]]:
    """Read `.agent_configs/<id>/metadata.yaml` (or its folder) into an AgentDefinition.

    Args:
        path: metadata.yaml, or the folder holding it.
        name: the agent name (default: metadata `name`, else the project folder name).
        project: the agent project folder (default: the folder holding `.agent_configs`).

    Returns:
        The definition and the warnings (non-function tools, unknown keys, ...).

    Raises:
        ConfigError: every error found, each naming its file and key.
    """
    path = Path(path)
    meta_path = path / METADATA_FILE if bounded.is_dir(path) else path
    folder = meta_path.parent
    data, c = load_yaml_mapping(
        meta_path, "expected a mapping with model, instruction_file, ...; found"
    )
    for key in data:
        if key not in METADATA_KEYS:
            c.unknown_key((), key, METADATA_KEYS)
    others: list[Problem] = []

    model = expect_str(c, ("model",), data["model"]) if data.get("model") is not None else None
    instructions = _instructions(c, folder, data)
    tools, tools_file = _tools(c, folder, data, others)
    tool_mocks = _mocks(folder, tools_file, tools, others)
    skills: list[Skill] = []
    skill_dir = _path_key(c, folder, data, "skill_dir", default="skills")
    if skill_dir is not None and bounded.is_dir(skill_dir):
        skills, sc = load_skills(skill_dir, str(skill_dir))
        others.extend(sc.problems)
    elif "skill_dir" in data and skill_dir is not None:
        c.error(("skill_dir",), f"expected a folder of skills, found nothing at {skill_dir}")
    temperature = _temperature(c, data.get("temperature"))
    tools_module = _path_key(c, folder, data, "tools_module", default="tools.py")
    if tools_module is not None and not bounded.is_file(tools_module):
        if "tools_module" in data:
            c.error(("tools_module",), f"expected a Python file, found nothing at {tools_module}")
        tools_module = None
    mcp = _mcp_servers(c, data.get("mcp_servers"))
    max_tokens = None
    if data.get("max_tokens") is not None:
        max_tokens = expect_int(c, ("max_tokens",), data["max_tokens"], lo=1)
    rounds = 8
    if data.get("max_tool_rounds") is not None:
        rounds = expect_int(c, ("max_tool_rounds",), data["max_tool_rounds"], lo=1) or 8

    tool_choice = _tool_choice(c, data.get("tool_choice"), tools)

    problems = c.problems + others
    errors = [p for p in problems if p.severity == "error"]
    if errors:
        raise ConfigError(problems=errors)
    in_configs = folder.parent.name == AGENT_CONFIGS_DIR
    project_dir = Path(project) if project else (folder.parent.parent if in_configs else folder)
    agent_name = name or (data.get("name") if isinstance(data.get("name"), str) else None)
    defn = AgentDefinition(
        name=agent_name or project_dir.resolve().name,
        kind="prompt",
        folder=project_dir,
        model=model,
        instructions=instructions,
        temperature=temperature,
        max_tokens=max_tokens,
        tools=tools,
        skills=skills,
        tool_mocks=tool_mocks,
        tools_module=str(tools_module) if tools_module else None,
        mcp_servers=mcp,
        max_tool_rounds=rounds,
        tool_choice=tool_choice,
        config_id=folder.name if in_configs else "baseline",
        source=str(meta_path),
    )
    return defn, [p for p in problems if p.severity == "warning"]


def compose_system_prompt(defn: AgentDefinition) -> str:
    """The instructions, then an "Available Skills" list when there are skills (files.md §2).

    Skill bodies are not included: the agent loads them with its `load_skill` tool.
    """
    text = defn.instructions or ""
    if not defn.skills:
        return text
    rows = [
        f"- **{s.name}**: {s.description}" if s.description else f"- **{s.name}**"
        for s in defn.skills
    ]
    return text + "\n\n## Available Skills\n" + "\n".join(rows)


def write_agent_config(
    folder: Path | str,
    defn: AgentDefinition,
    *,
    overwrite: bool = False,
    files: dict[str, bytes] | None = None,
) -> Path | None:
    """Write `defn` as metadata.yaml, instructions.md, tools.json, tool_mocks.json, skills/.

    The folder is built beside the target and renamed into place, so a crash never leaves a
    half-written configuration. An existing folder is kept as `<folder>.<timestamp>` when
    `overwrite` is true (its path is returned), else refused. `files`: `defn`'s files as
    `agent_config_files` made them (serialised on another thread than the one writing).
    """
    folder = Path(folder)
    if folder.exists() and any(folder.iterdir()) and not overwrite:
        raise ConfigError.at(
            str(folder), "", "already exists; pass overwrite=True to replace it (a backup is kept)"
        )
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=folder.parent))
    try:
        write_staged_files(tmp, files if files is not None else agent_config_files(defn))
        saved = None
        if folder.exists():
            saved = free_aside_name(folder)
            folder.rename(saved)
        tmp.rename(folder)
        fsync_folder(folder.parent)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    if saved is not None and not any(saved.iterdir()):
        saved.rmdir()
        saved = None
    return saved


def agent_config_files(defn: AgentDefinition) -> dict[str, bytes]:
    """The files of `defn`'s configuration folder: relative path → contents."""
    files: dict[str, bytes] = {}
    meta: dict[str, Any] = {}
    if defn.model:
        meta["model"] = defn.model
    meta["instruction_file"] = "instructions.md"
    files["instructions.md"] = ((defn.instructions or "").rstrip() + "\n").encode()
    if defn.tools:
        meta["tools_file"] = "tools.json"
        files["tools.json"] = json_bytes(defn.tools)
    if defn.tool_mocks:
        files[TOOL_MOCKS_FILE] = json_bytes(defn.tool_mocks)
    if defn.skills:
        meta["skill_dir"] = "skills"
        for skill in defn.skills:
            name = f"skills/{skill_folder_name(skill.name)}/SKILL.md"
            files[name] = render_skill(skill).encode()
    if defn.temperature is not None:
        meta["temperature"] = defn.temperature
    if defn.max_tokens is not None:
        meta["max_tokens"] = defn.max_tokens
    if defn.tools_module:
        meta["tools_module"] = defn.tools_module
    if defn.mcp_servers:
        meta["mcp_servers"] = [m.model_dump(exclude_defaults=True) for m in defn.mcp_servers]
    if defn.max_tool_rounds != 8:
        meta["max_tool_rounds"] = defn.max_tool_rounds
    names = {str((t.get("function") or {}).get("name", "")) for t in defn.tools}
    if defn.tool_choice in TOOL_CHOICES or defn.tool_choice in names:
        meta["tool_choice"] = defn.tool_choice  # a forced tool a candidate dropped is dropped
    files[METADATA_FILE] = dump_yaml(meta).encode()
    return files


def _path_key(
    c: Collector, folder: Path, data: dict[str, Any], key: str, *, default: str
) -> Path | None:
    raw = data.get(key)
    if raw is None:
        return folder / default
    value = expect_str(c, (key,), raw)
    return None if value is None else (folder / value)


def _instructions(c: Collector, folder: Path, data: dict[str, Any]) -> str | None:
    path = _path_key(c, folder, data, "instruction_file", default="instructions.md")
    if path is None:
        return None
    if not bounded.is_file(path):
        if "instruction_file" in data:
            c.error(("instruction_file",), f"expected a markdown file, found nothing at {path}")
        return None
    return read_text(path, kind="text").rstrip()


def _tools(
    c: Collector, folder: Path, data: dict[str, Any], others: list[Problem]
) -> tuple[list[dict[str, Any]], Path | None]:
    key = "tools_file" if "tools_file" in data else "tool_file"
    path = _path_key(c, folder, data, key, default="tools.json")
    if path is None:
        return [], None
    if not bounded.is_file(path):
        if key in data:
            c.error((key,), f"expected a tools JSON file, found nothing at {path}")
        return [], None
    tc = Collector(str(path))
    try:
        tools = check_tools(tc, (), load_json(path, shown=str(path)))
    except InputError as exc:
        others.extend(exc.problems)
        return [], path
    others.extend(tc.problems)
    return tools, path


def _mocks(
    folder: Path, tools_file: Path | None, tools: list[dict[str, Any]], others: list[Problem]
) -> dict[str, Any] | None:
    path = (tools_file.parent if tools_file else folder) / TOOL_MOCKS_FILE
    if not bounded.is_file(path):
        return None
    mc = Collector(str(path))
    try:
        data = load_json(path, shown=str(path))
    except InputError as exc:
        others.extend(exc.problems)
        return None
    mocks = check_tool_mocks(mc, data, tools)
    others.extend(mc.problems)
    return mocks


def _temperature(c: Collector, raw: Any) -> float | None:
    if raw is None:
        return None
    if isinstance(raw, int | float) and not isinstance(raw, bool) and 0 <= raw <= 2:
        return float(raw)
    c.error(("temperature",), f"expected a number 0–2, found {describe(raw)}")
    return None


TOOL_CHOICES = ("auto", "required", "none")


def _tool_choice(c: Collector, raw: Any, tools: list[dict[str, Any]]) -> str | None:
    """`tool_choice`: auto, required, none, or the name of one of the agent's tools."""
    if raw is None:
        return None
    names = [str((t.get("function") or {}).get("name", "")) for t in tools]
    if isinstance(raw, str) and (raw in TOOL_CHOICES or raw in names):
        return raw
    valid = ", ".join([*TOOL_CHOICES, *names])
    c.error(("tool_choice",), f"expected one of {valid}; found {describe(raw)}")
    return None


def _mcp_servers(c: Collector, raw: Any) -> list[McpServer]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        c.error(
            ("mcp_servers",),
            f"expected a list of {{name, command, args, env}}, found {describe(raw)}",
        )
        return []
    out: list[McpServer] = []
    for i, item in enumerate(raw):
        path = ("mcp_servers", i)
        if not isinstance(item, dict):
            c.error(path, f"expected a mapping with name and command, found {describe(item)}")
            continue
        command = item.get("command")
        args = item.get("args") or []
        if isinstance(command, list) and command and all(isinstance(x, str) for x in command):
            command, args = command[0], [*command[1:], *args]
        name = expect_str(c, (*path, "name"), item.get("name"))
        cmd = expect_str(c, (*path, "command"), command)
        if not isinstance(args, list) or not all(isinstance(a, str | int | float) for a in args):
            c.error((*path, "args"), f"expected a list of strings, found {describe(args)}")
            continue
        env = item.get("env") or {}
        if not isinstance(env, dict):
            c.error((*path, "env"), f"expected a mapping of name → value, found {describe(env)}")
            continue
        for key in item:
            if key not in ("name", "command", "args", "env"):
                c.unknown_key(path, key, ("name", "command", "args", "env"))
        if name and cmd:
            out.append(
                McpServer(
                    name=name,
                    command=cmd,
                    args=[str(a) for a in args],
                    env={str(k): str(v) for k, v in env.items()},
                )
            )
    return out
