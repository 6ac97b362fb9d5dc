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


def _declarations(
    cwd: Annotated[
        Path | None,
        typer.Option(
            "-C",
            "--cwd",
            metavar="DIR",
            help="Run as if started in DIR.",
            show_default=False,
            callback=_set_cwd,
            rich_help_panel=PANEL,
        ),
    ] = None,
    environment: Annotated[
        str | None,
        typer.Option(
            "-e",
            "--environment",
            metavar="NAME",
            help="azd environment: reads .azure/NAME/.env "
            "(default: AZURE_ENV_NAME, then .azure/config.json).",
            show_default=False,
            callback=_set_environment,
            rich_help_panel=PANEL,
        ),
    ] = None,
    no_prompt: Annotated[
        bool,
        typer.Option(
            "--no-prompt",
            help="Never ask; fail with a message naming the missing flag.",
            callback=_set_no_prompt,
            rich_help_panel=PANEL,
        ),
    ] = False,
    debug: Annotated[
        bool,
        typer.Option(
            "--debug",
            help="Log to .agentopt/agentopt.log (secrets redacted).",
            callback=_set_debug,
            rich_help_panel=PANEL,
        ),
    ] = False,
    quiet: Annotated[
        bool,
        typer.Option(
            "-q", "--quiet", help="Print less.", callback=_set_quiet, rich_help_panel=PANEL
        ),
    ] = False,
    output_format: Annotated[
        str | None,
        typer.Option(
            "-o",
            "--output",
            metavar="json|table",
            help="Output format of read commands (azd's global -o). On `eval run`, -o FILE "
            "writes a report; -o json prints the results as JSON.",
            show_default=False,
            callback=_set_output,
            rich_help_panel=PANEL,
        ),
    ] = None,
    call_timeout: Annotated[
        float | None,
        typer.Option(
            "--call-timeout",
            metavar="SECONDS",
            help="Deadline of one model call, retries included (default: eval.yaml "
            "options.call_timeout_seconds, else 120 s, raised for the embedded model and "
            "self-hosted servers to what the tokens asked need at the measured speed).",
            show_default=False,
            callback=_set_call_timeout,
            rich_help_panel=PANEL,
        ),
    ] = None,
) -> None:
    """Never called: typer turns this signature into the global click parameters."""


def _global_params() -> list[Any]:
    holder = typer.Typer()
    holder.command()(_declarations)
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
