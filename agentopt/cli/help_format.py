"""How `--help` shows options: a flag takes no value, so it shows no type.

Typer's rich help prints a type column for every option, `<bool>` for flags too, which reads as
if `--no-prompt <bool>` wanted a value. Typer builds its option objects itself (the `--help`
option afresh for every context), so the one place to say it is the option class.
"""

from __future__ import annotations

from typing import Any

from typer.core import TyperOption

_display_type_rich = TyperOption.display_type_rich


def _display_type_rich_without_flags(self: TyperOption, ctx: Any) -> str | None:
    if self.is_flag:
        return None
    return _display_type_rich(self, ctx)


TyperOption.display_type_rich = _display_type_rich_without_flags  # type: ignore[method-assign]
