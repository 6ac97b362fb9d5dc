"""Shared pieces of the round-3 hardening tests (issue 38): a small runnable project and the
CLI, in-process (typer's runner) or as a real subprocess (`python -m agentopt`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from typer.testing import CliRunner

import agentopt
from agentopt.cli.app import app
from tests.conftest import REPO

EVAL_YAML = """\
name: smoke
agent:
  name: support
  kind: prompt
  model: {model}
  instruction: Be brief.
dataset:
  local_uri: tasks.jsonl
evaluators:
  - name: builtin.regex_match
    initialization_parameters: {{patterns: ['(?i)item']}}
options:
  eval_model: {model}
"""


def write_project(folder: Path, *, model: str = "mock:echo", tasks: int = 2) -> Path:
    """eval.yaml + tasks.jsonl, runnable offline with the mock model."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "eval.yaml").write_text(EVAL_YAML.format(model=model))
    rows = [{"name": f"t{i}", "query": f"item {i}"} for i in range(tasks)]
    (folder / "tasks.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return folder


@dataclass
class Ran:
    code: int
    output: str


def cli(project: Path, *args: str) -> Ran:
    """The CLI in this process (the exit code and everything printed)."""
    result = CliRunner().invoke(app, ["-C", str(project), "--no-prompt", *args])
    return Ran(result.exit_code, result.output)


CODE = Path(agentopt.__file__).resolve().parent.parent
"""The checkout whose agentopt these tests import: a subprocess runs the same code."""


def subprocess_env(**extra: str) -> dict[str, str]:
    """The same agentopt first on the path (and the tests), no colours, a wide terminal."""
    parts = (str(CODE), str(REPO), os.environ.get("PYTHONPATH", ""))
    path = os.pathsep.join(p for p in parts if p)
    return {**os.environ, "PYTHONPATH": path, "NO_COLOR": "1", "COLUMNS": "200", **extra}


def real_cli(
    project: Path, *args: str, timeout: float = 120, env: dict[str, str] | None = None
) -> Ran:
    """`python -m agentopt` in a subprocess, as a user meets it."""
    proc = subprocess.run(
        [sys.executable, "-m", "agentopt", "--no-prompt", "-C", str(project), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env or subprocess_env(),
        stdin=subprocess.DEVNULL,
    )
    return Ran(proc.returncode, proc.stdout + proc.stderr)
