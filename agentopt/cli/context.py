"""Global CLI state (set by the root callback, read by every command)."""

from __future__ import annotations

import json
import logging
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.console import Console

from agentopt.cli.console import make_console
from agentopt.core.errors import ConfigError
from agentopt.core.redaction import redact

if TYPE_CHECKING:
    from pydantic import BaseModel


@dataclass
class CliState:
    """What the global options set. `cwd` is the directory commands treat as the start."""

    cwd: Path = field(default_factory=lambda: Path("."))
    environment: str | None = None
    """`-e/--environment`: the azd environment to read (None = azd's default)."""
    no_prompt: bool = False
    debug: bool = False
    quiet: bool = False
    output_format: str | None = None
    """azd's global `-o json|table` (None: table, as without it)."""
    project_endpoint: str | None = None
    """`optimize … -p/--project-endpoint` (azd's optimize connection flags)."""
    service_endpoint: str | None = None
    """`optimize … --endpoint`: the optimization service itself (local development)."""
    call_timeout: float | None = None
    """`--call-timeout`: deadline of one model call (None = eval.yaml's, else the default)."""
    console: Console = field(default_factory=make_console)
    err: Console = field(default_factory=lambda: make_console(stderr=True))

    def reset(self) -> None:
        """Back to the defaults before each invocation (tests run many in one process)."""
        self.cwd = Path.cwd()
        self.environment = None
        self.no_prompt = self.debug = self.quiet = False
        self.output_format = None
        self.project_endpoint = self.service_endpoint = None
        self.call_timeout = None

    @property
    def json_output(self) -> bool:
        return self.output_format == "json"

    def emit_json(self, data: object) -> None:
        """One JSON document on stdout: nothing else is printed around it."""
        typer.echo(json.dumps(data, indent=2, ensure_ascii=False, default=str))

    def emit_list(
        self, records: Sequence[BaseModel], empty: str, render: Callable[[], object]
    ) -> None:
        """A list command's output: under -o json the records (none: `[]`), else the `empty`
        line when there are none, else what `render` prints."""
        if self.json_output:
            self.emit_json([r.model_dump(mode="json") for r in records])
        elif not records:
            self.say(empty)
        else:
            render()

    @property
    def interactive(self) -> bool:
        """Prompts are allowed: not --no-prompt, not CI, and stdin is a terminal."""
        return not self.no_prompt and sys.stdin.isatty() and not os.environ.get("CI")

    def require(self, value: object, flag: str, what: str) -> None:
        """Fail with a message naming the missing flag (used under --no-prompt)."""
        if value in (None, "", []):
            raise ConfigError(f"{what} is required", hint=f"pass {flag}")

    def say(self, *objects: object) -> None:
        if not self.quiet:
            # Under -o json stdout holds the JSON document alone; people read stderr.
            (self.err if self.json_output else self.console).print(*objects)

    def warn(self, message: str) -> None:
        self.err.print(f"[yellow]warning:[/] {redact(message)}")


STATE = CliState()


def state(ctx: typer.Context | None = None) -> CliState:
    """The current CLI state."""
    return STATE


class _RedactingFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        record.msg = redact(record.getMessage())
        record.args = None
        return True


class _DebugLogHandler(logging.FileHandler):
    """The --debug log file handler (one at a time: -C after --debug moves it)."""


def configure_logging(project: Path, debug: bool) -> None:
    """--debug: log everything to .agentopt/agentopt.log with secrets redacted.

    Called again when -C comes after --debug on the command line: the log then moves to the
    new project folder (one handler at a time)."""
    if not debug:
        return
    from agentopt.core.paths import state_dir

    path = state_dir(project) / "agentopt.log"
    root = logging.getLogger("agentopt")
    for old in [h for h in root.handlers if isinstance(h, _DebugLogHandler)]:
        root.removeHandler(old)
        old.close()
    handler = _DebugLogHandler(path, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.addFilter(_RedactingFilter())
    root.setLevel(logging.DEBUG)
    root.addHandler(handler)
