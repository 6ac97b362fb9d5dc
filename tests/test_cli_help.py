"""Every command's --help (the whole tree, walked) shows an example and no `<bool>` type for
flags (cli.md). Replaces the subprocess check of a hand-kept command list in test_cli_surface."""

from __future__ import annotations

from typing import Any

import pytest
import typer.main
from typer.testing import CliRunner

from agentopt.cli.app import app


def _paths(command: Any, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Walked through click's group API, so commands that load on first use are seen."""
    out = [prefix]
    if not hasattr(command, "list_commands"):
        return out
    for name in sorted(command.list_commands(None)):
        out.extend(_paths(command.get_command(None, name), (*prefix, name)))
    return out


COMMANDS = _paths(typer.main.get_command(app))


def test_the_tree_is_walked() -> None:
    assert ("eval", "run") in COMMANDS and ("optimize",) in COMMANDS and len(COMMANDS) >= 17


@pytest.mark.parametrize("path", COMMANDS, ids=lambda p: " ".join(p) or "agentopt")
def test_help_has_an_example_and_no_bool_metavar(path: tuple[str, ...]) -> None:
    result = CliRunner().invoke(app, [*path, "--help"])
    assert result.exit_code == 0, result.output
    assert "Example" in result.output, f"agentopt {' '.join(path)} --help has no example"
    assert "agentopt " in result.output.split("Example", 1)[1]
    assert "<bool>" not in result.output
