"""`agentopt cache stats|clear`: the model-call cache (.agentopt/cache.sqlite)."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table

from agentopt.cli.context import STATE
from agentopt.cli.errors import handle_errors
from agentopt.core.errors import ConfigError
from agentopt.models.cache_admin import cache_clear, cache_stats, parse_age

cache_app = typer.Typer(
    help="Inspect or clear the model-call cache.",
    no_args_is_help=True,
    epilog="Examples:\n\n  agentopt cache stats\n\n  agentopt cache clear --older-than 30d",
)


def _size(n: int) -> str:
    value = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{n} B"


@cache_app.command("stats", epilog="Example:\n\n  agentopt cache stats")
@handle_errors
def stats_command() -> None:
    """Entries, size on disk, hits and a per-model breakdown of the cache."""
    stats = cache_stats(STATE.cwd)
    if STATE.json_output:
        STATE.emit_json(stats.model_dump(mode="json"))
        return
    if not stats.exists:
        STATE.say(f"No cache yet ({stats.path}).")
        return
    STATE.say(
        f"Cache {stats.path}: {stats.entries} entries, {_size(stats.size_bytes)} on disk, "
        f"{stats.hits} hits on these entries (per model below)"
    )
    gone = stats.lifetime_hits - stats.hits
    STATE.say(
        f"Since created or last cleared: {stats.lifetime_hits} hits"
        + (f" ({gone} on entries since removed or rewritten)" if gone else "")
        + f", {stats.misses} misses"
    )
    if stats.oldest:
        STATE.say(f"Oldest {stats.oldest:%Y-%m-%d %H:%M}, newest {stats.newest:%Y-%m-%d %H:%M}")
    if stats.by_model:
        table = Table("provider", "model", "kind", "entries", "hits", "size")
        for row in stats.by_model:
            table.add_row(
                row.provider,
                row.model,
                row.kind,
                str(row.entries),
                str(row.hits),
                _size(row.payload_bytes),
            )
        STATE.say(table)


@cache_app.command(
    "clear", epilog="Examples:\n\n  agentopt cache clear\n\n  agentopt cache clear --older-than 7d"
)
@handle_errors
def clear_command(
    older_than: Annotated[
        str | None,
        typer.Option("--older-than", help="Only entries older than this: 90s, 30m, 12h, 7d, 2w."),
    ] = None,
) -> None:
    """Delete cached model calls (all, or those older than --older-than)."""
    if older_than is not None:
        try:
            parse_age(older_than)
        except (ValueError, TypeError) as exc:
            raise ConfigError.at(
                "", "--older-than", f"expected e.g. 7d or 12h, found {older_than!r}"
            ) from exc
    removed = cache_clear(STATE.cwd, older_than)
    STATE.say(f"Removed {removed} cached call{'s' if removed != 1 else ''}.")
