"""`.agent_configs/<id>/`: loading, the composed system prompt, and writing it back."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from agentopt.core.atomic import write_staged_files
from agentopt.core.errors import ConfigError
from agentopt.core.files.agent_config import (
    compose_system_prompt,
    load_agent_config,
    write_agent_config,
)
from agentopt.core.files.agent_definition import AgentDefinition, McpServer, Skill

TOOL = {
    "type": "function",
    "function": {
        "name": "get_order",
        "description": "Look up an order.",
        "parameters": {"type": "object", "properties": {"id": {"type": "string"}}},
    },
}


def _config(tmp_path: Path, metadata: str, **files: str) -> Path:
    folder = tmp_path / ".agent_configs" / "baseline"
    folder.mkdir(parents=True)
    (folder / "metadata.yaml").write_text(metadata, encoding="utf-8")
    for rel, text in files.items():
        path = folder / rel.replace("__", "/")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return folder / "metadata.yaml"


def test_full_config_loads(tmp_path: Path) -> None:
    meta = _config(
        tmp_path,
        "model: gpt-4.1-mini\ninstruction_file: instructions.md\ntools_file: tools.json\n"
        "skill_dir: skills\ntemperature: 0.2\nmax_tool_rounds: 4\nmax_tokens: 64\n",
        **{
            "instructions.md": "Be helpful.\n\n",
            "tools.json": json.dumps([TOOL]),
            "tool_mocks.json": json.dumps({"get_order": [{"when": {"id": "1"}, "return": "ok"}]}),
            "skills__returns__SKILL.md": (
                "---\ndescription: Returns policy.\n---\nReturn within 30 days.\n"
            ),
            "skills__shipping.md": (
                "---\nname: ship\ndescription: Shipping.\n---\n\nShips in 3 days."
            ),
            "skills__empty.md": "  \n",
            "skills__plain.md": "No front matter here.",
        },
    )
    defn, warnings = load_agent_config(meta)
    assert warnings == []
    assert defn.model == "gpt-4.1-mini" and defn.temperature == 0.2 and defn.max_tool_rounds == 4
    assert defn.max_tokens == 64
    assert defn.instructions == "Be helpful."
    assert defn.tools == [TOOL]
    assert defn.tool_mocks == {"get_order": [{"when": {"id": "1"}, "return": "ok"}]}
    assert [(s.name, s.description, s.body) for s in defn.skills] == [
        ("plain", "", "No front matter here."),
        ("returns", "Returns policy.", "Return within 30 days."),
        ("ship", "Shipping.", "Ships in 3 days."),
    ]
    assert defn.folder == tmp_path and defn.config_id == "baseline"
    assert defn.name == tmp_path.name


def test_paths_are_relative_to_the_metadata_file_and_tool_file_alias(tmp_path: Path) -> None:
    meta = _config(
        tmp_path,
        "instruction_file: prompts/sys.md\ntool_file: defs/tools.json\n",
        **{"prompts__sys.md": "Hi.", "defs__tools.json": json.dumps([TOOL])},
    )
    (meta.parent / "defs" / "tool_mocks.json").write_text(
        '{"get_order": {"return": 1}}', encoding="utf-8"
    )
    defn, _ = load_agent_config(meta.parent, name="support")
    assert defn.name == "support" and defn.instructions == "Hi." and defn.tools == [TOOL]
    assert defn.tool_mocks == {"get_order": [{"return": 1}]}  # beside tools.json; rule wrapped


DOCUMENTED_MOCKS = {
    # docs/file-formats.md "tool_mocks.json", plus a plain object as the canned answer
    "get_order_status": [
        {"when": {"order_id": "1001"}, "return": {"order_id": "1001", "status": "shipped"}},
        {"return": {"error": "order not found"}},
    ],
    "get_time": "12:00",
    "get_weather": {"city": "Oslo", "sky": "clear"},
    "get_rate": {"when": {"currency": "EUR"}, "return": 1.1},
}


def test_documented_mock_shapes_load_and_answer_the_same_in_the_tool_loop(tmp_path: Path) -> None:
    from agentopt.agents.tools.mocks import ToolMocks

    meta = _config(tmp_path, "model: m\n", **{"tool_mocks.json": json.dumps(DOCUMENTED_MOCKS)})
    defn, warnings = load_agent_config(meta)
    assert warnings == []
    assert defn.tool_mocks is not None
    mocks = ToolMocks.parse(defn.tool_mocks)  # what the agent runs with
    direct = ToolMocks.parse(DOCUMENTED_MOCKS)  # a task's own tool_mocks, same reading
    for parsed in (mocks, direct):
        hit = parsed.lookup("get_order_status", {"order_id": 1001})
        assert hit is not None and hit.returns == {"order_id": "1001", "status": "shipped"}
        hit = parsed.lookup("get_order_status", {"order_id": "7"})
        assert hit is not None and hit.returns == {"error": "order not found"}
        assert (h := parsed.lookup("get_time", {})) is not None and h.returns == "12:00"
        hit = parsed.lookup("get_weather", {"city": "Rome"})
        assert hit is not None and hit.returns == {"city": "Oslo", "sky": "clear"}
        assert parsed.lookup("get_rate", {"currency": "USD"}) is None


def test_a_list_answer_must_be_wrapped_and_the_message_says_how(tmp_path: Path) -> None:
    from agentopt.agents.tools.mocks import ToolMocks
    from agentopt.core.errors import InputError

    mocks = {"list_orders": [{"id": 1}, {"id": 2}]}
    meta = _config(tmp_path, "model: m\n", **{"tool_mocks.json": json.dumps(mocks)})
    with pytest.raises(ConfigError) as loaded:
        load_agent_config(meta)
    with pytest.raises(InputError) as parsed:
        ToolMocks.parse(mocks, "task 't1' tool_mocks")
    for exc in (loaded.value, parsed.value):
        text = str(exc)
        assert 'mock for tool "list_orders"' in text and "list_orders[0]" in text
        assert '{"return": [...]}' in text


def test_non_function_and_flat_tools(tmp_path: Path) -> None:
    tools = [
        {"type": "code_interpreter"},
        {"type": "function", "name": "flat", "description": "d", "parameters": {"type": "object"}},
        "bing_grounding",
    ]
    meta = _config(tmp_path, "tools_file: tools.json\n", **{"tools.json": json.dumps(tools)})
    defn, warnings = load_agent_config(meta)
    assert defn.tools == [
        {"type": "code_interpreter"},
        {
            "type": "function",
            "function": {"name": "flat", "description": "d", "parameters": {"type": "object"}},
        },
        {"type": "bing_grounding"},
    ]
    assert [w.location for w in warnings] == ["[0]", "[2]"]
    assert all("not a function tool; passed through" in w.message for w in warnings)


@pytest.mark.parametrize(
    ("metadata", "files", "file_suffix", "location", "message"),
    [
        (
            "instruction_file: nope.md\n",
            {},
            "metadata.yaml",
            "instruction_file (line 1)",
            "found nothing at",
        ),
        (
            "temperature: hot\n",
            {},
            "metadata.yaml",
            "temperature (line 1)",
            'expected a number 0–2, found "hot"',
        ),
        ("temperature: 3\n", {}, "metadata.yaml", "temperature (line 1)", "found 3"),
        (
            "max_tokens: many\n",
            {},
            "metadata.yaml",
            "max_tokens (line 1)",
            'expected an integer ≥ 1, found "many"',
        ),
        (
            "max_tool_rounds: 0\n",
            {},
            "metadata.yaml",
            "max_tool_rounds (line 1)",
            "expected an integer ≥ 1, found 0",
        ),
        (
            "skill_dir: missing\n",
            {},
            "metadata.yaml",
            "skill_dir (line 1)",
            "expected a folder of skills",
        ),
        (
            "tools_module: tools_impl.py\n",
            {},
            "metadata.yaml",
            "tools_module (line 1)",
            "expected a Python file",
        ),
        (
            "mcp_servers: [{name: fs}]\n",
            {},
            "metadata.yaml",
            "mcp_servers[0].command (line 1)",
            "expected a non-empty string",
        ),
        (
            "tools_file: t.json\n",
            {"t.json": '{"a": 1}'},
            "t.json",
            "",
            "expected a list of tools, found a mapping",
        ),
        ("tools_file: t.json\n", {"t.json": "[1,"}, "t.json", "line 1, column 4", "invalid JSON"),
        (
            "tools_file: t.json\n",
            {"t.json": json.dumps([TOOL, TOOL])},
            "t.json",
            "[1]",
            'duplicate tool name "get_order"',
        ),
        (
            "tools_file: t.json\n",
            {"t.json": '[{"type": "function", "function": {"name": "bad name"}}]'},
            "t.json",
            "[0].function.name",
            'found "bad name"',
        ),
        (
            "tools_file: t.json\n",
            {"t.json": json.dumps([TOOL]), "tool_mocks.json": '{"get_order": [{"when": {}}]}'},
            "tool_mocks.json",
            "get_order[0]",
            'mock for tool "get_order": a list holds rules {"when"?, "return"}, found a mapping; '
            'to answer every call with a list, write {"return": [...]}',
        ),
        ("- a list\n", {}, "metadata.yaml", "", "expected a mapping"),
    ],
)
def test_errors_name_file_and_key(
    tmp_path: Path, metadata, files, file_suffix, location, message
) -> None:
    meta = _config(tmp_path, metadata, **files)
    with pytest.raises(ConfigError) as info:
        load_agent_config(meta)
    assert any(
        p.file.endswith(file_suffix) and p.location == location and message in p.message
        for p in info.value.problems
    ), [str(p) for p in info.value.problems]


def test_unknown_metadata_key_warns_with_did_you_mean(tmp_path: Path) -> None:
    meta = _config(tmp_path, "modle: gpt-4.1\n")
    _defn, [warning] = load_agent_config(meta)
    assert warning.location == "modle (line 1)" and 'did you mean "model"?' in warning.message


def test_mcp_servers_and_tools_module(tmp_path: Path) -> None:
    meta = _config(
        tmp_path,
        "mcp_servers:\n  - {name: fs, command: [npx, server-fs], args: [/tmp], env: {DEBUG: 1}}\n",
        **{"tools.py": "def get_order(id):\n    return id\n"},
    )
    defn, _ = load_agent_config(meta)
    assert defn.mcp_servers == [
        McpServer(name="fs", command="npx", args=["server-fs", "/tmp"], env={"DEBUG": "1"})
    ]
    assert defn.tools_module == str(meta.parent / "tools.py")


def test_compose_system_prompt_exactly() -> None:
    defn = AgentDefinition(name="a", instructions="Be brief.")
    assert compose_system_prompt(defn) == "Be brief."
    defn.skills = [
        Skill(name="returns", description="Returns policy.", body="..."),
        Skill(name="faq"),
    ]
    assert compose_system_prompt(defn) == (
        "Be brief.\n\n## Available Skills\n- **returns**: Returns policy.\n- **faq**"
    )


def test_write_then_load_round_trips(tmp_path: Path) -> None:
    defn = AgentDefinition(
        name="support",
        folder=tmp_path,
        model="gpt-4.1-mini",
        instructions="Be helpful.\nAlways.",
        temperature=0.3,
        max_tokens=80,
        tools=[TOOL],
        tool_mocks={"get_order": [{"return": "ok"}]},
        skills=[
            Skill(name="returns policy", description="How returns work.", body="Within 30 days.")
        ],
        mcp_servers=[McpServer(name="fs", command="npx", args=["x"])],
        max_tool_rounds=5,
    )
    folder = tmp_path / ".agent_configs" / "cand_02"
    assert write_agent_config(folder, defn) is None
    assert (folder / "skills" / "returns-policy" / "SKILL.md").is_file()
    loaded, warnings = load_agent_config(folder, name="support")
    assert warnings == []
    same = (
        "model",
        "instructions",
        "temperature",
        "max_tokens",
        "tools",
        "tool_mocks",
        "mcp_servers",
        "max_tool_rounds",
    )
    assert {k: getattr(loaded, k) for k in same} == {k: getattr(defn, k) for k in same}
    assert [(s.name, s.description, s.body) for s in loaded.skills] == [
        ("returns policy", "How returns work.", "Within 30 days.")
    ]
    assert loaded.config_id == "cand_02"
    assert compose_system_prompt(loaded) == compose_system_prompt(defn)


def test_write_refuses_then_backs_up_existing_folder(tmp_path: Path) -> None:
    folder = tmp_path / ".agent_configs" / "baseline"
    write_agent_config(folder, AgentDefinition(name="a", instructions="v1"))
    with pytest.raises(ConfigError, match="already exists"):
        write_agent_config(folder, AgentDefinition(name="a", instructions="v2"))
    saved = write_agent_config(folder, AgentDefinition(name="a", instructions="v2"), overwrite=True)
    assert saved is not None and saved.name.startswith("baseline.")
    assert (saved / "instructions.md").read_text(encoding="utf-8") == "v1\n"
    assert load_agent_config(folder)[0].instructions == "v2"
    assert not list(folder.parent.glob(".baseline.*"))  # no temp folder left behind


def test_a_write_that_fails_midway_leaves_the_old_folder_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The files are written into a staging folder, each fsynced before the folder is renamed
    into place; a failure on any file leaves the previous configuration as it was and no
    staging folder behind."""
    folder = tmp_path / ".agent_configs" / "baseline"
    write_agent_config(folder, AgentDefinition(name="a", instructions="v1", tools=[TOOL]))
    synced: list[int] = []
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        synced.append(fd)
        if len(synced) == 2:  # the second file (tools.json)
            raise OSError(28, "No space left on device")
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    with pytest.raises(OSError, match="No space left"):
        write_agent_config(
            folder, AgentDefinition(name="a", instructions="v2", tools=[TOOL]), overwrite=True
        )
    monkeypatch.setattr(os, "fsync", real_fsync)
    assert load_agent_config(folder)[0].instructions == "v1"
    assert [p.name for p in folder.parent.iterdir()] == ["baseline"]


@pytest.mark.parametrize("name", ["../escaped.md", "skills/../../escaped.md", "/tmp/escaped.md"])
def test_a_staged_file_never_lands_outside_its_folder(tmp_path: Path, name: str) -> None:
    staging = tmp_path / "staging"
    staging.mkdir()
    with pytest.raises(ValueError, match="not a path inside"):
        write_staged_files(staging, {"instructions.md": b"ok\n", name: b"x"})
    assert not (tmp_path / "escaped.md").exists()
