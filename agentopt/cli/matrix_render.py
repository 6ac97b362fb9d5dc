"""Rendering of a matrix run (`eval run` with several variants): the plan, the compact
task × variant table, the best-variant line, written files and each variant's gates."""

from __future__ import annotations

import typer

from agentopt.cli.context import STATE
from agentopt.cli.progress import TerminalSink
from agentopt.cli.provenance import render_provenance
from agentopt.cli.run_render import (
    OutcomeGate,
    ask_yes_no,
    live_view,
    render_gate_failures,
    render_plan,
    render_preamble,
)
from agentopt.contracts.matrix import VariantSpec
from agentopt.contracts.resolved_suite import ResolvedSuite
from agentopt.reports.matrix import render_matrix
from agentopt.workflows.run.eval_run import PreparedRun
from agentopt.workflows.run.inputs import RunOptions
from agentopt.workflows.run.matrix import prepare_matrix, run_matrix


def execute_matrix(
    opts: RunOptions,
    variants: list[VariantSpec],
    *,
    gate: OutcomeGate | None = None,
    base: PreparedRun | None = None,
) -> None:
    """Run every variant, render the matrix, exit with the worst variant's code."""
    ask = ask_yes_no if STATE.interactive else None
    prepared = prepare_matrix(opts, variants, STATE.cwd, ask, base=base)
    render_preamble(prepared.base)
    # The settings every variant shares; a variant's own model and instructions are its label.
    shared = dict(prepared.base.inputs.suite.settings)
    shared.pop("agent_model", None)
    render_provenance(ResolvedSuite(shared), dry_run=opts.dry_run)
    labels = ", ".join(v.label for v in variants)
    if opts.dry_run:
        for variant, run in zip(variants, prepared.runs, strict=True):
            STATE.say(f"Variant {variant.label}:")
            render_plan(run.plan)
        return
    STATE.say(f"Matrix run: {len(variants)} variants ({labels})")
    with live_view(TerminalSink) as sink:
        outcome = run_matrix(prepared, sink)
    if not STATE.quiet:
        render_matrix(outcome.report, STATE.console)
    for variant, played in zip(variants, outcome.outcomes, strict=True):
        if played.results_path is not None:
            STATE.say(f"Results ({variant.label}): {played.results_path}")
    STATE.say(f"Matrix: {outcome.path}")
    for out in outcome.outputs:
        STATE.say(f"Wrote {out.path}")
    codes = [outcome.exit_code]
    for label, verdict in outcome.gates:
        render_gate_failures(verdict, label)
    if gate is not None:
        codes += [gate(run, run.exit_code) for run in outcome.outcomes]
    code = 3 if 3 in codes else max(codes)
    if code:
        raise typer.Exit(code)
