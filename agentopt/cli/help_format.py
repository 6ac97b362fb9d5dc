"""How `--help` shows options, and what printing it imports.

A flag takes no value, so it shows no type: typer's rich help prints a type column for every
option, `<bool>` for flags too, which reads as if `--no-prompt <bool>` wanted a value. Typer
builds its option objects itself (the `--help` option afresh for every context), so the one
place to say it is the option class.

Printing a help loads typer's renderer without the two rich modules it never needs for one
(`load_renderer`).
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import Any

from typer.core import TyperCommand, TyperGroup, TyperOption

_display_type_rich = TyperOption.display_type_rich


def _display_type_rich_without_flags(self: TyperOption, ctx: Any) -> str | None:
    if self.is_flag:
        return None
    return _display_type_rich(self, ctx)


TyperOption.display_type_rich = _display_type_rich_without_flags  # type: ignore[method-assign]


class _Deferred(type):
    """A class of rich's that typer's help renderer names but a help never uses, imported
    the first time something touches it (`rich.markdown.Markdown`: only for markdown help,
    which agentopt never writes; `rich.traceback.Traceback`: only to show a crash)."""

    _where: tuple[str, str]

    def _real(cls) -> Any:
        module, name = cls._where
        return getattr(importlib.import_module(module), name)

    def __getattr__(cls, name: str) -> Any:
        return getattr(cls._real(), name)

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        return cls._real()(*args, **kwargs)

    def __instancecheck__(cls, instance: Any) -> bool:
        return isinstance(instance, cls._real())


def load_renderer() -> None:
    """Import typer's rich help renderer without `rich.markdown` and `rich.traceback`, which it
    imports at its top for two features a help never uses: with them (markdown-it, pygments,
    rich's pretty-printer) `agentopt --help` took 1.5x the instructions of `--version`, without
    them 1.1x. The modules are the real ones for anyone who imports them, before or after."""
    if "typer.rich_utils" in sys.modules:
        return
    stubs: dict[str, types.ModuleType] = {}
    for module, name in (("rich.markdown", "Markdown"), ("rich.traceback", "Traceback")):
        if module not in sys.modules:
            stub = stubs[module] = types.ModuleType(module)
            setattr(stub, name, _Deferred(name, (), {"_where": (module, name)}))
            sys.modules[module] = stub
    try:
        importlib.import_module("typer.rich_utils")
    finally:
        for module, stub in stubs.items():
            if sys.modules.get(module) is stub:
                del sys.modules[module]


def _loading_renderer(format_help: Any) -> Any:
    def wrapper(self: Any, ctx: Any, formatter: Any) -> None:
        load_renderer()
        format_help(self, ctx, formatter)

    return wrapper


TyperCommand.format_help = _loading_renderer(TyperCommand.format_help)  # type: ignore[method-assign]
TyperGroup.format_help = _loading_renderer(TyperGroup.format_help)  # type: ignore[method-assign]
