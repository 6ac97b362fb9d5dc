"""What `eval run` (and azd's spelling `eval run start`) adds for azd's evaluations
extension: the eval of azure.eval.yaml to run (`--eval NAME`, the only one, or a picker) and
the `--fail-on` gate, printed as azd prints it. One call, `prepare`, before the run."""

from __future__ import annotations

from rich.markup import escape
from rich.prompt import Prompt

from agentopt.cli.context import STATE
from agentopt.cli.run_render import OutcomeGate
from agentopt.contracts.run_results import RunSummary
from agentopt.workflows.azure_eval.gate import (
    BREACH_FOOTER,
    Counts,
    FailOn,
    exit_code,
    judge,
    parse_fail_on,
    refuse_no_wait,
)
from agentopt.workflows.azure_eval.select import Selection, select_for_optimize, select_for_run
from agentopt.workflows.optimize.options import OptimizeOptions
from agentopt.workflows.run.eval_run import RunOutcome
from agentopt.workflows.run.inputs import RunOptions


def choose_eval(names: list[str]) -> str:
    """The picker: one of the file's evals."""
    return Prompt.ask("Eval", choices=names, default=names[0], console=STATE.console)


def _announce(selection: Selection | None) -> None:
    if selection is None:
        return  # the file's warnings are printed with the run's, once
    STATE.say(escape(selection.describe(STATE.cwd)))


def prepare(
    opts: RunOptions, fail_on: str | None, *, interactive: bool = False
) -> tuple[RunOptions, OutcomeGate | None]:
    """Parse `--fail-on` (refused with --no-wait, before anything is sent) and, when an
    azure.eval.yaml applies, pick its eval; returns the options to run and the gate."""
    gate = parse_fail_on(fail_on) if fail_on is not None else None
    refuse_no_wait(gate, opts.no_wait)
    if not interactive:
        opts, selection = select_for_run(
            opts, STATE.cwd, choose_eval if STATE.interactive else None
        )
        _announce(selection)
    return opts, (outcome_gate(gate) if gate is not None else None)


def prepare_optimize(opts: OptimizeOptions) -> OptimizeOptions:
    """`optimize --config evals/azure.eval.yaml [--eval NAME]`: the eval to optimize against."""
    opts, selection = select_for_optimize(
        opts, STATE.cwd, choose_eval if STATE.interactive else None
    )
    _announce(selection)
    return opts


def outcome_gate(fail_on: FailOn) -> OutcomeGate:
    """The gate `execute_run` applies after the summary."""

    def apply(outcome: RunOutcome, code: int) -> int:
        summary = outcome.results.summary if outcome.results is not None else RunSummary()
        return apply_gate(fail_on, summary, code)

    return apply


def apply_gate(fail_on: FailOn, summary: RunSummary, code: int) -> int:
    """Print the verdict as azd does; return the exit code."""
    verdict = judge(fail_on, Counts.of(summary))
    if verdict.warning:
        STATE.warn(verdict.warning)
    if verdict.breached:
        for line in verdict.lines:
            STATE.err.print(f"[red]{escape(line)}[/]", soft_wrap=True)
        STATE.err.print()
        STATE.err.print(f"[red]{BREACH_FOOTER}[/]")
    else:
        for line in verdict.lines:
            STATE.say(f"[green]{escape(line)}[/]")
    return exit_code(verdict, code)
