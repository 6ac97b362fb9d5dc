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
