"""Commands imported when they are used, so `agentopt --version` and `eval validate` do not
pay for `eval run`'s call layer, the optimizer and every report (1.1–1.3 s of CPU before;
≤ 0.4 s is the budget).

A group built with `lazy_group({...})` lists its commands by name and imports a command's
module only when click asks for that command to run it (or to show its own `--help`). A
`--help` that only lists the commands shows each one's static short help (`Lazy.help`) and
imports none of them: it imported every command module to print one line each (768 modules,
0.6–0.8 s of CPU against `--version`'s 0.2). tests/test_cli_help.py checks each static line
against the command's own help. A lazy command is a typer app (a subgroup) or a command
function registered with its epilog, exactly as `Typer.add_typer` / `Typer.command` would;
global options are attached as it loads.
"""

from __future__ import annotations

import gc
import importlib
from dataclasses import dataclass
from typing import Any

import typer
import typer.main
from typer.core import TyperCommand, TyperGroup

from agentopt.cli.global_options import attach_global_options


@dataclass(frozen=True)
class Lazy:
    """Where a command lives: `module.attr`, a `typer.Typer` or a command function."""

    module: str
    attr: str
    epilog: str | None = None
    """The command's examples (function commands; a typer app carries its own)."""
    help: str = ""
    """The first paragraph of the command's help, as a group's `--help` lists it."""


def load(name: str, spec: Lazy) -> Any:
    """The click command of `spec`, named `name` (typer's own click).

    The command's module is imported with the cycle collector paused: importing `eval run`
    makes ~130 collections that find ~2,000 objects to free among the ~200,000 the imports
    build, 4-5% of the import's instructions."""
    paused = gc.isenabled()
    gc.disable()
    try:
        module = importlib.import_module(spec.module)
    finally:
        if paused:
            gc.enable()
    target: Any = getattr(module, spec.attr)
    if isinstance(target, typer.Typer):
        command: Any = typer.main.get_group(target)
    else:
        holder = typer.Typer(rich_markup_mode="rich")
        holder.command(name, epilog=spec.epilog)(target)
        command = typer.main.get_command(holder)
    command.name = name
    attach_global_options(command)
    return command


def lazy_group(commands: dict[str, Lazy], base: type[TyperGroup] = TyperGroup) -> type[TyperGroup]:
    """A `TyperGroup` subclass whose `commands` load on first use, listed in this order before
    the group's own."""

    class LazyGroup(base):  # type: ignore[valid-type, misc]
        _listing = False
        """True while this group's own help is printed: commands are only listed."""

        def list_commands(self, ctx: Any) -> list[str]:
            own = [n for n in super().list_commands(ctx) if n not in commands]
            return [*commands, *own]

        def get_command(self, ctx: Any, cmd_name: str) -> Any:
            found = super().get_command(ctx, cmd_name)
            if found is None and cmd_name in commands:
                spec = commands[cmd_name]
                if self._listing and spec.help:
                    return TyperCommand(cmd_name, short_help=spec.help)  # a line of the list
                found = load(cmd_name, spec)
                self.add_command(found, cmd_name)
            return found

        def format_help(self, ctx: Any, formatter: Any) -> None:
            self._listing = True
            try:
                super().format_help(ctx, formatter)
            finally:
                self._listing = False

    return LazyGroup
