"""Docs that run (issue 39 item 4): every `agentopt` command of a console block in README.md and
docs/*.md is executed, in order, in a temporary copy of what the docs work on (the bundled
example, an azd project), with every model on the fake OpenAI server; where the docs show the
output, its stable lines must be printed. A block that cannot run here is marked as an
illustration with its reason (tests/docs/console.py), and the count of both is checked."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from agentopt.cli.app import app
from tests.docs.console import REPO, Block, Command, every_block
from tests.fake_openai import FakeOpenAI, RecordedRequest, Reply, text
from tests.workflows.test_generate_e2e import ShoeStoreModel

BLOCKS = every_block()
RUN = [b for b in BLOCKS if b.illustration is None]
EXAMPLE = REPO / "examples" / "support-agent"
AZURE_YAML = """\
name: shop
services:
  shop-agent:
    project: agent
    host: azure.ai.agent
    kind: prompt
    model: gpt-4.1-mini
    instructions: You are the support agent of an online shoe store. Refunds within 30 days.
"""
Runner = Callable[[list[str], Path], str]
DIGIT = re.compile(r"\d")
BOX = re.compile(r"[\u2500-\u257f\s]+")
MODEL_DEPENDENT = ("note:", "warning:", "…", "+", "-", "@", "No candidate beat", "Self-check")
"""Shown lines that depend on what the model answered (the docs' runs used the embedded model,
the test a scripted one) or on time: notes and warnings worded around the model, progress, the
diff of a learned rule, the optimizer's outcome."""


def out_ended(text: str) -> bool:
    return not text or text.endswith((".", ")"))


def stable(shown: list[str]) -> list[str]:
    """The shown lines a run on any model must print: no number, id, time or path, no
    model-dependent wording (a note or warning, with the lines it wraps onto), no table rule
    (whitespace collapsed)."""
    out = []
    in_notice = False
    previous = ""
    for line in shown:
        text = " ".join(line.split())
        wrapped = in_notice and line[:1].strip() != "" and not out_ended(previous)
        in_notice = text.startswith(("note:", "warning:")) or wrapped
        previous = text
        if not text or in_notice or DIGIT.search(text) or text.startswith(MODEL_DEPENDENT):
            continue
        if "/" in text or BOX.fullmatch(text):
            continue
        out.append(text)
    return out


def example_copy(root: Path) -> Path:
    """The bundled example as a user has it, with its agent on a hosted model (the fake)."""
    project = root / "examples" / "support-agent"
    shutil.copytree(EXAMPLE, project, ignore=shutil.ignore_patterns(".agentopt"))
    meta = project / ".agent_configs" / "baseline" / "metadata.yaml"
    data = yaml.safe_load(meta.read_text(encoding="utf-8"))
    data["model"] = "gpt-4.1-mini"
    meta.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return project


def azd_project(root: Path, run: Runner) -> Path:
    shop = root / "shop"
    (shop / ".git").mkdir(parents=True)
    (shop / "agent").mkdir()
    (shop / "azure.yaml").write_text(AZURE_YAML, encoding="utf-8")
    return shop


def edit_a_task(root: Path, run: Runner) -> Path:
    """ "Change a task … then": one query edited in the example's working copy."""
    project = root / "examples" / "support-agent"
    [seed] = (project / "datasets").glob("*/*.jsonl")
    rows = [json.loads(line) for line in seed.read_text(encoding="utf-8").splitlines()]
    rows[0]["query"] += " Thanks!"
    seed.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return project


def two_instructions(root: Path, run: Runner) -> Path:
    """The matrix run's two instructions files, in the example project."""
    project = root / "examples" / "support-agent"
    (project / "prompts").mkdir(exist_ok=True)
    (project / "prompts" / "terse.md").write_text("Answer in one sentence.\n", encoding="utf-8")
    (project / "prompts" / "friendly.md").write_text("Be warm and friendly.\n", encoding="utf-8")
    return project


def after_a_run(root: Path, run: Runner) -> Path:
    """The cache as a run of the example leaves it (a no-op where the doc ran one already)."""
    project = root / "examples" / "support-agent"
    run(["--no-prompt", "eval", "run"], project)
    return project


SETUP: dict[str, Callable[[Path, Runner], Path]] = {
    "eval init -g": azd_project,
    "eval update": edit_a_task,
    "--instructions @prompts/terse.md": two_instructions,
    "cache stats": after_a_run,
}
"""What the prose before a block says the user did first, and where (keyed by the block's first
command): the folder the block's commands run in (the doc's root by default)."""


