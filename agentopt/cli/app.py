"""The `agentopt` command tree. Each group lives in its own module, imported when it is used
(`lazy.py`); this one wires them up and owns the global options (cli.md)."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from agentopt import __version__
from agentopt.cli import (
    help_format,  # noqa: F401  (flags show no <bool> in --help)
    lean_params,  # noqa: F401  (no pydantic adapter for a plain path)
)
from agentopt.cli.argv import expand_variadic_options
from agentopt.cli.context import STATE
from agentopt.cli.global_options import attach_global_options
from agentopt.cli.lazy import Lazy, lazy_group
from agentopt.cli.runevals_argv import fill_optional_values
from agentopt.core import heap

EPILOG = (
    "Examples:\n\n"
    "  agentopt eval init                      # guided first run in an azd project\n\n"
    "  agentopt eval run --output report.html  # run the suite of ./eval.yaml\n\n"
    '  agentopt eval run --prompts "What is 2+2?" --expected 4 --evaluator ExactMatch\n\n'
    "  agentopt optimize --max-candidates 3    # search for better instructions\n\n"
    "  agentopt eval run --no-prompt -e dev    # global options go before or after the command\n\n"
    "Docs: README.md and docs/ in the repository."
)


class _Group(TyperGroup):
    """Root group that accepts `--prompts P1 P2 …` (see argv.py) and the global options on
    every command (see global_options.py), however it is invoked."""

    def main(self, args: Sequence[str] | None = None, *a: Any, **kw: Any) -> Any:
        argv = list(sys.argv[1:] if args is None else args)
        attach_global_options(self)
        STATE.reset()
        argv = fill_optional_values(expand_variadic_options(argv))  # `--log-level` alone
        return super().main(argv, *a, **kw)


COMMANDS = {
    "view": Lazy(
        "agentopt.cli.view_cmd",
        "view_command",
        "Example:\n\n  agentopt view --port 8765",
        help="Serve runs, optimize jobs and matrices on http://127.0.0.1:PORT (local only, "
        "read-only).",
    ),
    "eval": Lazy(
        "agentopt.cli.eval_cmd", "eval_app", help="Create, run and maintain evaluation suites."
    ),
    "optimize": Lazy(
        "agentopt.cli.optimize_cmd",
        "optimize_app",
        help="Search for a better agent configuration and apply the winner.",
    ),
    "cache": Lazy(
        "agentopt.cli.cache_cmd", "cache_app", help="Inspect or clear the model-call cache."
    ),
}

app = typer.Typer(
    name="agentopt",
    cls=lazy_group(COMMANDS, base=_Group),
    help="Build, run and optimize evaluation suites for LLM agents — locally, on any model.",
    epilog=EPILOG,
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode="rich",
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"agentopt {__version__}")
        raise typer.Exit(0)


@app.callback()
def root(
    version: Annotated[
        bool,
        typer.Option("--version", "-V", callback=_version, is_eager=True, help="Show the version."),
    ] = False,
) -> None:
    """Build, run and optimize evaluation suites for LLM agents — locally, on any model.

    The global options (-C, -e, --no-prompt, --debug, -q) go before or after the command."""


def main() -> None:
    """Console-script entry point."""
    for stream in (sys.stdout, sys.stderr):
        # Whatever a user file holds (a lone surrogate, say), printing it never raises.
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")
    from agentopt.agents.process_guard import install_signal_handlers

    install_signal_handlers()  # SIGTERM / SIGHUP stop the agent processes first
    heap.enable()  # this process ends with the command (core/heap.py)
    try:
        app(prog_name="agentopt")
    except SystemExit as done:  # typer always ends this way; see fast_exit.py for why
        from agentopt.cli.fast_exit import exit_now

        exit_now(done.code)
