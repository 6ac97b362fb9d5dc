"""Detection of real azd / Foundry projects, copied byte for byte into tests/fixtures/real/
(each folder's SOURCE.md names the repository, path, commit and licence).

One row per fixture: the fields a user sees in the "Detected eval target" block and the ones a
run uses (kind, name, instructions, tools, model, start command), asserted as azd resolves
them (the azure.ai.agents extension's `LoadAgentDefinition`)."""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from rich.console import Console

from agentopt.cli.target_block import render_target_block, target_rows
from agentopt.core.errors import ConfigError
from agentopt.workflows.detect import DetectedTarget, detect_target

REAL = Path(__file__).resolve().parent.parent / "fixtures" / "real"
PYTHON = "python3" if shutil.which("python3") else "python"
NO_START = "set `startupCommand: python main.py`"
DOTNET = ["dotnet", "run"] if shutil.which("dotnet") else "the .NET SDK (`dotnet`)"


@dataclass
class Row:
    fixture: str
    kind: str
    name: str
    model: str | None
    instructions: str | None = None
    """The start of the instructions (None: the definition has none)."""
    tools: list[str] = field(default_factory=list)
    """Function tool names, or `type:<t>` for a passed-through tool."""
    service: str | None = None
    agent: str | None = None
    target: str | None = None
    start: list[str] | str | None = None
    warning: str | None = None
    sources: dict[str, str] = field(default_factory=dict)
    protocols: list[str] = field(default_factory=list)
    """The declared hosted protocols, as read."""
    plays: str | None = None
    """What the target block says of the protocol: the one played, or the start of why not."""


ROWS = [
    Row(
        "fs-prompt-01-basic", "prompt", "prompt-agent-basic", "gpt-5.4-mini",
        "You are a helpful, friendly assistant.", service="prompt-agent-basic", target="local",
        warning="agent definition read from agent.yaml",
        sources={"kind": "agent.yaml", "definition.instructions": "instructions.md"},
    ),
    Row(
        "fs-prompt-02-tools", "prompt", "prompt-agent-tools", "gpt-5.4-mini",
        "You are a helpful assistant. When the user asks about the weather",
        ["get_weather", "convert_currency"], service="prompt-agent-tools", target="local",
        warning="agent.yaml and azure.yaml (inline) disagree on the tools",
        sources={"kind": "azure.yaml (inline)"},
    ),
    Row(
        "fs-prompt-03-mcp-tools", "prompt", "prompt-agent-mcp-tools", "gpt-5.4-mini",
        "You are a documentation assistant.", ["type:mcp"], service="prompt-agent-mcp-tools",
        target="local", warning='tool type "mcp" is not a function tool',
    ),
    Row(
        "fs-prompt-06-skills", "prompt", "prompt-agent-skills", "gpt-5.4-mini",
        "You are a helpful travel assistant.", service="prompt-agent-skills", target="local",
        sources={"definition.instructions": "instructions.md"},
    ),
    Row(
        "azd-testdata-prompt-full", "prompt", "full-prompt-agent", "gpt-4o",
        "You are a helpful testing assistant.", ["type:web_search", "get_weather"],
        target="local", sources={"kind": "agent.yaml"},
    ),
    Row(
        "azd-testdata-mcp-tools", "prompt", "mcp-tools-agent", "gpt-4o",
        "You have access to GitHub via MCP", ["type:mcp", "type:code_interpreter"],
        target="local",
    ),
    Row("azd-testdata-hosted", "hosted", "hosted-test-agent", None, target="hosted",
        start=NO_START, protocols=["responses", "invocations"], plays="responses"),
    Row("azd-simple", "hosted", "assistant", "gpt-4o-mini", service="assistant",
        target="hosted", start=NO_START, sources={"definition.model": "azure.yaml deployments"},
        plays="responses"),
    Row("azd-complex", "hosted", "researcher", "gpt-4o", service="researcher", agent="researcher",
        target="hosted", start="python main.py",
        sources={"startup_command": "", "definition.startup_command": "azure.yaml (inline)"},
        protocols=["a2a"], plays="hosted agent 'researcher' declares only the a2a protocol"),
    Row("azd-complex", "hosted", "writer", "gpt-4o", service="writer", agent="writer",
        target="hosted", start=NO_START, warning='instructions file "./skills/summarize.md"',
        plays="responses"),
    Row(
        "fs-hosted-py-egress-controls", "hosted", "agent-framework-egress-controls-responses",
        "gpt-5.4-mini", service="agent-framework-egress-controls-responses", target="hosted",
        start=[PYTHON, "main.py"],
        sources={"startup_command": "derived from codeConfiguration.entryPoint (python_3_13)"},
        protocols=["responses"], plays="responses",
    ),
    Row(
        "fs-hosted-cs-hello-world", "hosted", "hello-world-dotnet-agent-framework",
        "gpt-5.4-mini", service="hello-world-dotnet-agent-framework", target="hosted",
        start=DOTNET, protocols=["responses"], plays="responses",
    ),
    Row("fs-hosted-py-echo", "hosted", "echo-agent", None, target="hosted", start=NO_START,
        protocols=["responses"], plays="responses"),
    Row("fs-hosted-py-calculator", "hosted", "CalculatorAgentLG", "gpt-4o-mini",
        target="hosted", start=NO_START, protocols=["responses"], plays="responses"),
    Row("fs-hosted-cs-agent-with-tools", "hosted", "AgentWithTools", "gpt-4o-mini",
        target="hosted", start=NO_START, protocols=["responses"], plays="responses"),
    # The invocations, activity and C# layouts the foundry-samples added in 2026.
    Row(
        "fs-hosted-py-invocations-chat", "hosted", "state-store-chat-python-invocations",
        "gpt-5.4-mini", service="state-store-chat-python-invocations", target="hosted",
        start=[PYTHON, "main.py"], protocols=["invocations"], plays="invocations",
    ),
    Row(
        "fs-hosted-py-invocations-guardrail", "hosted",
        "agent-framework-content-safety-guardrail-invocations", "gpt-5.4-mini",
        service="agent-framework-content-safety-guardrail-invocations", target="hosted",
        start=[PYTHON, "main.py"], protocols=["invocations"], plays="invocations",
    ),
    Row(
        "fs-hosted-py-activity-autopilot", "hosted", "autopilot", None, service="autopilot",
        target="hosted", start=NO_START, protocols=["activity"],
        plays="hosted agent 'autopilot' declares only the activity protocol",
    ),
    Row(
        "fs-hosted-cs-invocations-echo", "hosted", "invocations-echo-agent", None,
        service="invocations-echo-agent", target="hosted", start=DOTNET,
        protocols=["invocations"], plays="invocations",
    ),
]  # fmt: skip


