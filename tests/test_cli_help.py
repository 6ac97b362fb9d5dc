"""Every command's --help (the whole tree, walked) shows an example and no `<bool>` type for
flags (cli.md). Replaces the subprocess check of a hand-kept command list in test_cli_surface."""

from __future__ import annotations

import inspect
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer.main
from typer.testing import CliRunner

from agentopt.cli.app import COMMANDS as root_commands
from agentopt.cli.app import app
from agentopt.cli.eval_cmd import COMMANDS as eval_commands
from agentopt.cli.eval_run_group import COMMANDS as run_commands
from agentopt.cli.lazy import load


def _paths(command: Any, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Walked through click's group API, so commands that load on first use are seen."""
    out = [prefix]
    if not hasattr(command, "list_commands"):
        return out
    for name in sorted(command.list_commands(None)):
        out.extend(_paths(command.get_command(None, name), (*prefix, name)))
    return out


COMMANDS = _paths(typer.main.get_command(app))


def test_the_tree_is_walked() -> None:
    assert ("eval", "run") in COMMANDS and ("optimize",) in COMMANDS and len(COMMANDS) >= 17


@pytest.mark.parametrize("path", COMMANDS, ids=lambda p: " ".join(p) or "agentopt")
def test_help_has_an_example_and_no_bool_metavar(path: tuple[str, ...]) -> None:
    result = CliRunner().invoke(app, [*path, "--help"])
    assert result.exit_code == 0, result.output
    assert "Example" in result.output, f"agentopt {' '.join(path)} --help has no example"
    assert "agentopt " in result.output.split("Example", 1)[1]
    assert "<bool>" not in result.output


LAZY_GROUPS = {
    "agentopt": root_commands,
    "agentopt eval": eval_commands,
    "agentopt eval run": run_commands,
}


@pytest.mark.parametrize("group", sorted(LAZY_GROUPS))
def test_a_groups_help_lists_each_command_by_its_own_first_paragraph(group: str) -> None:
    """The static lines `--help` lists without importing the commands say what each
    command's own help says (typer lists a help's first paragraph)."""
    for name, spec in LAZY_GROUPS[group].items():
        command = load(name, spec)
        own = inspect.cleandoc(command.short_help or command.help or "").split("\n\n")[0]
        assert spec.help == own.strip(), f"{group} {name}: update its Lazy(help=...)"


def _imported(*args: str) -> set[str]:
    """The modules a fresh `python -X importtime …` imports (this tree's, via PYTHONPATH)."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", *args],
        capture_output=True,
        text=True,
        check=False,
        env=os.environ | {"PYTHONPATH": os.pathsep.join(sys.path)},
    )
    names = {
        line.split("|")[-1].strip()
        for line in done.stderr.splitlines()
        if line.startswith("import time:")
    }
    assert names, done.stderr[-500:]
    return names


HELLO_HELP = """
import typer
app = typer.Typer(rich_markup_mode="rich")
@app.command()
def hello(name: str = "") -> None:
    \"\"\"Say hello.\"\"\"
@app.command()
def bye() -> None:
    \"\"\"Say bye.\"\"\"
app(["--help"], prog_name="hello")
"""
"""A two-command typer app printing its `--help`: what typer's help renderer imports."""


def test_help_imports_no_more_than_version_and_the_help_renderer() -> None:
    """`agentopt --help` imported every command module to print one line each (768 modules,
    3-4x the CPU of `--version`); now it needs only what `--version` loads plus typer's rich
    help renderer."""
    version = _imported("-m", "agentopt", "--version")
    renderer = _imported("-c", HELLO_HELP)
    extra = _imported("-m", "agentopt", "--help") - version - renderer
    assert not extra, f"agentopt --help also imports {sorted(extra)}"
    # A subgroup's help imports the subgroup, and none of the commands it lists.
    listed = {spec.module for spec in eval_commands.values()}
    assert listed & _imported("-m", "agentopt", "eval", "--help") == set()


MODEL_MACHINERY = {
    "agentopt.contracts.task",  # the task models
    "pydantic.fields",  # any pydantic model or adapter
    "typer._adapters",  # typer's pydantic coercion of a parameter
    "importlib.metadata",  # pydantic's plugin loader, at the first model built
    "rich._emoji_codes",  # rich's emoji table, loaded by the first line printed with emoji on
}


def test_validating_a_task_file_builds_no_model(tmp_path: Path) -> None:
    """`eval validate` of 5 tasks has a budget of 0.25 s of CPU (`--version`: ~0.19): it checks
    the records without importing or building a pydantic model, and coerces its paths and
    absent global options without typer's pydantic adapters (cli/lean_params.py)."""
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text("".join(f'{{"query": "q{i}", "ground_truth": "a"}}\n' for i in range(5)))
    imported = _imported("-m", "agentopt", "eval", "validate", str(tasks))
    assert {"agentopt.workflows.validate", "agentopt.datasets.jsonl"} <= imported
    assert imported & MODEL_MACHINERY == set()


DEFERRED = """
import sys
from agentopt.cli import help_format
help_format.load_renderer()
from typer import rich_utils
assert "rich.markdown" not in sys.modules and "rich.traceback" not in sys.modules
try:
    raise ValueError("boom")
except ValueError as exc:
    shown = rich_utils.Traceback.from_exception(type(exc), exc, exc.__traceback__)
import rich.traceback
assert isinstance(shown, rich.traceback.Traceback) and isinstance(shown, rich_utils.Traceback)
md = rich_utils._make_rich_text(text="*a*", style="", markup_mode="markdown")
import rich.markdown
assert isinstance(md, rich.markdown.Markdown)
print("ok")
"""


def test_the_help_renderer_loads_markdown_and_tracebacks_only_when_used() -> None:
    """What `load_renderer` leaves out still works the first time it is needed: typer's
    pretty traceback of a crash and markdown help."""
    done = subprocess.run(
        [sys.executable, "-c", DEFERRED],
        capture_output=True,
        text=True,
        check=False,
        env=os.environ | {"PYTHONPATH": os.pathsep.join(sys.path)},
    )
    assert done.stdout.strip() == "ok", done.stderr[-800:]
