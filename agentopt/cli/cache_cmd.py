"""`agentopt cache stats|clear`: the model-call cache (.agentopt/cache.sqlite)."""

from __future__ import annotations

from typing import Annotated

import typer

from agentopt.cli.errors import handle_errors, not_implemented

cache_app = typer.Typer(
    help="Inspect or clear the model-call cache.",
    no_args_is_help=True,
    epilog="Examples:\n\n  agentopt cache stats\n\n  agentopt cache clear --older-than 30",
)


@cache_app.command("stats")
@handle_errors
def stats_command() -> None:
    """Entries, size on disk and models in the cache."""
    not_implemented("cache stats")


@cache_app.command("clear")
@handle_errors
def clear_command(
    older_than: Annotated[
        float | None, typer.Option("--older-than", help="Only entries older than N days.")
    ] = None,
) -> None:
    """Delete cached model calls."""
    not_implemented("cache clear")
