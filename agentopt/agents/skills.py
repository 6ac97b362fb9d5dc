"""Skills for the local target: listed in the system prompt (by
`agentopt.core.files.agent_config.compose_system_prompt`), loaded on demand through a
`load_skill(name)` tool that returns the skill's body (files.md §2, agents.md §1).

Loading on demand keeps the prompt short and lets the optimizer see which skills an agent
actually used (the `load_skill` calls are in the trace).
"""

from __future__ import annotations

from typing import Any

from agentopt.core.files.agent_definition import Skill

LOAD_SKILL = "load_skill"


def load_skill_tool(skills: list[Skill]) -> dict[str, Any]:
    """The `load_skill` function tool, with the skill names as an enum."""
    return {
        "type": "function",
        "function": {
            "name": LOAD_SKILL,
            "description": "Load the full text of one of the Available Skills by its name.",
            "parameters": {
                "type": "object",
                "properties": {
                    "name": {
                        "type": "string",
                        "enum": [s.name for s in skills],
                        "description": "The skill's name, as listed under Available Skills.",
                    }
                },
                "required": ["name"],
            },
        },
    }


def load_skill(skills: list[Skill], arguments: dict[str, Any]) -> tuple[str | None, str | None]:
    """(body, error) for a `load_skill` call."""
    name = arguments.get("name")
    for skill in skills:
        if skill.name == name:
            return skill.body, None
    known = ", ".join(s.name for s in skills)
    return None, f"unknown skill {name!r}; available skills: {known}"
