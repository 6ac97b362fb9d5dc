"""The one place where exceptions become exit codes and messages (style.md rule 4)."""

from __future__ import annotations

import errno
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
        except (OSError, BaseExceptionGroup) as exc:
            storage = storage_error(exc)
            if storage is None:
                if isinstance(exc, OSError) and exc.errno in _BAD_NAME:  # a path from input
                    shown = printable(str(exc.filename))[:200]
                    STATE.err.print(
                        f"[red]error:[/] {escape(redact(shown))}: {exc.strerror}; a path in "
                        "the input is wrong (too long, or a loop of links)",
                        soft_wrap=True,
                        emoji=False,
                    )
                    raise typer.Exit(2) from None
                raise
            STATE.err.print(
                f"[red]error:[/] {escape(redact(storage))}", soft_wrap=True, emoji=False
            )
            raise typer.Exit(3) from None

    return wrapper  # type: ignore[return-value]


_FULL = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})
_READ_ONLY = frozenset({errno.EROFS})
_DENIED = frozenset({errno.EACCES, errno.EPERM})
_BAD_NAME = frozenset({errno.ENAMETOOLONG, errno.ELOOP})


def storage_error(exc: BaseException) -> str | None:
    """One line for a disk that refused a write (full, read-only, no permission), found in
    `exc`, its causes or the exceptions it groups (a journal's fsync on a writer thread, under
    a TaskGroup); None when `exc` is something else (then it is a bug: the traceback stays)."""
    seen: set[int] = set()
    stack: list[BaseException] = [exc]
    while stack:
        err = stack.pop()
        if id(err) in seen:
            continue
        seen.add(id(err))
        if isinstance(err, BaseExceptionGroup):
            stack.extend(err.exceptions)
        if isinstance(err, OSError) and err.errno in _FULL | _READ_ONLY | _DENIED:
            return _storage_line(err)
        stack.extend(e for e in (err.__cause__, err.__context__) if e is not None)
    return None


def _storage_line(err: OSError) -> str:
    path = printable(str(err.filename)) if err.filename is not None else "a file agentopt writes"
    if err.errno in _FULL:
        return (
            f"cannot write {path}: no space left on the device (or the quota is used up); "
            "free some space, then run the command again (`eval run --resume RUN_ID` keeps "
            "the finished tasks)"
        )
    if err.errno in _READ_ONLY:
        return (
            f"cannot write {path}: the file system is read-only; run from a writable copy of "
            "the project (eval list, eval show and optimize status work as they are)"
        )
    return f"cannot write {path}: permission denied; give your user write access to it"


def not_implemented(command: str) -> None:
    """Commands filled by later work exit 2 with a clear message until then."""
    from agentopt.core.errors import ConfigError

    raise ConfigError(f"`agentopt {command}` is not implemented yet in this version")
