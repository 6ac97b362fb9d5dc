"""`agentopt eval list` and `agentopt eval show`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from agentopt.cli.errors import handle_errors, not_implemented


@handle_errors
def list_command(
    limit: Annotated[int, typer.Option("--limit", help="How many recent runs.")] = 20,
) -> None:
    """List recent runs: id, name, date, dataset version, score, pass rate, errors."""
    not_implemented("eval list")


@handle_errors
def show_command(
    run_id: Annotated[str | None, typer.Argument(help="Run id (default: the latest).")] = None,
    task: Annotated[str | None, typer.Option("--task", help="Print one task's transcript.")] = None,
    compare: Annotated[
        str | None, typer.Option("--compare", help="Per-task and per-evaluator deltas vs RUN_ID.")
    ] = None,
    out_file: Annotated[
        Path | None,
        typer.Option("--out-file", help="Export (.json, .html, .csv, .xml, .md by extension)."),
    ] = None,
) -> None:
    """Show the summary of one run (default: the latest)."""
    not_implemented("eval show")
