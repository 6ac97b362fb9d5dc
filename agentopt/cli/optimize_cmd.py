"""`agentopt optimize` and its subcommands `status`, `list`, `apply`, `show`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from agentopt.cli.errors import handle_errors, not_implemented

optimize_app = typer.Typer(
    help="Search for a better agent configuration and apply the winner.",
    invoke_without_command=True,
    rich_markup_mode="rich",
    epilog="Examples:\n\n  agentopt optimize\n\n"
    "  agentopt optimize --max-candidates 8 --targets instructions,model "
    "--model-search-space gpt-4.1,gpt-4.1-mini\n\n"
    "  agentopt optimize --resume 20261129-210000-a1b2c3\n\n"
    "  agentopt optimize apply --candidate cand_02 --promote",
)


@optimize_app.callback()
@handle_errors
def optimize_command(
    ctx: typer.Context,
    config: Annotated[
        Path | None, typer.Option("-c", "--config", help="eval.yaml (default: the agent's).")
    ] = None,
    agent: Annotated[str | None, typer.Option("-a", "--agent", help="azd agent service.")] = None,
    dataset: Annotated[Path | None, typer.Option("-d", "--dataset", help="Dataset file.")] = None,
    eval_model: Annotated[str | None, typer.Option("-m", "--eval-model", help="Judge.")] = None,
    optimize_model: Annotated[
        str | None, typer.Option("--optimize-model", help="Reflection model.")
    ] = None,
    evaluator: Annotated[
        list[str] | None,
        typer.Option("--evaluator", help="Evaluator (repeatable).", show_default=False),
    ] = None,
    max_candidates: Annotated[int, typer.Option("--max-candidates", min=1)] = 5,
    max_stalls: Annotated[int, typer.Option("--max-stalls", min=1)] = 5,
    budget_calls: Annotated[
        int | None, typer.Option("--budget-calls", help="Cap on agent+judge calls.")
    ] = None,
    max_cost: Annotated[float | None, typer.Option("--max-cost", help="USD cap.")] = None,
    targets: Annotated[
        str | None,
        typer.Option("--targets", help="instructions,tools,skills,model,toolset (default: all)."),
    ] = None,
    model_search_space: Annotated[
        str | None, typer.Option("--model-search-space", help="Models to try, comma-separated.")
    ] = None,
    real_tools: Annotated[
        bool, typer.Option("--real-tools", help="Call real tools instead of mocks.")
    ] = False,
    parallel_proposals: Annotated[int, typer.Option("--parallel-proposals", min=1)] = 2,
    seed: Annotated[int, typer.Option("--seed")] = 0,
    resume: Annotated[str | None, typer.Option("--resume", help="Continue a job.")] = None,
    require_improvement: Annotated[
        bool, typer.Option("--require-improvement", help="Exit 1 when nothing beats baseline.")
    ] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print the plan only.")] = False,
) -> None:
    """Score the baseline, propose candidates, screen them, evaluate the promising ones fully,
    rank them on quality and cost."""
    if ctx.invoked_subcommand is not None:
        return
    not_implemented("optimize")


@optimize_app.command("status")
@handle_errors
def status_command(job_id: Annotated[str | None, typer.Argument()] = None) -> None:
    """Progress of an optimization job (default: the latest)."""
    not_implemented("optimize status")


@optimize_app.command("list")
@handle_errors
def list_command() -> None:
    """List optimization jobs."""
    not_implemented("optimize list")


@optimize_app.command("apply")
@handle_errors
def apply_command(
    candidate: Annotated[str, typer.Option("--candidate", help="Candidate id, e.g. cand_02.")],
    job: Annotated[str | None, typer.Option("--job", help="Job id (default: latest).")] = None,
    promote: Annotated[
        bool, typer.Option("--promote", help="Make it the baseline (old one backed up).")
    ] = False,
) -> None:
    """Write a candidate to .agent_configs/<id>/ (and with --promote, make it the baseline)."""
    not_implemented("optimize apply")


@optimize_app.command("show")
@handle_errors
def show_command(
    candidate: Annotated[str, typer.Option("--candidate", help="Candidate id.")],
    job: Annotated[str | None, typer.Option("--job", help="Job id (default: latest).")] = None,
) -> None:
    """A candidate's full configuration and its diff against the baseline."""
    not_implemented("optimize show")
