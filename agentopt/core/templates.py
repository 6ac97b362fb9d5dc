"""The jinja2 environments over the prompt templates (`templates/<group>/*.j2`): plain text,
strict about undefined variables, one environment per group, built once."""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

from agentopt.core.paths import templates_dir

if TYPE_CHECKING:
    from jinja2 import Environment


@cache
def prompt_environment(group: str) -> Environment:
    """The environment of `templates/<group>/` (judges, generate, optimizer)."""
    # jinja2 (30 ms to import) loads with the first template, not with every command.
    from jinja2 import Environment, FileSystemLoader, StrictUndefined

    return Environment(
        loader=FileSystemLoader(str(templates_dir() / group)),
        # The templates ship with agentopt and do not change while it runs: no stat of the
        # file on every render (and every {% include %}) to see whether it did (495 renders
        # of an optimizer run spent 65 ms there).
        auto_reload=False,
        undefined=StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
