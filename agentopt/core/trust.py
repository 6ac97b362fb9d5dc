"""The trust model for code an eval file names (issue 38 item 7; docs/concepts.md "Code an
eval file runs"): evaluator classes and `module:callable` entry points, an agent's tools
module, MCP server commands.

- `--dry-run` (and the checks every command makes before it runs) executes none of it: code
  evaluators are parsed, not imported; tools modules load on the first tool call; MCP servers
  start on the first turn.
- A real run executes it, as `pytest` runs a test file: the eval file is code. What a run is
  about to execute for the first time — a file outside the project, or one that is new or
  changed since the last run in this project — is announced on its own line before it runs,
  so a suite pulled from somewhere else cannot run code unseen. What was announced is recorded
  in `.agentopt/trusted-code.json` (path or command → SHA-256); the next run is silent about it.

The run workflow opens a ledger (`watch`); the loaders call `about_to_run` just before they
execute something. Without an open ledger (library use, tests) nothing is announced.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Callable, Iterator
from pathlib import Path

from agentopt.core.atomic import write_json_atomic
from agentopt.core.paths import state_dir

RECORD = "trusted-code.json"


class _Ledger:
    def __init__(self, project: Path, say: Callable[[str], None]) -> None:
        self.project = project.resolve()
        self.say = say
        self.path = state_dir(project) / RECORD
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            self.known: dict[str, str] = data if isinstance(data, dict) else {}
        except (OSError, ValueError):
            self.known = {}

    def about_to_run(self, what: str, file: Path | None, command: list[str] | None) -> None:
        if file is not None:
            where = Path(file).resolve()
            key = str(where)
            try:
                digest = hashlib.sha256(where.read_bytes()).hexdigest()
            except OSError:
                return  # the loader reports it
            try:
                shown = str(where.relative_to(self.project))
                outside = False
            except ValueError:
                shown, outside = key, True
        else:
            key = shown = " ".join(command or [])
            digest = hashlib.sha256(key.encode()).hexdigest()
            outside = False
        before = self.known.get(key)
        if before == digest:
            return
        if outside:
            why = "from outside the project"
        elif before is None:
            why = "for the first time"
        else:
            why = "changed since the last run"
        self.say(f"running {what} {why}: {shown}")
        self.known[key] = digest
        with contextlib.suppress(OSError):  # a read-only project: announced again next time
            write_json_atomic(self.path, self.known)


_OPEN: list[_Ledger] = []


@contextlib.contextmanager
def watch(project: Path, say: Callable[[str], None]) -> Iterator[None]:
    """Announce, while the block runs, code from the eval files run for the first time."""
    _OPEN.append(_Ledger(project, say))
    try:
        yield
    finally:
        _OPEN.pop()


def about_to_run(what: str, *, file: Path | None = None, command: list[str] | None = None) -> None:
    """Called by a loader right before it executes `file` or starts `command`."""
    if _OPEN:
        _OPEN[-1].about_to_run(what, file, command)
