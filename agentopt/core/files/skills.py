"""Skills: markdown files with optional YAML front matter (`name`, `description`), body =
the skill text the agent loads on demand (files.md §2)."""

from __future__ import annotations

import re
from pathlib import Path

from agentopt.core.errors import InputError
from agentopt.core.files import bounded
from agentopt.core.files.agent_definition import Skill
from agentopt.core.files.problems import Collector, describe
from agentopt.core.files.yaml_source import parse_yaml, read_text

_FRONT_MATTER = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)", re.DOTALL)
SAFE_NAME_RE = re.compile(r"[^A-Za-z0-9._-]+")


def parse_skill(text: str, path: Path, c: Collector) -> Skill | None:
    """One skill from markdown text; None (skipped) when the file is empty."""
    if not text.strip():
        return None
    meta: dict[str, object] = {}
    body = text
    match = _FRONT_MATTER.match(text)
    if match:
        try:
            loaded = parse_yaml(match.group(1), path.name)[0] or {}
        except InputError as exc:
            reason = "; ".join(p.message for p in exc.problems) or exc.message
            c.error((), f"{path.name}: invalid front matter: {reason}")
            return None
        if not isinstance(loaded, dict):
            c.error(
                (), f"{path.name}: expected front matter to be a mapping, found {describe(loaded)}"
            )
            return None
        meta = loaded
        body = text[match.end() :]
    name = meta.get("name") or default_skill_name(path)
    description = meta.get("description") or ""
    if not isinstance(name, str) or not isinstance(description, str):
        c.error((), f"{path.name}: expected name and description to be text")
        return None
    return Skill(
        name=name.strip(), description=description.strip(), body=body.strip(), path=str(path)
    )


def default_skill_name(path: Path) -> str:
    """The file stem; for the `skills/<name>/SKILL.md` layout, the folder name."""
    if path.stem.upper() == "SKILL":
        return path.parent.name
    return path.stem


def load_skills(skill_dir: Path, shown: str) -> tuple[list[Skill], Collector]:
    """Every `*.md` under `skill_dir` (sorted by path), empty files skipped."""
    c = Collector(shown)
    skills: list[Skill] = []
    seen: dict[str, str] = {}
    for path in sorted(skill_dir.rglob("*.md")):
        if not bounded.is_file(path):
            continue
        try:
            text = read_text(path, shown=str(path))
        except InputError as exc:
            c.problems.extend(exc.problems)
            continue
        fc = Collector(str(path))
        skill = parse_skill(text, path, fc)
        c.problems.extend(fc.problems)
        if skill is None:
            continue
        if skill.name in seen:
            c.error((), f'two skills are named "{skill.name}": {seen[skill.name]} and {path}')
            continue
        seen[skill.name] = str(path)
        skills.append(skill)
    return skills, c


def render_skill(skill: Skill) -> str:
    """SKILL.md text: front matter with name/description, then the body."""
    meta = {"name": skill.name}
    if skill.description:
        meta["description"] = skill.description
    import yaml  # only when a skill is written

    front = yaml.safe_dump(meta, sort_keys=False, allow_unicode=True, width=100).strip()
    return f"---\n{front}\n---\n\n{skill.body.strip()}\n"


def skill_folder_name(name: str) -> str:
    """A folder name for a skill that is safe on every OS."""
    return SAFE_NAME_RE.sub("-", name).strip("-.") or "skill"
