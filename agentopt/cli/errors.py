"""The one place where exceptions become exit codes and messages (style.md rule 4)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

import typer
from rich.markup import escape

from agentopt.cli.context import STATE
from agentopt.core.errors import AgentoptError, InputError, printable
from agentopt.core.redaction import redact

F = TypeVar("F", bound=Callable[..., Any])


def report_error(err: AgentoptError) -> None:
    """Print an error the way users read it: every problem on its own line, then the hint."""
    con = STATE.err
    if isinstance(err, InputError) and err.problems:
        errors = [p for p in err.problems if p.severity == "error"]
        for p in err.problems:
            colour = "red" if p.severity == "error" else "yellow"
            con.print(
                f"[{colour}]{p.severity}:[/] {escape(redact(str(p)))}", soft_wrap=True, emoji=False
            )
        if not errors:
            con.print(
                f"[red]error:[/] {escape(redact(printable(err.message)))}",
                soft_wrap=True,
                emoji=False,
            )
    else:
        con.print(
            f"[red]error:[/] {escape(redact(printable(err.message)))}", soft_wrap=True, emoji=False
        )
    if err.hint:
        con.print(f"  → {escape(redact(printable(err.hint)))}", soft_wrap=True)


def handle_errors(fn: F) -> F:
    """Decorate a command: AgentoptError → its exit code; Ctrl-C → 130."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except AgentoptError as err:
            report_error(err)
            raise typer.Exit(err.exit_code) from None
        except KeyboardInterrupt:
            STATE.err.print("[yellow]interrupted[/]")
            raise typer.Exit(130) from None

    return wrapper  # type: ignore[return-value]


def not_implemented(command: str) -> None:
    """Commands filled by later work exit 2 with a clear message until then."""
    from agentopt.core.errors import ConfigError

    raise ConfigError(f"`agentopt {command}` is not implemented yet in this version")
