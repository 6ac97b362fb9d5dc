"""cli/lean_params.py coerces an absent option and a plain path without typer's pydantic
adapter: the values, and the errors, are what typer's own coercion gives."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import pytest
import typer
import typer.main
from typer.testing import CliRunner

from agentopt.cli import lean_params


def _app() -> typer.Typer:
    app = typer.Typer()

    @app.command()
    def show(
        paths: Annotated[list[Path], typer.Argument()],
        one: Annotated[Path | None, typer.Option()] = None,
        there: Annotated[Path | None, typer.Option(exists=True, dir_okay=False)] = None,
        resolved: Annotated[Path | None, typer.Option(resolve_path=True)] = None,
        seconds: Annotated[float | None, typer.Option()] = None,
        name: Annotated[str | None, typer.Option()] = None,
    ) -> None:
        for value in (paths, one, there, resolved, seconds, name):
            typer.echo(f"{type(value).__name__} {value!r}")

    return app


ARGS = [
    ["a.txt", "sub/../b", "./c/"],
    ["a", "--one", "x//y"],
    ["a", "--there", "{file}"],
    ["a", "--there", "{dir}"],
    ["a", "--there", "missing.txt"],
    ["a", "--resolved", "{dir}/../x"],
    ["a", "--seconds", "2.5", "--name", "n"],
    ["a", "--seconds", "soon"],
    [],
]


def _run(args: list[str], tmp_path: Path, lean: bool, monkeypatch: pytest.MonkeyPatch) -> str:
    parameter = typer.core._TyperParameter  # type: ignore[attr-defined]
    getter = lean_params._runtime_param if lean else lean_params._build
    monkeypatch.setattr(parameter, "get_runtime_param", getter)
    (tmp_path / "f.txt").write_text("x")
    filled = [a.format(file=tmp_path / "f.txt", dir=tmp_path) for a in args]
    done = CliRunner().invoke(_app(), filled)
    return f"{done.exit_code}\n{done.output}"


@pytest.mark.skipif(lean_params.RuntimeParam is None, reason="typer without its coercion layer")
@pytest.mark.parametrize("args", ARGS, ids=[" ".join(a) or "nothing" for a in ARGS])
def test_lean_coercion_gives_what_typer_gives(
    args: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    typers = _run(args, tmp_path, False, monkeypatch)
    ours = _run(args, tmp_path, True, monkeypatch)
    assert ours == typers


@pytest.mark.skipif(lean_params.RuntimeParam is None, reason="typer without its coercion layer")
def test_an_absent_option_builds_no_adapter(monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[object] = []
    real = lean_params._build

    def counting(param: object) -> object:
        built.append(param)
        return real(param)

    monkeypatch.setattr(lean_params, "_build", counting)
    done = CliRunner().invoke(_app(), ["a", "b"])
    assert done.exit_code == 0, done.output
    assert built == []  # paths coerced lean, every option absent
    done = CliRunner().invoke(_app(), ["a", "--seconds", "3"])
    assert "float 3.0" in done.output and len(built) == 1  # a float is typer's
