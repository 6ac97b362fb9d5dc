"""The `agentopt` command tree (placeholder; the CLI work fills it in)."""

from __future__ import annotations

import typer

app = typer.Typer(name="agentopt", no_args_is_help=True, add_completion=False)


@app.callback()
def _root() -> None:
    """Build, run and optimize evaluation suites for LLM agents."""


def main() -> None:
    app()
