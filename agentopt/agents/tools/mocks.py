"""Tool mocks: canned tool answers chosen by the call's arguments (agents.md §1).

Shape (`tool_mocks.json` beside `tools.json`, or `tool_mocks:` on a task):
    {"get_order": [{"when": {"order_id": "12345"}, "return": {...}}, {"return": "not found"}]}
A tool maps to a list of rules, one rule (`{"when"?, "return"}`), or any other value, which is
returned for every call (`core.files.tools_json.mock_rules` reads the shape, for the loader
too). The first rule whose `when` is a subset of the call's arguments wins; a rule without
`when` matches anything. Scalars match across JSON types ("12345" matches
12345) because models are loose about argument types.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from agentopt.core.errors import InputError, Problem
from agentopt.core.files.problems import format_path
from agentopt.core.files.tools_json import MOCK_SHAPES, mock_rules


@dataclass(frozen=True)
class MockRule:
    """One `{"when", "return"}` entry."""

    returns: Any
    when: dict[str, Any] | None = None

    def matches(self, arguments: dict[str, Any]) -> bool:
        return self.when is None or _subset(self.when, arguments)


@dataclass(frozen=True)
class MockHit:
    """A matched rule's value (`returns` may legitimately be None)."""

    returns: Any


@dataclass
class ToolMocks:
    """Mock rules per tool name, in the order they are tried."""

    rules: dict[str, list[MockRule]] = field(default_factory=dict)

    @classmethod
    def parse(cls, data: Any, source: str = "tool_mocks.json") -> ToolMocks:
        """Read the JSON shape; bad entries raise `InputError` naming `source` and the key."""
        if data is None:
            return cls()
        if not isinstance(data, dict):
            found = type(data).__name__
            raise InputError.at(
                source, "", f"expected an object of tool name → mock ({MOCK_SHAPES}), found {found}"
            )
        problems: list[Problem] = []
        rules: dict[str, list[MockRule]] = {}
        for name, spec in data.items():
            rules[str(name)] = _parse_tool(str(name), spec, source, problems)
        if problems:
            raise InputError(problems=problems)
        return cls(rules)

    def then(self, fallback: ToolMocks) -> ToolMocks:
        """These rules first, then `fallback`'s (task mocks before the agent's)."""
        names = [*self.rules, *(n for n in fallback.rules if n not in self.rules)]
        return ToolMocks({n: [*self.rules.get(n, []), *fallback.rules.get(n, [])] for n in names})

    def __contains__(self, name: str) -> bool:
        return name in self.rules

    def lookup(self, name: str, arguments: dict[str, Any]) -> MockHit | None:
        """The first matching rule's value, or None when no rule for `name` matches."""
        for rule in self.rules.get(name, []):
            if rule.matches(arguments):
                return MockHit(rule.returns)
        return None


def _parse_tool(name: str, spec: Any, source: str, problems: list[Problem]) -> list[MockRule]:
    rules, found = mock_rules(name, spec)
    problems += [Problem(source, format_path(path), message) for path, message in found]
    return [MockRule(returns=rule["return"], when=rule.get("when")) for rule in rules]


def _subset(expected: Any, actual: Any) -> bool:
    if isinstance(expected, dict):
        return isinstance(actual, dict) and all(
            key in actual and _subset(value, actual[key]) for key, value in expected.items()
        )
    if expected == actual:
        return True
    scalar = (str, int, float, bool)
    if isinstance(expected, scalar) and isinstance(actual, scalar):
        return _text(expected) == _text(actual)
    return False


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)
