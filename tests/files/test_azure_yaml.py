"""azure.yaml: agent services, the three definition sources, `$ref` includes, and the real
azd / Foundry reference files."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from agentopt.core.errors import ConfigError
from agentopt.core.files.azure_yaml import load_azure_yaml, read_service_agent
from agentopt.core.files.yaml_refs import resolve_refs


def _project(tmp_path: Path, azure_yaml: str, **files: str) -> Path:
    (tmp_path / "azure.yaml").write_text(azure_yaml, encoding="utf-8")
    for rel, text in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return tmp_path / "azure.yaml"


# ---- reference fixtures ------------------------------------------------------------------
def test_reference_simple(reference: Path) -> None:
    azure = load_azure_yaml(reference / "azd/simple.azure.yaml")
    assert azure.name == "foundry-simple"
    assert azure.agent_services == ["assistant"]
    assert azure.project_dir("assistant") == (reference / "azd/agents/assistant").resolve()
    defn, warnings = read_service_agent(azure, "assistant")
    assert (defn.name, defn.kind, defn.instructions) == ("assistant", "hosted", None)
    assert warnings == []


def test_reference_complex_lists_agents_and_reports_missing_ref(reference: Path) -> None:
    azure = load_azure_yaml(reference / "azd/complex.azure.yaml")
    assert azure.agent_services == ["researcher", "writer", "triage"]
    researcher, _ = read_service_agent(azure, "researcher")
    assert researcher.kind == "hosted" and researcher.startup_command == "python main.py"
    # writer names the `summarize` skill service, whose instruction file is illustrative only:
    writer, warnings = read_service_agent(azure, "writer")
    assert writer.skills == [] and any("summarize.md" in w.message for w in warnings)
    # triage is defined by a $ref file that the fixture does not ship: a clear error.
    with pytest.raises(ConfigError) as info:
        read_service_agent(azure, "triage")
    [problem] = info.value.problems
    assert problem.location == "services.triage.$ref"
    assert '$ref file "./agents/triage.yaml" not found' in problem.message


@pytest.mark.parametrize(
    ("ref", "content"),
    [("./notes.txt", "root:x:0:0:root:/root:/bin/bash\n"), ("./list.yaml", "- a\n- b\n")],
)
def test_a_service_whose_ref_is_not_a_mapping_is_a_clear_error(
    tmp_path: Path, ref: str, content: str
) -> None:
    """Found by the loader fuzz (seed 1081528207: `$ref: ../../../../etc/passwd`): a service
    whose `$ref` file holds text or a list is named, not an AttributeError."""
    path = _project(
        tmp_path, f"name: shop\nservices:\n  support:\n    $ref: {ref}\n", **{ref[2:]: content}
    )
    azure = load_azure_yaml(path)
    with pytest.raises(ConfigError) as info:
        read_service_agent(azure, "support")
    [problem] = info.value.problems
    assert problem.location == "services.support.$ref"
    assert "expected a file holding a mapping" in problem.message


def test_reference_complex_with_its_ref_files_present(reference: Path, tmp_path: Path) -> None:
    shutil.copy(reference / "azd/complex.azure.yaml", tmp_path / "azure.yaml")
    (tmp_path / "agents").mkdir()
    (tmp_path / "agents/triage.yaml").write_text(
        "kind: prompt\nname: triage-bot\nmodel: gpt-4.1-mini\ninstructions: ../prompts/triage.md\n",
        encoding="utf-8",
    )
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts/triage.md").write_text("Route tickets.\n", encoding="utf-8")
    (tmp_path / "skills").mkdir()
    (tmp_path / "skills/summarize.md").write_text("Summarize in 3 bullets.", encoding="utf-8")
    azure = load_azure_yaml(tmp_path / "azure.yaml")
    triage, _ = read_service_agent(azure, "triage")
    assert (triage.name, triage.kind, triage.model) == ("triage-bot", "prompt", "gpt-4.1-mini")
    assert triage.instructions == "Route tickets."  # relative to the file holding the $ref'd key
    writer, warnings = read_service_agent(azure, "writer")
    assert [(s.name, s.description, s.body) for s in writer.skills] == [
        ("summarize", "Summarize long documents.", "Summarize in 3 bullets.")
    ]
    assert warnings == []


def test_reference_hosted_agent_yaml_under_template(reference: Path, tmp_path: Path) -> None:
    _project(tmp_path, "services:\n  h:\n    host: azure.ai.agent\n    project: svc\n")
    (tmp_path / "svc").mkdir()
    shutil.copy(reference / "azd/hosted-agent.yaml", tmp_path / "svc/agent.yaml")
    defn, [warning] = read_service_agent(load_azure_yaml(tmp_path / "azure.yaml"), "h")
    assert (defn.name, defn.kind) == ("hosted-test-agent", "hosted")
    assert "read from agent.yaml" in warning.message


@pytest.mark.parametrize(
    ("sample", "name", "model"),
    [
        (
            "samples_python_hosted-agents_agent-framework_web-search-agent_agent.yaml",
            "WebSearchAgent",
            "gpt-4o-mini",
        ),
        (
            "samples_python_hosted-agents_custom_system-utility-agent_agent.yaml",
            "SystemUtilityAgent",
            "gpt-5",
        ),
        (
            "samples_python_hosted-agents_langgraph_calculator-agent_agent.yaml",
            "CalculatorAgentLG",
            "gpt-4o-mini",
        ),
    ],
)
def test_reference_foundry_sample_agent_yaml(
    reference: Path, tmp_path: Path, sample: str, name: str, model: str
) -> None:
    _project(tmp_path, "services:\n  s:\n    host: azure.ai.agent\n")
    shutil.copy(reference / "azd/foundry-samples" / sample, tmp_path / "agent.yml")
    defn, _ = read_service_agent(load_azure_yaml(tmp_path / "azure.yaml"), "s")
    assert (defn.name, defn.kind, defn.model) == (name, "hosted", model)


def test_reference_azure_yaml_without_services(reference: Path) -> None:
    azure = load_azure_yaml(reference / "azd/foundry-samples/samples_csharp_FoundryA365_azure.yaml")
    assert azure.services == {} and azure.agent_services == []


# ---- the three definition sources ---------------------------------------------------------
def test_inline_prompt_agent_with_instruction_file_and_tools(tmp_path: Path) -> None:
    path = _project(
        tmp_path,
        """\
