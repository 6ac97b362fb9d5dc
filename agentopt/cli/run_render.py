"""Rendering of `eval run`: notices, the dry-run plan, the summary, written files, gates."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Protocol, TypeVar

import typer
from rich.table import Table

from agentopt.cli.context import STATE
from agentopt.cli.progress import TerminalSink
from agentopt.cli.provenance import render_provenance
from agentopt.reports.outputs import OutputFile
from agentopt.reports.terminal import render_summary
from agentopt.workflows.run.eval_run import PreparedRun, RunOutcome, prepare_run, run_prepared
from agentopt.workflows.run.gates import GateOutcome
from agentopt.workflows.run.inputs import RunOptions
from agentopt.workflows.run.plan import RunPlan

_SHOWN: set[str] = set()
OutcomeGate = Callable[[RunOutcome, int], int]
"""A gate applied after the summary (azd's `--fail-on`): the outcome and its exit code → the
command's exit code."""


def ask_yes_no(question: str, default: bool) -> bool:
    """A yes/no question on the terminal."""
    return typer.confirm(question, default=default)


class _Live(Protocol):
    def close(self) -> None: ...


_View = TypeVar("_View", bound=_Live)


@contextmanager
def live_view(kind: Callable[..., _View]) -> Iterator[_View]:
    """A live progress display of `kind` on the command's console (quiet under -q), closed
    however the run ends, so the terminal is given back after an error or Ctrl-C."""
    view = kind(STATE.console, quiet=STATE.quiet)
    try:
        yield view
    finally:
        view.close()


def render_plan(plan: RunPlan) -> None:
    """The --dry-run table: calls, tokens and cost per pool."""
    table = Table(title="Dry run: nothing was sent", title_justify="left")
    for col in ("", "model", "calls", "input tokens", "output tokens", "cost"):
        table.add_column(col, justify="left" if col in ("", "model") else "right")
    rows = [("agent", plan.agent_model, plan.agent)]
    if plan.simulator:
        rows.append(("simulator", plan.simulator_model, plan.simulator))
    rows.append(("judge", plan.judge_model, plan.judge))
    for label, model, est in rows:
        table.add_row(
            label,
            model,
            str(est.get("calls", 0)),
            f"{int(est.get('input_tokens', 0)):,}",
            f"{int(est.get('output_tokens', 0)):,}",
            f"${float(est.get('cost_usd', 0.0)):.4f}",
        )
    STATE.say(
        f"Plan: {plan.tasks} tasks, {plan.turns} turns, × {plan.repeat} repeat(s); "
        f"estimated cost ${plan.cost_usd:.4f} (token counts are estimates: chars/4)"
    )
    STATE.say(table)
    if plan.evaluators:
        STATE.say("Evaluators: " + ", ".join(f"{k} ×{v}" for k, v in plan.evaluators.items()))


def render_notices(warnings: Iterable[object], notices: Iterable[str]) -> None:
    """What preparing a run or a job found, before anything is sent: the problems of its
    inputs as warnings, then its notes (model fallbacks, raised deadlines…), on stderr."""
    for problem in warnings:
        STATE.warn(str(problem))
    for notice in notices:
        STATE.err.print(f"[yellow]note:[/] {notice}")


def render_preamble(prepared: PreparedRun) -> None:
    """Warnings, legacy upgrades and model notices, before anything is sent."""
    inputs = prepared.inputs
    for problem in [*inputs.warnings, *inputs.dataset.warnings]:
        STATE.warn(str(problem))
    upgrade = inputs.dataset.upgrade
    if upgrade is not None and upgrade.backup is not None:
        STATE.say(f"Upgraded legacy eval file {upgrade.path} (backup: {upgrade.backup})")
    for notice in prepared.notices:
        STATE.err.print(f"[yellow]note:[/] {notice}")
        _SHOWN.add(notice)
    prepared.notices.clear()


def render_outcome(outcome: RunOutcome) -> None:
    """Summary table, files written, gate verdicts."""
    for notice in outcome.notices:
        if notice not in _SHOWN:  # the run's own call layer repeats the planner's notices
            STATE.err.print(f"[yellow]note:[/] {notice}")
    if outcome.results is not None and not STATE.quiet:
        render_summary(outcome.results, STATE.console)
    if outcome.results_path is not None:
        STATE.say(f"Results: {outcome.results_path}")
    for out in outcome.outputs:
        extra = f"  (backup: {out.backup})" if out.backup else ""
        STATE.say(f"Wrote {out.path}{extra}")
    gate = outcome.gate
    if gate is None:
        return
    r = gate.regression
    if r and not r.regressed:
        STATE.say(
            f"Baseline {r.baseline}: Δ {r.delta:+.3f} "
            f"(95% CI {r.ci[0]:+.3f} … {r.ci[1]:+.3f}, {r.shared} shared tasks): "
            f"no regression beyond noise; {r.outcome_line()}"
        )
    render_gate_failures(gate)


def render_gate_failures(gate: GateOutcome, label: str | None = None) -> None:
    """The gates a run failed and errors beyond --max-errors, on stderr; `label` names the
    variant of a matrix run."""
    failed, who = ("gate failed", "") if label is None else (f"gate failed ({label})", f"{label}: ")
    for failure in gate.failures:
        STATE.err.print(f"[red]{failed}:[/] {failure}")
    if gate.errors_exceeded:
        STATE.err.print(
            f"[red]{who}{gate.error_count} agent/evaluator error(s)[/] exceed the tolerance "
            "(--max-errors, default 0): the verdict is unknown (exit 3)"
        )


def execute_run(
    opts: RunOptions,
    *,
    interactive: bool = False,
    gate: OutcomeGate | None = None,
    on_outputs: Callable[[list[OutputFile]], object] | None = None,
    flags: bool = False,
) -> None:
    """Run, render, and exit with the code of cli.md (`gate`: a further gate, given the
    outcome and its exit code, returns the final one); `on_outputs` gets the files written
    (eval run opens the HTML report), whatever the exit code. eval.yaml `variants:` make it
    a matrix run unless `flags` (--agent-model/--instructions) chose the agent."""
    if interactive:
        from agentopt.cli.interactive import interactive_loop

        interactive_loop(opts)
        return
    ask = ask_yes_no if STATE.interactive else None
    prepared = prepare_run(opts, STATE.cwd, ask)
    config = prepared.inputs.eval_config
    if not flags and config is not None and config.variants:
        from agentopt.cli.matrix_render import execute_matrix
        from agentopt.workflows.run.variants import variants_from_config

        execute_matrix(opts, variants_from_config(config), gate=gate, base=prepared)
        return
    render_preamble(prepared)
    render_provenance(prepared.inputs.suite, dry_run=opts.dry_run)
    if opts.dry_run:
        render_plan(prepared.plan)
        return
    with live_view(TerminalSink) as sink:
        outcome = run_prepared(prepared, sink)
    render_outcome(outcome)
    if on_outputs is not None:
        on_outputs(outcome.outputs)
    if STATE.json_output and outcome.results_path is not None:
        STATE.emit_json(json.loads(outcome.results_path.read_text(encoding="utf-8")))
    code = gate(outcome, outcome.exit_code) if gate else outcome.exit_code
    if code:
        raise typer.Exit(code)
