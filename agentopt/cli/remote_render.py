"""Rendering of `eval run --remote` and `eval show RUN --watch` (the Foundry cloud run)."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from agentopt.cli.context import STATE
from agentopt.cli.progress import TerminalSink
from agentopt.cli.provenance import render_provenance
from agentopt.cli.run_render import OutcomeGate, ask_yes_no, render_notices, render_outcome
from agentopt.core.errors import AgentoptError, ConfigError
from agentopt.core.files import bounded
from agentopt.core.paths import runs_dir
from agentopt.workflows.remote.eval_run import run_remote
from agentopt.workflows.remote.eval_setup import RemoteSetup, prepare_remote
from agentopt.workflows.remote.polling import PollSettings
from agentopt.workflows.run.inputs import RunOptions


def remote_run_id(run_id: str | None) -> bool:
    """Whether `run_id` names a run folder created by `--remote`."""
    if not run_id:
        return False
    path = runs_dir(STATE.cwd) / run_id / "run.json"
    try:  # through the bounded reader: a FIFO or a device here must not block or fill memory
        data = bounded.loads(bounded.read_text(path, kind="results"))
    except (AgentoptError, ValueError):
        return False  # the local path reports what is wrong with the file
    return isinstance(data, dict) and bool(data.get("remote"))


def _poll(interval: float | None) -> PollSettings:
    """azd's cadence for runs: every 5 s (or --poll-interval), at most 360 reads."""
    return PollSettings.eval_run(interval)


def _render_plan(setup: RemoteSetup) -> None:
    STATE.say(
        f"Dry run (--remote): nothing was sent. {len(setup.tasks)} tasks against the deployed "
        f"agent {setup.agent_name}"
        + (f" version {setup.agent_version}" if setup.agent_version else "")
        + f" in {setup.endpoint}"
    )
    STATE.say("  Judged by Foundry: " + ", ".join(c.evaluator for c in setup.criteria))
    if setup.local:
        STATE.say(
            "  Run here over the remote transcripts: " + ", ".join(u.name for u in setup.local)
        )


def execute_remote(
    opts: RunOptions, poll_interval: float | None = None, gate: OutcomeGate | None = None
) -> None:
    """`eval run --remote` (and `--resume` of a remote run): run, render, exit code."""
    setup = prepare_remote(opts, STATE.cwd, ask_yes_no if STATE.interactive else None)
    render_notices([*setup.inputs.warnings, *setup.inputs.dataset.warnings], setup.notices)
    setup.notices.clear()
    render_provenance(setup.inputs.suite, dry_run=setup.opts.dry_run)
    if setup.opts.dry_run:
        _render_plan(setup)
        return
    outcome = run_remote(
        setup, TerminalSink(STATE.console, quiet=STATE.quiet), poll=_poll(poll_interval)
    )
    if setup.opts.no_wait:
        STATE.say(
            f"\nRun {outcome.run_id} goes on in the project. Follow it with:\n"
            f"  agentopt eval show {outcome.run_id} --watch\n"
            f"  (or `agentopt eval run --resume {outcome.run_id}`)"
        )
        return
    render_outcome(outcome)
    code = gate(outcome, outcome.exit_code) if gate else outcome.exit_code
    if code:
        raise typer.Exit(code)


def watch_remote(
    run_id: str, poll_interval: float | None = None, gate: OutcomeGate | None = None
) -> None:
    """`eval show RUN --watch`: follow a remote run to its end and write its results."""
    if not remote_run_id(run_id):
        raise ConfigError(
            f"run {run_id} is not a remote run: --watch follows `eval run --remote` runs",
            hint=f"an interrupted local run continues with `agentopt eval run --resume {run_id}`",
        )
    saved = json.loads((runs_dir(STATE.cwd) / run_id / "run.json").read_text(encoding="utf-8"))
    config = saved.get("config") or {}
    gates = {
        k: config[k]
        for k in ("fail_under", "min_pass_rate", "baseline", "max_errors")
        if k in config
    }
    outputs = [Path(p) for p in config.get("outputs") or []]
    opts = RunOptions(
        resume=run_id, remote=True, outputs=outputs, environment=STATE.environment, **gates
    )
    execute_remote(opts, poll_interval, gate)
