"""Commands imported when they are used, so `agentopt --version` and `eval validate` do not
pay for `eval run`'s call layer, the optimizer and every report (1.1–1.3 s of CPU before;
≤ 0.4 s is the budget).

A group built with `lazy_group({...})` lists its commands by name and imports a command's
module only when click asks for that command: to run it, or to print a `--help` that lists it.
A lazy command is a typer app (a subgroup) or a command function registered with its epilog,
exactly as `Typer.add_typer` / `Typer.command` would; global options are attached as it loads.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

import typer
import typer.main
from typer.core import TyperGroup

from agentopt.cli.global_options import attach_global_options


@dataclass(frozen=True)
class Lazy:
    """Where a command lives: `module.attr`, a `typer.Typer` or a command function."""

    module: str
    attr: str
    epilog: str | None = None
    """The command's examples (function commands; a typer app carries its own)."""


def load(name: str, spec: Lazy) -> Any:
    """The click command of `spec`, named `name` (typer's own click)."""
    target: Any = getattr(importlib.import_module(spec.module), spec.attr)
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
        def list_commands(self, ctx: Any) -> list[str]:
            own = [n for n in super().list_commands(ctx) if n not in commands]
            return [*commands, *own]

        def get_command(self, ctx: Any, cmd_name: str) -> Any:
            found = super().get_command(ctx, cmd_name)
            if found is None and cmd_name in commands:
                found = load(cmd_name, commands[cmd_name])
                self.add_command(found, cmd_name)
            return found

    return LazyGroup
