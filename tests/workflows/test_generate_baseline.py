"""`-g` becomes the baseline, as azd's `eval generate` writes it (`writeBaselineIfNeeded` /
`writeBaselineConfig`, internal/cmd/eval_helpers.go of azure.ai.agents in Azure/azure-dev):
when no agent configuration is resolved and the agent's definition has no instructions,
`.agent_configs/baseline/instructions.md` holds the `-g` text as given and `metadata.yaml`
points at it (and at `skills/` when the agent has one), an existing baseline is never
overwritten, and the path is printed as `Baseline: <path>`. The real foundry-samples agents
then run: a prompt agent whose only definition is its `config:` block, and a hosted agent."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

from typer.testing import CliRunner

from agentopt.cli.app import app
from agentopt.core.files.eval_yaml_load import load_eval_config
from tests.fake_openai import FakeOpenAI
from tests.workflows.generate_mock import ScriptedGenerator, generator_fixture  # noqa: F401

REAL = Path(__file__).resolve().parents[1] / "fixtures" / "real"
GEN = "A friendly assistant that answers general questions briefly.\nIt never gives medical advice."


def cli(root: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["--no-prompt", "-C", str(root), *args])
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.output


def config_block_agent(tmp_path: Path) -> Path:
    """foundry-samples prompt-agents/01-basic's azure.yaml on its own: the service's only
    definition is its `config:` block (`promptAgent: {}`, a model deployment), no
    instructions anywhere."""
    root = tmp_path / "prompt-agent-basic"
    root.mkdir()
    shutil.copy(REAL / "fs-prompt-01-basic" / "azure.yaml", root / "azure.yaml")
    return root


def test_g_becomes_the_baseline_of_a_config_block_prompt_agent_which_then_runs(
    tmp_path: Path, generator: Callable[..., ScriptedGenerator]
) -> None:
    root = config_block_agent(tmp_path)
    (root / "skills").mkdir()
    gen = generator()
    code, out = cli(root, "eval", "generate", "-g", GEN, "--eval-model", gen.model)
    assert code == 0, out
    baseline = root / ".agent_configs" / "baseline"
    assert "Baseline: .agent_configs/baseline/metadata.yaml" in out.splitlines()
    assert (baseline / "instructions.md").read_text(encoding="utf-8") == GEN
    assert (baseline / "metadata.yaml").read_text(encoding="utf-8") == (
        "instruction_file: instructions.md\nskill_dir: ../../skills\n"
    )
    config, _ = load_eval_config(root / "eval.yaml")
    assert config.agent is not None and config.agent.config == baseline / "metadata.yaml"
    with FakeOpenAI() as srv:
        code, out = cli(
            root, "eval", "run", "--prompts", "Hello there", "--expected", "Hello there",
            "--evaluator", "ExactMatch", "--agent-model", f"compat:gpt-5.4-mini@{srv.base_url}",
        )  # fmt: skip
        requests = srv.chat_requests
    assert code == 0, out
    assert "cannot tell how to run" not in out
    [request] = requests
    assert request.body["messages"][0] == {"role": "system", "content": GEN}


def test_an_existing_baseline_is_never_overwritten(
    tmp_path: Path, generator: Callable[..., ScriptedGenerator]
) -> None:
    root = config_block_agent(tmp_path)
    gen = generator()
    assert cli(root, "eval", "generate", "-g", GEN, "--eval-model", gen.model)[0] == 0
    instructions = root / ".agent_configs" / "baseline" / "instructions.md"
    instructions.write_text("Edited by hand.", encoding="utf-8")
    code, out = cli(
        root, "eval", "generate", "-g", "Another paragraph.", "--eval-model", gen.model,
        "--reset-defaults",
    )  # fmt: skip
    assert code == 0, out
    assert "Baseline:" not in out
    assert instructions.read_text(encoding="utf-8") == "Edited by hand."


def test_a_hosted_agent_gets_the_baseline_from_its_instruction_file(
    tmp_path: Path, generator: Callable[..., ScriptedGenerator]
) -> None:
    root = tmp_path / "echo"
    shutil.copytree(REAL / "fs-hosted-py-echo", root)
    (root / "azure.yaml").write_text(
        "name: echo\nservices:\n  echo:\n    host: azure.ai.agent\n    project: .\n",
        encoding="utf-8",
    )
    brief = tmp_path / "brief.md"
    brief.write_text("An agent that echoes what the user says.\n", encoding="utf-8")
    gen = generator()
    code, out = cli(
        root, "eval", "generate", "--gen-instruction-file", str(brief), "--eval-model", gen.model
    )
    assert code == 0, out
    baseline = root / ".agent_configs" / "baseline"
    assert "Baseline: .agent_configs/baseline/metadata.yaml" in out.splitlines()
    assert (baseline / "instructions.md").read_bytes() == brief.read_bytes()
    assert (baseline / "metadata.yaml").read_text() == "instruction_file: instructions.md\n"


def test_no_baseline_outside_an_azd_project_or_over_real_instructions(
    tmp_path: Path, generator: Callable[..., ScriptedGenerator]
) -> None:
    gen = generator()
    bare = tmp_path / "bare"
    bare.mkdir()
    code, out = cli(bare, "eval", "generate", "-g", GEN, "--eval-model", gen.model)
    assert code == 0, out
    assert not (bare / ".agent_configs").exists() and "Baseline:" not in out
    prompt = tmp_path / "tools"
    shutil.copytree(REAL / "fs-prompt-02-tools", prompt)  # instructions in azure.yaml
    code, out = cli(prompt, "eval", "generate", "-g", GEN, "--eval-model", gen.model)
    assert code == 0, out
    assert not (prompt / ".agent_configs").exists() and "Baseline:" not in out
