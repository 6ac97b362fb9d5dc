"""Reading agentopt's own source and docs for the tests that hold the docs' statements: the
modules with their syntax trees, and a page split into the statements it makes."""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).parents[2]
PACKAGE = REPO / "agentopt"
_TITLE = re.compile(r"^\*\*[^*]+\*\*\s*")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`(])")


@dataclass(frozen=True)
class Module:
    path: Path
    tree: ast.Module

    @property
    def rel(self) -> str:
        """`cli/errors.py`: the path under `agentopt/`."""
        return self.path.relative_to(PACKAGE).as_posix()

    @property
    def package(self) -> str:
        """The first folder under `agentopt/` (`cli`), or the module's stem at the top."""
        return self.rel.split("/")[0].removesuffix(".py")


@functools.cache
def modules() -> tuple[Module, ...]:
    return tuple(
        Module(path, ast.parse(path.read_text(encoding="utf-8")))
        for path in sorted(PACKAGE.rglob("*.py"))
    )


def imported_modules(tree: ast.AST) -> Iterator[tuple[int, str]]:
    """(line, top-level-or-dotted name) of every absolute import, inside functions too."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from ((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            yield node.lineno, node.module


def called_name(node: ast.Call) -> str | None:
    """`f` for `f(...)`, `attr` for `x.attr(...)`."""
    if isinstance(node.func, ast.Name):
        return node.func.id
    if isinstance(node.func, ast.Attribute):
        return node.func.attr
    return None


def docstrings(tree: ast.AST) -> set[int]:
    """ids of the string constants that are docstrings (module, class, function, attribute)."""
    found: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if not isinstance(body, list):
            continue
        for stmt in body:
            if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
                found.add(id(stmt.value))
    return found


def statements(markdown: str) -> list[str]:
    """The statements of a page: its paragraphs' sentences, and each table row's sentences
    prefixed with the row's second cell; headings, the table's head and emphasis dropped."""
    out: list[str] = []
    para: list[str] = []

    def flush() -> None:
        if para:
            out.extend(_SENTENCE_END.split(" ".join(para).replace("**", "")))
            para.clear()

    for raw in markdown.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", "|---")):
            flush()
        elif line.startswith("|"):
            flush()
            cells = [c.strip() for c in line.strip("|").split("|")]
            if cells[0].isdigit():
                out.extend(f"{cells[1]}: {s}" for s in _SENTENCE_END.split(cells[2]))
        else:  # a paragraph's bold lead ("**One home per record.**") is its title
            para.append(_TITLE.sub("", line) if not para else line)
    flush()
    return out


def squash(text: str) -> str:
    return " ".join(text.split())
