"""`--output PATH` (repeatable) and `eval show --out-file`: the format comes from the extension.

Check the paths with `check_output_paths` before a run starts, so a typo fails in a second,
not after an hour of agent calls. Every file is written atomically, with credentials
redacted; writing over the dataset itself (an M365 document filled in place) backs it up first.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentopt.contracts.run_results import RunResults, redacted
from agentopt.core.atomic import backup, write_json_atomic, write_text_atomic
from agentopt.core.errors import ConfigError, Problem
from agentopt.core.redaction import redact_data

__all__ = ["OUTPUT_FORMATS", "OutputFile", "check_output_paths", "write_outputs"]

OUTPUT_FORMATS: dict[str, str] = {
    ".json": "results JSON (for an M365 dataset: the document with outputs filled in)",
    ".html": "self-contained HTML report",
    ".xml": "JUnit XML",
    ".csv": "CSV, one row per task",
    ".md": "GitHub-flavoured Markdown summary",
}
_TEXT_RENDERERS: dict[str, tuple[str, str]] = {
    ".html": ("agentopt.reports.html", "render_html"),
    ".xml": ("agentopt.reports.junit", "render_junit"),
    ".csv": ("agentopt.reports.csv_report", "render_csv"),
    ".md": ("agentopt.reports.markdown", "render_markdown"),
}
"""Each format's renderer, imported when a file of that format is written."""


def _renderer(ext: str) -> Callable[[RunResults], str]:
    module, name = _TEXT_RENDERERS[ext]
    return getattr(importlib.import_module(module), name)  # type: ignore[no-any-return]


@dataclass(frozen=True)
class OutputFile:
    """One written output."""

    path: Path
    format: str
    """The extension that chose the format, e.g. ".html"."""
    backup: Path | None = None
    """Set when an existing dataset file was backed up before being overwritten."""


def check_output_paths(paths: Sequence[Path | str], *, flag: str = "--output") -> list[Path]:
    """Every path must end in a known extension; all bad ones are reported at once."""
    problems = []
    for p in paths:
        if Path(p).suffix.lower() not in OUTPUT_FORMATS:
            found = Path(p).suffix or "no extension"
            problems.append(
                Problem(
                    "",
                    flag,
                    f"{p}: unknown report format '{found}'; expected one of "
                    + ", ".join(OUTPUT_FORMATS),
                )
            )
    if problems:
        raise ConfigError(
            problems=problems,
            hint="formats: " + "; ".join(f"{ext} = {what}" for ext, what in OUTPUT_FORMATS.items()),
        )
    return [Path(p) for p in paths]


def write_outputs(
    results: RunResults,
    paths: Sequence[Path | str],
    *,
    m365_document: dict[str, Any] | None = None,
    agent_name: str | None = None,
    cli_version: str | None = None,
    flag: str = "--output",
) -> list[OutputFile]:
    """Write each requested report; `.json` is the filled M365 document when one is given."""
    targets = check_output_paths(paths, flag=flag)
    if not targets:
        return []
    safe = redacted(results)  # only what is written is redacted, once
    written = []
    for path in targets:
        ext = path.suffix.lower()
        saved = _backup_if_dataset(path, results)
        if ext == ".json":
            if m365_document is not None:
                from agentopt.reports.m365_output import fill_m365_document

                data = fill_m365_document(
                    redact_data(m365_document), safe, agent_name=agent_name, cli_version=cli_version
                )
            else:
                from agentopt.reports.json_report import results_to_dict

                data = results_to_dict(safe)
            write_json_atomic(path, data)
        else:
            write_text_atomic(path, _renderer(ext)(safe))
        written.append(OutputFile(path=path, format=ext, backup=saved))
    return written


def _backup_if_dataset(path: Path, results: RunResults) -> Path | None:
    source = results.run.dataset.source
    if not source or not path.exists():
        return None
    try:
        same = path.resolve() == Path(source).resolve()
    except OSError:
        return None
    return backup(path) if same else None
