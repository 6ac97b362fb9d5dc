"""`agentopt eval init`: detection block, baseline, questions, and partial regeneration."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentopt.cli.app import app
from agentopt.core.errors import ConfigError
from agentopt.core.files.agent_config import load_agent_config
from agentopt.core.files.eval_yaml_load import load_eval_config
from agentopt.registry import Registry
from agentopt.workflows.detect import detect_target
from agentopt.workflows.generate.suite import CallSettings, SuiteRequest, run_generate
from agentopt.workflows.init import GenerateOptions, Kept, ensure_baseline, plan_suite
from tests.workflows.generate_mock import ScriptedGenerator, generator_fixture  # noqa: F401

AZURE_YAML = """\
name: shop
services:
  support-agent:
    host: azure.ai.agent
    kind: prompt
    model: gpt-4.1-mini
    instructions: You are the support agent of an online store. Refunds within 30 days.
    tools:
      - type: function
        function:
          name: lookup_order
          description: Find an order by its number.
          parameters: {type: object, properties: {id: {type: string}}}
"""


@pytest.fixture
def azd_project(tmp_path: Path, project: Path) -> Path:
    """An azd project (its own repository root) with one inline prompt agent."""
    root = tmp_path / "shop"
    (root / ".git").mkdir(parents=True)
    (root / "azure.yaml").write_text(AZURE_YAML, encoding="utf-8")
    return root


@dataclass
class ScriptedAsker:
    """Answers questions in order and records them."""

    answers: list[object]
    asked: list[str] = field(default_factory=list)

    def _next(self, question: str) -> object:
        self.asked.append(question)
        return self.answers.pop(0)

    def text(self, question: str, default: str | None = None) -> str:
        answer = self._next(question)
        return default or "" if answer is None else str(answer)

    def confirm(self, question: str, default: bool = False) -> bool:
        answer = self._next(question)
        return default if answer is None else bool(answer)

    def integer(self, question: str, default: int, lo: int, hi: int) -> int:
        answer = self._next(question)
        return default if answer is None else int(answer)  # type: ignore[call-overload]


def _cli(root: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["--no-prompt", "-C", str(root), "eval", "init", *args])
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.output


def test_init_no_prompt_detects_writes_the_baseline_and_creates_the_suite(
    azd_project: Path, generator: Callable[..., ScriptedGenerator]
) -> None:
    gen = generator()
    code, out = _cli(
        azd_project, "-g", "Refund and shipping help for a store.", "--eval-model", gen.model,
        "--max-samples", "4",
    )  # fmt: skip
    assert code == 0, out
    assert out.startswith("Detected eval target")
    assert "Service:        support-agent" in out and "(will be created)" in out
    assert "Wrote the baseline configuration to .agent_configs/baseline/" in out
    defn, _ = load_agent_config(azd_project / ".agent_configs" / "baseline")
    assert defn.instructions and "Refunds within 30 days" in defn.instructions
    assert defn.model == "gpt-4.1-mini" and defn.tools[0]["function"]["name"] == "lookup_order"
    config, warnings = load_eval_config(azd_project / "eval.yaml")
    assert warnings == []
    assert config.name == "support-agent" and config.agent is not None
    assert (config.agent.name, config.agent.kind) == ("support-agent", "prompt")
    assert config.agent.config == azd_project / ".agent_configs/baseline/metadata.yaml"
    assert config.dataset is not None and config.dataset.name == "support-agent-eval-seed"
    # The generator was told about the agent's own instructions and tools.
    prompt = gen.requests[0].messages[-1].content or ""
    assert "Refunds within 30 days" in prompt and "- lookup_order: Find an order" in prompt
    assert out.rstrip().splitlines()[-4] == "Next steps:"
    # Second run: eval.yaml exists, --no-prompt keeps it and says so; baseline untouched.
    code, out = _cli(azd_project, "-g", "x", "--eval-model", gen.model)
    assert code == 0 and "kept it unchanged (--no-prompt)" in out
    assert "Wrote the baseline" not in out


def test_init_without_instruction_names_the_flags(azd_project: Path) -> None:
    # A hosted agent whose code is its only definition: nothing to derive the paragraph from.
    (azd_project / "azure.yaml").write_text(
        "services:\n  a: {host: azure.ai.agent, kind: hosted, startupCommand: python x.py}\n",
        encoding="utf-8",
    )
    code, out = _cli(azd_project, "--eval-model", "mock:echo")
    assert code == 2
    assert "a generation instruction is required" in out
    assert "→ pass -g/--gen-instruction or --gen-instruction-file" in out


def test_baseline_is_not_written_without_instructions_or_when_present(tmp_path: Path) -> None:
    root = tmp_path / "p"
    (root / ".git").mkdir(parents=True)
    (root / "azure.yaml").write_text(
        "services:\n  a: {host: azure.ai.agent, kind: hosted, startupCommand: python x.py}\n",
        encoding="utf-8",
    )
    target = detect_target(root, environ={})
    assert ensure_baseline(target) is None
    assert not (root / ".agent_configs").exists()
    (root / "azure.yaml").write_text(AZURE_YAML, encoding="utf-8")
    target = detect_target(root, environ={})
    assert ensure_baseline(target) == root.resolve() / ".agent_configs" / "baseline"
    again = detect_target(root, environ={})
    assert again.baseline_dir is not None and ensure_baseline(again) is None


def test_wizard_asks_for_what_is_missing(azd_project: Path) -> None:
    brief = azd_project / "brief.md"
    brief.write_text("Helps customers of a store with refunds.\n", encoding="utf-8")
    asker = ScriptedAsker(["smoke suite", "@brief.md", None, 7])
    target = detect_target(azd_project, environ={})
    plan = plan_suite(GenerateOptions(cwd=azd_project), target, asker=asker, wizard=True)
    assert isinstance(plan, SuiteRequest)
    assert asker.asked[0] == "Suite name"
    assert asker.asked[1].startswith("Describe what the agent does")
    assert asker.asked[2] == "Eval model (judge and generator)"
    assert asker.asked[3] == "How many tasks to generate"
    assert plan.suite_name == "smoke suite"
    assert plan.instruction == "Helps customers of a store with refunds."
    assert plan.eval_model == "gpt-4.1-mini"  # default: the agent's model
    assert plan.max_samples == 7 and plan.fresh_config
    # Flags given: nothing is asked.
    quiet = ScriptedAsker([])
    flags = GenerateOptions(gen_instruction="x", eval_model="m", max_samples=3, name="n")
    plan = plan_suite(flags, target, asker=quiet, wizard=True)
    assert quiet.asked == [] and isinstance(plan, SuiteRequest)
    # Nobody to ask: the agent's own instructions, tools and skills describe it (azd does so).
    plan = plan_suite(GenerateOptions(), target, asker=None, wizard=True)
    assert isinstance(plan, SuiteRequest)
    assert plan.instruction == (
        'The agent "support-agent". It does what its own instructions below say. '
        "It can call these tools: lookup_order."
    )
    assert "Refunds within 30 days" in (plan.agent_instructions or "")
    bare = dataclasses.replace(target, definition=None)
    with pytest.raises(ConfigError, match="generation instruction is required"):
        plan_suite(GenerateOptions(), bare, asker=None, wizard=True)


def test_existing_suite_regenerates_only_the_dataset_when_asked(
    azd_project: Path, generator: Callable[..., ScriptedGenerator]
) -> None:
    gen = generator()
    assert (
        _cli(azd_project, "-g", "Store help.", "--eval-model", gen.model, "--max-samples", "3")[0]
        == 0
    )
    path = azd_project / "eval.yaml"
    text = path.read_text(encoding="utf-8")
    text = text.replace("name: support-agent\n", "name: support-agent  # keep me\n", 1)
    path.write_text("# my own comment\n" + text, encoding="utf-8")
    target = detect_target(azd_project, environ={})
    both_no = plan_suite(GenerateOptions(), target, asker=ScriptedAsker([False, False]))
    assert isinstance(both_no, Kept) and both_no.message == "Kept eval.yaml unchanged."
    asker = ScriptedAsker([True, False, "Store help, now with exchanges."])
    options = GenerateOptions(eval_model=gen.model, seed=9)
    plan = plan_suite(options, target, asker=asker)
    assert isinstance(plan, SuiteRequest)
    assert asker.asked[:2] == [
        "eval.yaml exists. Regenerate the dataset?",
        "eval.yaml exists. Regenerate the evaluator?",
    ]
    assert (plan.write_dataset, plan.write_evaluator, plan.fresh_config) == (True, False, False)
    assert plan.max_samples == 3  # from the existing eval.yaml
    rubric_calls = gen.calls("rubric_dimensions")
    result = run_generate(plan, CallSettings(cache_enabled=False))
    assert gen.calls("rubric_dimensions") == rubric_calls and result.evaluator is None
    assert result.dataset is not None and result.dataset.version == "2"
    text = path.read_text(encoding="utf-8")
    assert text.startswith("# my own comment\n") and "# keep me" in text
    config, warnings = load_eval_config(path)
    assert warnings == [] and config.dataset.version == "2"  # type: ignore[union-attr]
    assert [(e.name, e.version) for e in config.evaluators] == [("support-agent-quality", "1")]
    assert Registry(azd_project).versions("evaluators", "support-agent-quality") == ["1"]
    assert result.backups and result.backups[-1].name.startswith("eval.yaml.bak.")


def test_interactive_init_asks_on_the_terminal(
    azd_project: Path,
    generator: Callable[..., ScriptedGenerator],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from agentopt.cli.context import CliState

    gen = generator()
    monkeypatch.setattr(CliState, "interactive", property(lambda self: not self.no_prompt))
    answers = f"smoke\nHelps store customers with refunds.\n{gen.model}\n3\n"
    result = CliRunner().invoke(app, ["-C", str(azd_project), "eval", "init"], input=answers)
    assert result.exit_code == 0, result.output
    for question in ("Suite name", "Describe what the agent does", "Eval model", "How many"):
        assert question in result.output, result.output
    config, _ = load_eval_config(azd_project / "eval.yaml")
    assert (config.name, config.max_samples, config.options.eval_model) == ("smoke", 3, gen.model)
    # Again: eval.yaml exists, so it asks before regenerating (default No = keep).
    again = CliRunner().invoke(app, ["-C", str(azd_project), "eval", "init"], input="\n\n")
    assert again.exit_code == 0, again.output
    assert "Regenerate the dataset?" in again.output and "Kept eval.yaml unchanged." in again.output