def copy_fixture(name: str, tmp_path: Path) -> Path:
    """The fixture as a repository of its own (detection stops at a `.git` folder)."""
    root = tmp_path / name
    shutil.copytree(REAL / name, root)
    (root / ".git").mkdir()
    return root


def tool_names(found: DetectedTarget) -> list[str]:
    assert found.definition is not None
    return [
        t["function"]["name"] if t.get("type") == "function" else f"type:{t.get('type')}"
        for t in found.definition.tools
    ]


AZD_EVAL = "azd-eval-"
"""azd evaluations-extension configurations (tests/azd_eval), not agent definitions: no row."""


def test_every_fixture_has_its_source_and_a_row() -> None:
    everything = sorted(p.name for p in REAL.iterdir() if p.is_dir())
    folders = [f for f in everything if not f.startswith(AZD_EVAL)]
    assert len(folders) >= 10
    assert {r.fixture for r in ROWS} == set(folders)
    for folder in everything:
        source = (REAL / folder / "SOURCE.md").read_text(encoding="utf-8")
        for needed in ("Repository:", "Path:", "Licence:", " at `"):
            assert needed in source, f"{folder}/SOURCE.md lacks {needed}"


@pytest.mark.parametrize("row", ROWS, ids=lambda r: f"{r.fixture}-{r.agent or ''}")
def test_real_fixture_is_detected(row: Row, tmp_path: Path) -> None:
    root = copy_fixture(row.fixture, tmp_path)
    found = detect_target(root, agent=row.agent, no_prompt=True, environ={})
    defn = found.definition
    assert defn is not None
    assert (found.service, found.kind, found.agent_name) == (row.service, row.kind, row.name)
    assert defn.model == row.model
    if row.instructions is None:
        assert not defn.instructions
    else:
        assert (defn.instructions or "").startswith(row.instructions), defn.instructions
    assert tool_names(found) == row.tools
    assert found.target == row.target
    if isinstance(row.start, list):
        assert defn.startup_command == row.start
    elif row.start is not None and row.start.startswith(("set ", "the ")):
        assert not defn.startup_command
        assert row.start in found.sources["startup_command"]  # the key to add, in the block
    else:
        assert defn.startup_command == row.start
    if row.warning:
        assert any(row.warning in w.message for w in found.warnings), found.warnings
    for key, value in row.sources.items():
        assert found.sources.get(key, "") == value, (key, found.sources)
    assert defn.protocols == row.protocols
    protocol = {r.label: r for r in target_rows(found, root)}.get("Protocol")
    if row.plays is None:
        assert protocol is None
    elif row.plays in ("responses", "invocations"):
        assert protocol is not None and protocol.value == row.plays
    else:
        assert protocol is not None and protocol.value is None
        assert protocol.source.startswith(row.plays), protocol.source