services:
  web: {host: containerapp}
  support:
    host: azure.ai.agent
    kind: prompt
    model: {id: gpt-4.1-mini, options: {temperature: 0.1}}
    instructions: prompts/support.md
    tools:
      - {type: function, name: get_order, description: Look up., parameters: {type: object}}
      - code_interpreter
""",
        **{"prompts/support.md": "Help customers.\n"},
    )
    azure = load_azure_yaml(path)
    assert azure.agent_services == ["support"]
    defn, warnings = read_service_agent(azure, "support")
    assert (defn.name, defn.kind, defn.model, defn.temperature) == (
        "support",
        "prompt",
        "gpt-4.1-mini",
        0.1,
    )
    assert defn.instructions == "Help customers."
    assert defn.tools[0]["function"]["name"] == "get_order"
    assert defn.tools[1] == {"type": "code_interpreter"}
    assert len(warnings) == 1 and "not a function tool" in warnings[0].message


@pytest.mark.parametrize("kind", ["hosted", "workflow", "prompt-voice"])
def test_hosted_like_kinds(tmp_path: Path, kind: str) -> None:
    path = _project(tmp_path, f"services:\n  a:\n    host: azure.ai.agent\n    kind: {kind}\n")
    assert read_service_agent(load_azure_yaml(path), "a")[0].kind == "hosted"


def test_inline_keys_win_over_config_block_and_agent_yaml(tmp_path: Path) -> None:
    path = _project(
        tmp_path,
        "services:\n  a:\n    host: azure.ai.agent\n    kind: prompt\n    instructions: inline\n"
        "    config: {kind: prompt, instructions: from config}\n",
        **{"agent.yaml": "kind: prompt\ninstructions: from agent.yaml\n"},
    )
    assert read_service_agent(load_azure_yaml(path), "a")[0].instructions == "inline"


def test_deprecated_config_block_warns_once(tmp_path: Path) -> None:
    path = _project(
        tmp_path,
        "services:\n  a:\n    host: azure.ai.agent\n"
        "    config:\n      kind: prompt\n      instructions: Be kind.\n",
        **{"agent.yaml": "kind: prompt\ninstructions: from agent.yaml\n"},
    )
    defn, warnings = read_service_agent(load_azure_yaml(path), "a")
    assert defn.instructions == "Be kind."
    [deprecated] = [w for w in warnings if "deprecated" in w.message]
    assert deprecated.location == "services.a.config"
    # agent.yaml disagrees with the config block: said once, and the config block wins.
    [conflict] = [w for w in warnings if "disagree" in w.message]
    assert "agent.yaml and azure.yaml (config) disagree on the instructions" in conflict.message


def test_top_level_agent_yaml(tmp_path: Path) -> None:
    path = _project(
        tmp_path,
        "services:\n  a:\n    host: azure.ai.agent\n",
        **{
            "agent.yaml": (
                "name: helper\nkind: prompt\nmodel: gpt-4.1\n"
                "instructions: |\n  Line one.\n  Line two.\n"
            )
        },
    )
    defn, _ = read_service_agent(load_azure_yaml(path), "a")
    assert (defn.name, defn.model, defn.instructions) == (
        "helper",
        "gpt-4.1",
        "Line one.\nLine two.",
    )


def test_service_without_any_definition_warns(tmp_path: Path) -> None:
    path = _project(tmp_path, "services:\n  a:\n    host: azure.ai.agent\n")
    defn, [warning] = read_service_agent(load_azure_yaml(path), "a")
    assert defn.name == "a" and defn.instructions is None
    assert "no agent definition" in warning.message


@pytest.mark.parametrize(
    ("azure_yaml", "location", "message"),
    [
        ("services: [a]\n", "services (line 1)", "expected a mapping of service name"),
        ("services:\n  a: 3\n", "services.a (line 2)", "expected a mapping with host"),
        (
            "services:\n  a: {host: azure.ai.agent, kind: robot}\n",
            "services.a.kind",
            'found "robot"',
        ),
        (
            "services:\n  a: {host: azure.ai.agent, kind: prompt, instructions: missing.md}\n",
            "services.a.instructions",
            'expected the instructions file "missing.md"',
        ),
        (
            "services:\n  a: {host: azure.ai.agent, kind: prompt, instructions: [x]}\n",
            "services.a.instructions",
            "expected text or a path",
        ),
    ],
)
def test_errors(tmp_path: Path, azure_yaml: str, location: str, message: str) -> None:
    path = _project(tmp_path, azure_yaml)
    with pytest.raises(ConfigError) as info:
        read_service_agent(load_azure_yaml(path), "a")
    assert any(p.location == location and message in p.message for p in info.value.problems), [
        str(p) for p in info.value.problems
    ]


# ---- $ref -----------------------------------------------------------------------------------
def test_ref_resolution_is_recursive_relative_and_siblings_win(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a/b").mkdir()
    (tmp_path / "a/one.yaml").write_text(
        "x: 1\ny: {$ref: b/two.yaml}\nz: from-one\n", encoding="utf-8"
    )
    (tmp_path / "a/b/two.yaml").write_text("- 2\n- {$ref: three.json}\n", encoding="utf-8")
    (tmp_path / "a/b/three.json").write_text('{"deep": true}', encoding="utf-8")
    holder = tmp_path / "main.yaml"
    data = resolve_refs({"top": {"$ref": "a/one.yaml", "z": "sibling"}}, holder)
    top = data["top"]
    assert top["x"] == 1 and top["z"] == "sibling"
    assert top["y"][0] == 2 and top["y"][1]["deep"] is True


def test_ref_cycle_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text("$ref: b.yaml\n", encoding="utf-8")
    (tmp_path / "b.yaml").write_text("inner: {$ref: a.yaml}\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"\$ref cycle: main.yaml → a.yaml → b.yaml → a.yaml"):
        resolve_refs({"$ref": "a.yaml"}, tmp_path / "main.yaml")


def test_ref_in_included_file_names_that_file(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text("k:\n  $ref: gone.yaml\n", encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        resolve_refs({"svc": {"$ref": "a.yaml"}}, tmp_path / "main.yaml")
    [p] = info.value.problems
    assert p.file.endswith("a.yaml") and p.location == "k.$ref" and "gone.yaml" in p.message


def test_broken_ref_in_one_service_does_not_stop_another(tmp_path: Path) -> None:
    path = _project(
        tmp_path,
        "services:\n  good: {host: azure.ai.agent, kind: prompt, instructions: Hi.}\n"
        "  bad: {host: azure.ai.agent, $ref: nowhere.yaml}\n",
    )
    azure = load_azure_yaml(path)
    assert azure.agent_services == ["good", "bad"]
    assert read_service_agent(azure, "good")[0].instructions == "Hi."
