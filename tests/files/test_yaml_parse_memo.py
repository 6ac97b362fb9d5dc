"""A text parsed again comes from memory, as a fresh copy its caller may change."""

from __future__ import annotations

import pytest

from agentopt.core.errors import InputError
from agentopt.core.files import yaml_ruamel
from agentopt.core.files.yaml_source import parse_yaml

TEXT = "agent:\n  name: store\nevaluators:\n  - name: tone\n    options: {mode: contains}\n"


def test_a_second_parse_is_a_copy_the_first_callers_changes_do_not_reach(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    first, lines = parse_yaml(TEXT, "memo-a/eval.yaml")
    first["evaluators"][0]["options"]["mode"] = "changed"
    lines.move(("evaluators",), ("graders",))
    calls: list[str] = []
    monkeypatch.setattr(yaml_ruamel, "parse_checked", lambda *a: calls.append("parsed"))
    second, lines2 = parse_yaml(TEXT, "memo-a/eval.yaml")
    assert calls == []
    assert second["evaluators"][0]["options"]["mode"] == "contains"
    assert lines2.line(("evaluators", 0, "name")) == 4
    assert lines2.line(("graders", 0, "name")) is None


def test_a_broken_text_fails_with_its_file_each_time_it_is_parsed() -> None:
    for _ in range(2):
        with pytest.raises(InputError) as err:
            parse_yaml("agent: [unclosed\n", "memo-b/broken.yaml")
        assert "memo-b/broken.yaml" in str(err.value)
