"""The pieces several commands share (issue 39): flags to a workflow's options by name, the
optimize connection flags on every subcommand, the -o json / empty / table listing, and the
gate verdict lines of a run and of a matrix variant."""

from __future__ import annotations

import io
import json
from dataclasses import dataclass
from pathlib import Path

import pytest
from pydantic import BaseModel
from rich.console import Console
from typer.testing import CliRunner

from agentopt.cli.app import app
from agentopt.cli.context import STATE
from agentopt.cli.run_render import render_gate_failures
from agentopt.cli.shared_options import options_from
from agentopt.workflows.run.gates import GateOutcome


@dataclass
class _Options:
    limit: int | None = None
    evaluators: list[str] | None = None
    environment: str | None = None
    call_timeout: float | None = None


def test_options_from_takes_flags_by_name_given_fields_and_the_global_options() -> None:
    STATE.reset()
    STATE.environment, STATE.call_timeout = "dev", 30.0
    try:
        opts = options_from(
            _Options, {"limit": 3, "evaluator": ["x"], "no_open": True}, evaluators=["x"]
        )
    finally:
        STATE.reset()
    assert opts == _Options(limit=3, evaluators=["x"], environment="dev", call_timeout=30.0)


def test_a_given_field_wins_over_the_flag_of_its_name() -> None:
    assert options_from(_Options, {"limit": 3}, limit=None).limit is None


@pytest.mark.parametrize("sub", ["status", "list", "apply", "show", "cancel", "deploy"])
def test_every_optimize_subcommand_sets_the_connection_flags(sub: str, tmp_path: Path) -> None:
    """`-p` and `--endpoint` are declared once (azd_flags.connection_params) and attached to
    each subcommand: given after the subcommand, their callbacks still write STATE."""
    STATE.reset()
    candidate = ["--candidate", "c"] if sub in ("apply", "show", "deploy") else []
    args = ["-C", str(tmp_path), "optimize", sub, *candidate, "-p", "https://p.example/"]
    CliRunner().invoke(app, [*args, "--endpoint", "http://localhost:9/"])
    assert (STATE.project_endpoint, STATE.service_endpoint) == (
        "https://p.example",
        "http://localhost:9",
    )


class _Row(BaseModel):
    id: str


def _listing(records: list[_Row], fmt: str | None, monkeypatch: pytest.MonkeyPatch) -> str:
    out, err = Console(file=io.StringIO(), width=100), Console(file=io.StringIO(), width=100)
    monkeypatch.setattr(STATE, "console", out)
    monkeypatch.setattr(STATE, "err", err)
    monkeypatch.setattr(STATE, "output_format", fmt)
    monkeypatch.setattr("typer.echo", lambda text: out.file.write(text))
    STATE.emit_list(records, "nothing yet", lambda: STATE.say("TABLE"))
    return out.file.getvalue() + err.file.getvalue()  # type: ignore[attr-defined]


def test_a_listing_is_json_or_the_empty_line_or_the_table(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert json.loads(_listing([_Row(id="a")], "json", monkeypatch)) == [{"id": "a"}]
    assert json.loads(_listing([], "json", monkeypatch)) == []
    assert _listing([], None, monkeypatch).strip() == "nothing yet"
    assert _listing([_Row(id="a")], None, monkeypatch).strip() == "TABLE"


def test_gate_lines_name_the_variant_only_in_a_matrix(monkeypatch: pytest.MonkeyPatch) -> None:
    err = Console(file=io.StringIO(), width=200)
    monkeypatch.setattr(STATE, "err", err)
    gate = GateOutcome(failures=["score 0.5 < 0.7"], error_count=2, errors_exceeded=True)
    render_gate_failures(gate)
    render_gate_failures(gate, "gpt-4.1")
    lines = err.file.getvalue().splitlines()  # type: ignore[attr-defined]
    assert lines[0] == "gate failed: score 0.5 < 0.7"
    assert lines[1].startswith("2 agent/evaluator error(s) exceed the tolerance")
    assert lines[2] == "gate failed (gpt-4.1): score 0.5 < 0.7"
    assert lines[3].startswith("gpt-4.1: 2 agent/evaluator error(s) exceed the tolerance")
