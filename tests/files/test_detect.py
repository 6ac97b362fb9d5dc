"""Detecting the agent under test: selection rules, sources, azd identity, target default."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rich.console import Console

from agentopt.cli.target_block import render_target_block, target_rows
from agentopt.core.errors import ConfigError
from agentopt.workflows.detect import detect_target, find_azure_yaml

TWO = """\
services:
  web: {host: containerapp}
  alpha: {host: azure.ai.agent, kind: prompt, instructions: Alpha.}
  beta: {host: azure.ai.agent, kind: hosted, startupCommand: python main.py, project: beta}
"""


def _repo(tmp_path: Path) -> Path:
    """A project folder that is its own repository root, so detection never looks above it."""
    (tmp_path / ".git").mkdir()
    return tmp_path


def _write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_single_agent_service_is_picked_with_baseline_and_identity(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    _write(
        root,
        "azure.yaml",
        "services:\n  support-agent: {host: azure.ai.agent, kind: prompt, model: gpt-4.1}\n",
    )
    _write(root, ".agent_configs/baseline/metadata.yaml", "model: gpt-4.1-mini\n")
    _write(root, ".agent_configs/baseline/instructions.md", "Help.\n")
    _write(root, ".azure/config.json", json.dumps({"defaultEnvironment": "dev"}))
    _write(
        root,
        ".azure/dev/.env",
        'AGENT_SUPPORT_AGENT_NAME="support-agent"\nAGENT_SUPPORT_AGENT_VERSION="4"\n'
        'FOUNDRY_PROJECT_ENDPOINT="https://proj"\n',
    )
    found = detect_target(root, environ={})
    assert (found.service, found.agent_name, found.kind, found.target) == (
        "support-agent",
        "support-agent",
        "prompt",
        "local",
    )
    assert found.project_dir == root.resolve() and found.eval_yaml == root.resolve() / "eval.yaml"
    assert (
        found.azure_yaml == root / "azure.yaml" or found.azure_yaml == root.resolve() / "azure.yaml"
    )
    assert found.baseline_dir is not None
    assert (found.deployed_name, found.deployed_version) == ("support-agent", "4")
    assert found.project_endpoint == "https://proj"
    defn = found.definition
    assert defn is not None
    assert (defn.model, defn.instructions) == ("gpt-4.1-mini", "Help.")  # the baseline wins
    assert (defn.deployed_name, defn.deployed_version, defn.project_endpoint) == (
        "support-agent",
        "4",
        "https://proj",
    )


def test_agent_flag_picks_by_name_and_unknown_lists_names(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    _write(root, "azure.yaml", TWO)
    found = detect_target(root, agent="beta", environ={})
    assert (found.service, found.kind, found.target) == ("beta", "hosted", "hosted")
    assert found.project_dir == (root / "beta").resolve()
    assert found.eval_yaml == (root / "beta/eval.yaml").resolve()
    assert found.services == ["alpha", "beta"]
    with pytest.raises(ConfigError) as info:
        detect_target(root, agent="gamma", environ={})
    assert 'no agent service named "gamma"; agent services: alpha, beta' in str(info.value)


def test_several_services_ask_or_fail_naming_the_flag(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    _write(root, "azure.yaml", TWO)
    asked: list[list[str]] = []

    def choose(names: list[str]) -> str:
        asked.append(names)
        return "alpha"

    found = detect_target(root, choose=choose, environ={})
    assert asked == [["alpha", "beta"]] and found.service == "alpha" and found.target == "local"
    with pytest.raises(ConfigError, match=r"2 agent services \(alpha, beta\); pass --agent NAME"):
        detect_target(root, no_prompt=True, choose=choose, environ={})
    with pytest.raises(ConfigError, match="pass --agent NAME"):
        detect_target(root, environ={})


def test_azure_yaml_is_found_from_a_subfolder(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    _write(root, "azure.yaml", TWO)
    (root / "beta" / "src").mkdir(parents=True)
    assert find_azure_yaml((root / "beta" / "src").resolve()) == (root / "azure.yaml").resolve()
    found = detect_target(root / "beta" / "src", agent="alpha", environ={})
    assert found.project_dir == root.resolve()


def test_no_azure_yaml_uses_eval_yaml_and_baseline(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    _write(root, "eval.yaml", "agent:\n  name: helper\n  model: gpt-4.1\n")
    _write(root, ".agent_configs/baseline/metadata.yaml", "model: gpt-4.1-mini\n")
    _write(root, ".agent_configs/baseline/instructions.md", "Be brief.")
    found = detect_target(root, environ={})
    assert found.service is None and found.azure_yaml is None
    assert found.agent_name == "helper"
    assert found.definition is not None
    assert found.definition.instructions == "Be brief."
    assert found.definition.model == "gpt-4.1"  # eval.yaml agent.model overrides the baseline
    assert found.target == "local"


def test_no_azure_yaml_endpoint_only(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    _write(
        root,
        "eval.yaml",
        "agent:\n  name: remote\n  endpoint: http://localhost:9000\n  protocol: chat_completions\n"
        "  headers: {X-Key: REMOTE_KEY}\n",
    )
    found = detect_target(root, environ={})
    assert found.target == "endpoint" and found.endpoint == "http://localhost:9000"
    assert found.definition is not None
    assert found.definition.protocol == "chat_completions"
    assert found.definition.headers_from_env == {"X-Key": "REMOTE_KEY"}


def test_nothing_found(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    found = detect_target(root, agent="named", environ={})
    assert found.definition is None and found.target is None and found.agent_name == "named"
    rows = {row.label: row.value for row in target_rows(found, root)}
    assert rows["Service"] is None and rows["eval.yaml"] == "eval.yaml  (will be created)"


def test_azure_yaml_without_agent_services(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    _write(root, "azure.yaml", "name: x\nservices:\n  web: {host: containerapp}\n")
    found = detect_target(root, environ={})
    assert found.service is None
    assert any("no azure.ai.agent service" in w.message for w in found.warnings)
    with pytest.raises(ConfigError, match=r"no azure\.ai\.agent service"):
        detect_target(root, agent="web", environ={})


def test_deprecated_endpoint_variable_warns(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    found = detect_target(root, environ={"AZURE_AI_PROJECT_ENDPOINT": "https://old"})
    assert found.project_endpoint == "https://old"
    assert [w.location for w in found.warnings] == ["AZURE_AI_PROJECT_ENDPOINT"]
    flagged = detect_target(
        root, project_endpoint="https://flag", environ={"AZURE_AI_PROJECT_ENDPOINT": "x"}
    )
    assert flagged.project_endpoint == "https://flag" and flagged.warnings == []


def test_deployed_prompt_agent_without_instructions_targets_foundry(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    _write(
        root,
        "azure.yaml",
        "services:\n  sa: {host: azure.ai.agent, kind: prompt, model: gpt-4.1}\n",
    )
    found = detect_target(
        root, environ={"AGENT_SA_NAME": "sa", "FOUNDRY_PROJECT_ENDPOINT": "https://p"}
    )
    assert found.target == "foundry"


def test_target_block_marks_found_and_missing(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    _write(root, "azure.yaml", TWO)
    found = detect_target(root, agent="alpha", environ={})
    console = Console(record=True, width=100, color_system=None)
    console.print(render_target_block(found, cwd=root))
    text = console.export_text()
    lines = [line.rstrip() for line in text.splitlines()]
    assert lines[0] == "Detected eval target"
    assert "✓  Service:        alpha  (--agent)" in lines
    assert "✓  Kind:           prompt  (azure.yaml (inline))" in lines
    assert "·  Endpoint:       (not found)" in lines
    assert "·  Version:        (not found)" in lines
    assert "✓  Project folder: ." in lines
    assert "✓  eval.yaml:      eval.yaml  (will be created)" in lines
