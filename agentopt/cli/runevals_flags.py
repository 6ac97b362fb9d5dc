"""runevals' own habits on `eval run` (the M365 Agents Toolkit evaluation CLI, whose command
reference is `runevals --help`; docs/migrating.md maps each one):

- `--env NAME`: the Toolkit's `env/.env.NAME` (+ `.user`) read into the environment of this
  command (core/files/toolkit_env.py), its judge variables included;
- `--log-level [debug|info|warning|error]` (a bare flag means info, as in runevals): agentopt's
  log lines on standard error from that level, credentials masked;
- `-i` (`--interactive`) and `-V` (`--version`);
- the HTML report opens in the browser when one was written on a terminal, as runevals opens
  its report; `--no-open` (and CI, and output that is not a terminal) keeps it closed.
"""

from __future__ import annotations

import logging
import os
import sys
import webbrowser
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import typer

from agentopt import __version__
from agentopt.core.files.toolkit_env import ToolkitEnv, load_toolkit_env
from agentopt.core.redaction import redact
from agentopt.reports.outputs import OutputFile

LOG_LEVELS = ("debug", "info", "warning", "error")


def print_version(value: bool) -> None:
    """`-V`: the version, as `agentopt --version` prints it."""
    if value:
        typer.echo(f"agentopt {__version__}")
        raise typer.Exit(0)


@contextmanager
def toolkit_environment(project: Path, name: str | None) -> Iterator[ToolkitEnv | None]:
    """With `--env NAME`: the environment's variables set for the duration of the command
    (those the process already has win), and unset again after it."""
    if name is None:
        yield None
        return
    env = load_toolkit_env(project, name)
    added = env.layered(os.environ)
    os.environ.update(added)
    try:
        yield env
    finally:
        for key in added:
            os.environ.pop(key, None)


class _Masked(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        record.msg = redact(record.getMessage())
        record.args = None
        return True


@contextmanager
def console_log(level: str | None) -> Iterator[None]:
    """`--log-level LEVEL`: agentopt's log lines from LEVEL up on standard error."""
    if level is None:
        yield
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.setLevel(level.upper())
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    handler.addFilter(_Masked())
    root = logging.getLogger("agentopt")
    before = root.level
    root.setLevel(min(before or logging.WARNING, handler.level))
    root.addHandler(handler)
    try:
        yield
    finally:
        root.removeHandler(handler)
        root.setLevel(before)


def should_open(no_open: bool) -> bool:
    """Open reports only for a person at a terminal: not with --no-open, not in CI, not when
    the output goes to a file or a pipe."""
    return not no_open and not os.environ.get("CI") and sys.stdout.isatty()


def open_reports(outputs: Sequence[OutputFile], no_open: bool) -> list[Path]:
    """Open the HTML reports written (the browser named by $BROWSER, else the system's)."""
    if not should_open(no_open):
        return []
    opened = []
    for out in outputs:
        if out.format == ".html" and webbrowser.open(out.path.resolve().as_uri()):
            opened.append(out.path)
    return opened
