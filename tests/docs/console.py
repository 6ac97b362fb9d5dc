"""The console blocks of README.md and docs/*.md: what the docs tell a user to type, and the
output they show for it (issue 39 item 4).

A console block is a fenced block tagged `console`, `bash`, `sh` or `shell`, or a `text` block
whose first line is a `$ ` prompt (a pasted terminal session). In a session, lines after a
`$ ` command up to the next prompt are that command's output; in a script block every line is a
command. A block the tests cannot run says why in an HTML comment on the line before it:

    <!-- illustration: needs a Foundry project -->
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
FENCE = re.compile(r"^```(\S*)")
ILLUSTRATION = re.compile(r"^<!--\s*illustration:\s*(.+?)\s*-->\s*$")
SHELLS = {"console", "bash", "sh", "shell"}


@dataclass
class Command:
    argv: list[str]
    """The arguments after `agentopt` (empty when the command is another program)."""
    program: str
    line: int
    shown: list[str] = field(default_factory=list)
    """The output the docs show for it (a session block), as printed."""

    @property
    def is_agentopt(self) -> bool:
        return self.program == "agentopt"


@dataclass
class Block:
    path: Path
    line: int
    """1-based line of the opening fence."""
    lang: str
    commands: list[Command]
    illustration: str | None
    """The marked reason the block is not run, if it is marked."""

    @property
    def id(self) -> str:
        return f"{self.path.relative_to(REPO)}:{self.line}"


def doc_files() -> list[Path]:
    return [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


def _commands(body: list[str], first: int, session: bool) -> list[Command]:
    out: list[Command] = []
    pending = ""
    for offset, raw in enumerate(body):
        line = raw.rstrip()
        if session and not line.startswith("$ ") and not pending:
            if out:
                out[-1].shown.append(line)
            continue
        text = line[2:] if session and line.startswith("$ ") and not pending else line
        if text.endswith("\\"):
            pending += text[:-1] + " "
            continue
        text, pending = pending + text, ""
        words = shlex.split(text, comments=True)
        if words:
            out.append(Command(words[1:], words[0], first + offset))
    return out


def blocks(path: Path) -> list[Block]:
    lines = path.read_text(encoding="utf-8").split("\n")
    found: list[Block] = []
    i = 0
    while i < len(lines):
        fence = FENCE.match(lines[i])
        if not fence:
            i += 1
            continue
        end = next(j for j in range(i + 1, len(lines)) if lines[j].strip() == "```")
        body = lines[i + 1 : end]
        lang = fence.group(1)
        session = bool(body) and body[0].startswith("$ ")
        if lang in SHELLS or (lang == "text" and session):
            marker = ILLUSTRATION.match(lines[i - 1]) if i else None
            found.append(
                Block(
                    path=path,
                    line=i + 1,
                    lang=lang,
                    commands=_commands(body, i + 2, session),
                    illustration=marker.group(1) if marker else None,
                )
            )
        i = end + 1
    return found


def every_block() -> list[Block]:
    return [b for path in doc_files() for b in blocks(path)]
