"""Statements of the docs that the console blocks do not show, checked (issue 39 item 4: of 15
claims checked, 6 were wrong; these are the ones a test can hold)."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from agentopt.cli.app import app
from tests.docs.console import REPO

ADHOC = ["--agent-model", "mock:echo", "--prompts", "hi", "--expected", "hi", "--evaluator",
         "ExactMatch"]  # fmt: skip


def agentopt(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, " ".join(result.output.split())


def test_a_global_option_after_the_command_is_the_same_option(project: Path) -> None:
    """docs/README.md: "`agentopt --no-prompt eval run` and `agentopt eval run --no-prompt` are
    the same"."""
    text = (REPO / "docs" / "README.md").read_text(encoding="utf-8")
    assert "`agentopt eval run --no-prompt` are the same" in text
    before = agentopt("--no-prompt", "-C", str(project), "eval", "run", *ADHOC)
    after = agentopt("eval", "run", "--no-prompt", "-C", str(project), *ADHOC)
    assert before[0] == after[0] == 0, (before, after)
    runs = sorted((project / ".agentopt" / "runs").iterdir())
    assert len(runs) == 2  # -C after the command anchored the second run in the project too


def test_troubleshooting_names_the_two_no_dataset_messages_apart(project: Path) -> None:
    """docs/troubleshooting.md's "Finding the agent and the suite" rows: an empty folder and an
    eval.yaml without `dataset:` are different messages, each with its fix."""
    text = " ".join((REPO / "docs" / "troubleshooting.md").read_text(encoding="utf-8").split())
    code, out = agentopt("--no-prompt", "eval", "run", "--agent-model", "mock:echo")
    assert code == 2
    empty = "no dataset: no eval.yaml and no eval document (prompts.json, evals.json, tests.json, evals/prompts.json, evals/evals.json, evals/tests.json)"  # noqa: E501
    assert empty in out and f"`{empty}`" in text
    agent = "agent:\n  name: x\n  model: mock:echo\n  instruction: Be brief.\n"
    (project / "eval.yaml").write_text(agent, encoding="utf-8")
    code, out = agentopt("--no-prompt", "eval", "run")
    assert code == 2
    no_dataset = (
        "the suite has no dataset: expected `dataset:` with `local_uri` or `name`/`version`"
    )
    assert no_dataset in out and f"eval.yaml:dataset: {no_dataset}" in text
    code, out = agentopt("--no-prompt", "eval", "run", "--prompts", "hi", "--expected", "hi",
                         "--evaluator", "ExactMatch")  # fmt: skip
    assert code == 0, out  # the documented fix