RULE = re.compile(r"^- On [^:]+: say (.+)$", re.M)


class DocsWorld(ShoeStoreModel):
    """The generator, judges and agent of the generate test, with an agent that follows its
    instructions: the rules the optimizer learned ("On returns questions: say …") are what it
    says, as a capable model would."""

    def __call__(self, req: RecordedRequest) -> Reply | None:
        body = req.body or {}
        if not body.get("response_format"):
            system = "\n".join(
                m.get("content") or "" for m in body.get("messages", []) if m["role"] == "system"
            )
            if rules := RULE.findall(system):
                return text(" ".join(r[0].upper() + r[1:] for r in rules))
        return super().__call__(req)


@pytest.fixture(scope="module")
def server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as srv:  # the hosted API: OpenAI's strict schema subset
        srv.handler = DocsWorld()
        yield srv


@pytest.fixture(scope="module")
def roots(tmp_path_factory: pytest.TempPathFactory) -> dict[Path, Path]:
    """One working folder per doc: its blocks run in order there (README's steps build on each
    other: run, update, optimize, apply)."""
    out = {}
    for path in {b.path for b in RUN}:
        root = tmp_path_factory.mktemp(path.stem)
        example_copy(root)
        out[path] = root
    return out


def invoke(command: Command, cwd: Path, server: FakeOpenAI, mp: pytest.MonkeyPatch) -> str:
    """One command as a user types it: in `cwd`, every model on the fake server, exit 0."""
    for var in ("AZURE_OPENAI_ENDPOINT", "FOUNDRY_PROJECT_ENDPOINT", "AZURE_AI_PROJECT_ENDPOINT"):
        mp.delenv(var, raising=False)
    mp.setenv("OPENAI_API_KEY", "sk-docs-test")
    mp.setenv("OPENAI_BASE_URL", server.base_url)
    mp.setenv("COLUMNS", "200")
    mp.chdir(cwd)
    result = CliRunner().invoke(app, command.argv)
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    assert result.exit_code == 0, f"line {command.line}: agentopt {command.argv}\n{result.output}"
    return result.output


@pytest.mark.parametrize("block", RUN, ids=[b.id for b in RUN])
def test_every_console_command_runs_and_prints_what_the_docs_show(
    block: Block, roots: dict[Path, Path], server: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = roots[block.path]
    first = " ".join(block.commands[0].argv)
    setup = next((f for key, f in SETUP.items() if key in first), None)

    def run(argv: list[str], cwd: Path) -> str:
        with monkeypatch.context() as mp:
            return invoke(Command(argv, "agentopt", block.line), cwd, server, mp)

    cwd = setup(root, run) if setup else root
    for command in block.commands:
        assert command.is_agentopt, f"{block.id}: `{command.program}` is not an agentopt command"
        output = run(command.argv, cwd)
        printed = {" ".join(line.split()) for line in output.splitlines()}
        missing = [line for line in stable(command.shown) if line not in printed]
        assert missing == [], f"{block.id} line {command.line}: not printed: {missing}\n{output}"


def test_every_block_is_run_or_marked_as_an_illustration(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A new block is run (the test above) unless it says why it cannot be: a marker with a
    reason, never a bare one. The counts are printed for the record (issue 39 item 4)."""
    marked = [b for b in BLOCKS if b.illustration]
    assert all(len(b.illustration or "") > 10 for b in marked)  # a reason, not a bare marker
    assert all(b.commands for b in BLOCKS)
    assert len(RUN) + len(marked) == len(BLOCKS) and RUN
    with capsys.disabled():
        print(f"\nconsole blocks: {len(BLOCKS)}; run {len(RUN)}; illustrations {len(marked)}")


def test_the_stable_lines_leave_out_numbers_notices_and_rules_only() -> None:
    shown = [
        "Detected eval target",
        "warning: No model provider is configured, so 'gpt-4.1-mini' runs on the embedded",
        "local:smollm2-135m, good for trying agentopt, NOT a trustworthy judge.",
        "Eval suite created",
        "  … cand_01: screening on 3 train tasks",
        "Score 0.056  (95% CI 0.000–0.167)",
        "└──────────┴──────┘",
        "note: not optimizing tools: the agent 'support-agent' has no function tools",
        "  Candidate            Score   Pass",
        "Next steps:",
    ]
    assert stable(shown) == [
        "Detected eval target",
        "Eval suite created",
        "Candidate Score Pass",
        "Next steps:",
    ]
