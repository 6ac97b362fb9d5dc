"""Output that is not a terminal (a pipe, a CI log) is never hard-wrapped: long paths paste."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

from agentopt.cli.console import make_console


def test_piped_output_keeps_long_lines_whole(tmp_path: Path) -> None:
    deep = tmp_path / ("a-rather-long-folder-name-" * 4) / "and-another-long-one"
    deep.mkdir(parents=True)
    out = subprocess.run(
        [sys.executable, "-m", "agentopt", "--no-prompt", "-C", str(deep), "eval", "run",
         "--prompts", "hi", "--expected", "hi", "--evaluator", "ExactMatch",
         "--agent-model", "mock:echo", "--output", "results-with-a-long-name.json"],
        capture_output=True, text=True, timeout=120, env={"PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    assert out.returncode == 0, out.stdout + out.stderr
    target = str(deep / "results-with-a-long-name.json")
    assert len(target) > 120
    assert any(target in line for line in out.stdout.splitlines()), out.stdout


def test_a_terminal_still_wraps_to_its_width() -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    tty, pipe = Tty(), io.StringIO()
    make_console(stream=tty).print("word " * 60)
    make_console(stream=pipe).print("word " * 60)
    assert len(pipe.getvalue().splitlines()) == 1
    assert len(tty.getvalue().splitlines()) > 1


def test_piped_tables_carry_no_trailing_blanks() -> None:
    """A table whose last column has one long cell: rich pads every other row to its width."""
    from rich import box
    from rich.table import Table

    table = Table("Task", "Why", box=box.SIMPLE_HEAD, show_edge=False)  # as the summaries
    table.add_row("short", "x")
    table.add_row("long", "because " * 20)
    pipe = io.StringIO()
    make_console(stream=pipe).print(table)
    lines = pipe.getvalue().splitlines()
    assert any("short" in line for line in lines)
    assert [line for line in lines if line != line.rstrip()] == []