def test_agent_schema_parameters_become_json_schema(tmp_path: Path) -> None:
    found = detect_target(copy_fixture("azd-testdata-prompt-full", tmp_path), environ={})
    assert found.definition is not None
    [fn] = [t["function"] for t in found.definition.tools if t.get("type") == "function"]
    assert fn["parameters"] == {
        "type": "object",
        "properties": {
            "location": {"type": "string", "description": "The city name"},
            "unit": {
                "type": "string",
                "description": "Temperature unit",
                "enum": ["celsius", "fahrenheit"],
                "default": "celsius",
            },
        },
        "required": ["location"],
    }
    assert found.definition.temperature == 0.8


def test_inline_definition_wins_and_its_tool_schema_is_used(tmp_path: Path) -> None:
    found = detect_target(copy_fixture("fs-prompt-02-tools", tmp_path), environ={})
    assert found.definition is not None
    weather = found.definition.tools[0]["function"]
    assert weather["parameters"]["required"] == ["city", "unit"]  # azure.yaml's, not agent.yaml's
    assert weather["strict"] is True


def test_azure_env_values_show_with_their_sources(tmp_path: Path) -> None:
    root = copy_fixture("fs-hosted-py-egress-controls", tmp_path)
    env = root / ".azure" / "staging"
    env.mkdir(parents=True)
    (env / ".env").write_text(
        'AGENT_AGENT_FRAMEWORK_EGRESS_CONTROLS_RESPONSES_NAME="egress-agent"\n'
        'AGENT_AGENT_FRAMEWORK_EGRESS_CONTROLS_RESPONSES_VERSION="4"\n'
        'AZURE_AI_PROJECT_ID="/subscriptions/s1/resourceGroups/rg/providers/'
        'Microsoft.CognitiveServices/accounts/acct/projects/proj"\n'
        'AZURE_AI_MODEL_DEPLOYMENT_NAME="gpt-5.4-mini"\n',
        encoding="utf-8",
    )
    found = detect_target(root, environment="staging", environ={})
    rows = {r.label: (r.value, r.source) for r in target_rows(found, root)}
    suffix = "AGENT_AGENT_FRAMEWORK_EGRESS_CONTROLS_RESPONSES_"
    assert rows["Agent"] == ("egress-agent", suffix + "NAME")
    assert rows["Version"] == ("4", suffix + "VERSION")
    assert rows["Endpoint"] == (
        "https://acct.services.ai.azure.com/api/projects/proj",
        "AZURE_AI_PROJECT_ID",
    )
    assert rows["Environment"][0] == "staging (.azure/staging/.env)"
    assert found.foundry is not None and found.foundry.model_deployment.value == "gpt-5.4-mini"
    console = Console(record=True, width=200, color_system=None)
    console.print(render_target_block(found, cwd=root))
    text = console.export_text()
    assert f"Start command:  {PYTHON} main.py  (derived from codeConfiguration.entryPoint" in text
    # Without -e, no environment is selected: nothing deployed is shown.
    assert detect_target(root, environ={}).deployed_name is None
    with pytest.raises(ConfigError, match=r'no azd environment named "prod".*staging'):
        detect_target(root, environment="prod", environ={})


def test_skills_folder_fills_the_definition_and_the_generation_prompt(tmp_path: Path) -> None:
    """06-skills attaches every `skills/<name>/SKILL.md` (its own SKILL.md is not in the copy
    we could read, so this test writes one of its own beside the real files)."""
    from agentopt.workflows.generate.prompts import generate_environment
    from agentopt.workflows.generate.suite import SuiteRequest, agent_context
    from agentopt.workflows.init import GenerateOptions, plan_suite

    root = copy_fixture("fs-prompt-06-skills", tmp_path)
    skill = root / "skills" / "travel-guide" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text(
        "---\nname: travel-guide\ndescription: Day-by-day city guides.\n---\nPlan by day.\n",
        encoding="utf-8",
    )
    found = detect_target(root, environ={})
    assert found.definition is not None
    assert [s.name for s in found.definition.skills] == ["travel-guide"]
    assert found.sources["definition.skills"] == "skills/"
    plan = plan_suite(GenerateOptions(cwd=root), found, asker=None)
    assert isinstance(plan, SuiteRequest)
    assert "It can load these skills: travel-guide." in plan.instruction
    about = generate_environment().get_template("_agent.j2")  # included by every prompt
    text = about.render(**agent_context(plan).model_dump())
    assert "- travel-guide: Day-by-day city guides." in text
