"""`agentopt view`: a read-only local web view of runs and optimization jobs."""

from __future__ import annotations

from typing import Annotated

import typer

from agentopt.cli.errors import handle_errors, not_implemented


@handle_errors
def view_command(
    port: Annotated[int, typer.Option("--port", help="Port on 127.0.0.1.")] = 8765,
) -> None:
    """Serve .agentopt/ runs and jobs on http://127.0.0.1:PORT (local only, read-only)."""
    not_implemented("view")
