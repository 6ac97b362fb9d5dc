"""The global options of cli.md — `-C/--cwd`, `-e/--environment`, `--no-prompt`, `--debug`,
`-q/--quiet`, and azd's `-o/--output json|table` — accepted before or after the command, on
every command.

azd declares them as cobra persistent flags, and scripts copied from its docs put them last
(`azd ai agent eval run --no-prompt -e dev`); promptfoo and most CLIs accept them anywhere.
They are declared once here, as typer options, and the same parameter objects are attached to
the root, every group and every command of the tree (`attach_global_options`), so click parses
them wherever they stand and every `--help` lists them in a "Global options" panel. Each
option's callback writes `STATE` when the option is given; the last occurrence wins.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer
import typer.main

from agentopt.cli.context import STATE, configure_logging

PANEL = "Global options"
_ATTACHED = "_agentopt_globals"


def _given(value: Any) -> bool:
    return value not in (None, False)


def _set_cwd(value: Path | None) -> Path | None:
    if _given(value):
        assert value is not None
        if not value.is_dir():
            raise typer.BadParameter(f"'{value}' is not a directory", param_hint="-C/--cwd")
        STATE.cwd = value.resolve()
        configure_logging(STATE.cwd, STATE.debug)
    return value


def _set_environment(value: str | None) -> str | None:
    if _given(value):
        assert value is not None
        if not value.strip():
            raise typer.BadParameter("expected an environment name", param_hint="-e/--environment")
        STATE.environment = value.strip()
    return value


def _set_no_prompt(value: bool) -> bool:
    if value:
        STATE.no_prompt = True
    return value


def _set_debug(value: bool) -> bool:
    if value:
        STATE.debug = True
        configure_logging(STATE.cwd, True)
    return value


def _set_quiet(value: bool) -> bool:
    if value:
        STATE.quiet = True
    return value


OUTPUT_FORMATS = ("json", "table")


def _set_output(value: str | None) -> str | None:
    if _given(value):
        assert value is not None
        if value.lower() not in OUTPUT_FORMATS:
            raise typer.BadParameter(
                f"expected json or table, found {value!r}", param_hint="-o/--output"
            )
        STATE.output_format = value.lower()
    return value


def _set_call_timeout(value: float | None) -> float | None:
    if value is not None:
        if value <= 0:
            raise typer.BadParameter(
                f"expected a number of seconds above 0, found {value:g}",
                param_hint="--call-timeout",
            )
        STATE.call_timeout = value
    return value


@dataclass(frozen=True)
class _Global:
    """One global option: its parameter's name and type, its spellings, and the callback that
    writes it to `STATE` when given."""

    name: str
    kind: Any
    decls: tuple[str, ...]
    help: str
    callback: Callable[[Any], Any]
    metavar: str | None = None


GLOBALS = (
    _Global("cwd", Path | None, ("-C", "--cwd"), "Run as if started in DIR.", _set_cwd, "DIR"),
    _Global(
        "environment",
        str | None,
        ("-e", "--environment"),
        "azd environment: reads .azure/NAME/.env (default: AZURE_ENV_NAME, then "
        ".azure/config.json).",
        _set_environment,
        "NAME",
    ),
    _Global(
        "no_prompt",
        bool,
        ("--no-prompt",),
        "Never ask; fail with a message naming the missing flag.",
        _set_no_prompt,
    ),
    _Global(
        "debug", bool, ("--debug",), "Log to .agentopt/agentopt.log (secrets redacted).", _set_debug
    ),
    _Global("quiet", bool, ("-q", "--quiet"), "Print less.", _set_quiet),
    _Global(
        "output_format",
        str | None,
        ("-o", "--output"),
        "Output format of read commands (azd's global -o). On `eval run`, -o FILE writes a "
        "report; -o json prints the results as JSON.",
        _set_output,
        "json|table",
    ),
    _Global(
        "call_timeout",
        float | None,
        ("--call-timeout",),
        "Deadline of one model call, retries included (default: eval.yaml "
        "options.call_timeout_seconds, else 120 s, raised for the embedded model and "
        "self-hosted servers to what the tokens asked need at the measured speed).",
        _set_call_timeout,
        "SECONDS",
    ),
)


def _global_params() -> list[Any]:
    """The click parameters of `GLOBALS`, built by typer (its types, its rich help) from a
    signature made of them; none shows a default, all sit in the "Global options" panel."""

    def declarations() -> None:
        """Never called: typer reads its signature."""

    parameters = [
        inspect.Parameter(
            g.name,
            inspect.Parameter.KEYWORD_ONLY,
            default=False if g.kind is bool else None,
            annotation=Annotated[
                g.kind,
                typer.Option(
                    *g.decls,
                    metavar=g.metavar,
                    help=g.help,
                    show_default=False,
                    callback=g.callback,
                    rich_help_panel=PANEL,
                ),
            ],
        )
        for g in GLOBALS
    ]
    declarations.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    declarations.__annotations__ = {p.name: p.annotation for p in parameters}
    holder = typer.Typer()
    holder.command()(declarations)
    params = list(typer.main.get_command(holder).params)
    for param in params:
        param.expose_value = False  # the callbacks write STATE; commands never see them
    return params


GLOBAL_PARAMS = _global_params()
GLOBAL_NAMES = frozenset(p.name for p in GLOBAL_PARAMS)


def attach_global_options(command: Any) -> None:
    """Add the global options to `command` and, recursively, to every subcommand (once)."""
    if getattr(command, _ATTACHED, False):
        return
    own = {p.name for p in command.params}
    taken = {opt for p in command.params for opt in getattr(p, "opts", [])}
    # A command's own option of the same spelling wins (`eval run -o FILE` writes a report).
    command.params.extend(
        p for p in GLOBAL_PARAMS if p.name not in own and not taken.intersection(p.opts)
    )
    setattr(command, _ATTACHED, True)
    for sub in getattr(command, "commands", {}).values():
        attach_global_options(sub)
