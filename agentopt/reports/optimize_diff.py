"""Diffs between agent configurations: the instruction diff of the final report and the HTML
report (and the view's job page), and the whole-folder diff of `optimize show` / `optimize
apply`."""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping
from pathlib import Path

TEXT_SUFFIXES = frozenset({".md", ".yaml", ".yml", ".json", ".txt", ".py"})
LINE_CLASSES = {"+": "add", "-": "del", "@": "hunk"}


def unified_diff(old: str, new: str, old_name: str = "a", new_name: str = "b") -> list[str]:
    """Unified diff lines (no trailing newlines); empty when equal."""
    return [
        line.rstrip("\n")
        for line in difflib.unified_diff(
            old.splitlines(), new.splitlines(), old_name, new_name, lineterm="", n=2
        )
    ]


def diff_html(lines: list[str], escape: Callable[[object], str], *, header_class: str = "") -> str:
    """A diff as an HTML `<pre>`, each added, removed and hunk line in a span of its class; the
    `+++`/`---` file lines get `header_class` (none: plain). `escape` is the page's own (the
    view's also masks credentials)."""
    out = []
    for line in lines:
        cls = header_class if line.startswith(("+++", "---")) else LINE_CLASSES.get(line[:1], "")
        out.append(f'<span class="{cls}">{escape(line)}</span>' if cls else escape(line))
    return '<pre class="diff">' + "\n".join(out) + "</pre>"


def changed_lines(diff: list[str], limit: int) -> list[str]:
    """The first `limit` added/removed lines of a diff (headers and context left out)."""
    out = [line for line in diff if line[:1] in "+-" and not line.startswith(("+++", "---"))]
    return out[:limit]


def folder_texts(folder: Path) -> dict[str, str]:
    """Relative path → text of every text file of a configuration folder."""
    out: dict[str, str] = {}
    if not folder.is_dir():
        return out
    for path in sorted(folder.rglob("*")):
        if path.is_file() and path.suffix in TEXT_SUFFIXES:
            try:
                out[path.relative_to(folder).as_posix()] = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
    return out


def config_texts(files: Mapping[str, bytes]) -> dict[str, str]:
    """`folder_texts` of a configuration not written to disk (relative path → bytes, as
    `agent_config_files` makes them)."""
    out: dict[str, str] = {}
    for name in sorted(files):
        if Path(name).suffix in TEXT_SUFFIXES:
            try:
                out[name] = files[name].decode("utf-8")
            except UnicodeDecodeError:
                continue
    return out


def folder_diff(old: Path, new: Path, old_label: str, new_label: str) -> list[str]:
    """A unified diff of two configuration folders, file by file."""
    return texts_diff(folder_texts(old), folder_texts(new), old_label, new_label)


def texts_diff(
    a: Mapping[str, str], b: Mapping[str, str], old_label: str, new_label: str
) -> list[str]:
    """A unified diff of two configurations' text files (`folder_texts`), file by file."""
    lines: list[str] = []
    for name in sorted(set(a) | set(b)):
        lines += unified_diff(
            a.get(name, ""), b.get(name, ""), f"{old_label}/{name}", f"{new_label}/{name}"
        )
    return lines
