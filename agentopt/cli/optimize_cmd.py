"""`agentopt optimize` and its subcommands `status`, `list`, `apply`, `show`, and for Foundry
jobs (`--remote`) `cancel` and `deploy`: options → OptimizeOptions → one workflow call →
render."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import RenderableType
from rich.markup import escape

from agentopt.cli import optimize_remote
from agentopt.cli.context import STATE
from agentopt.cli.errors import handle_errors
from agentopt.cli.executor_options import ExecutorOpt, RayAddressOpt
from agentopt.cli.run_render import ask_yes_no
from agentopt.core.errors import ConfigError
from agentopt.reports.optimize_live import LiveOptimizeView
from agentopt.reports.optimize_report import (
    final_report,
    jobs_table,
    plan_renderables,
    show_renderables,
    status_renderables,
)
from agentopt.reports.optimize_table import error_line
from agentopt.workflows.optimize import (
    OptimizeOptions,
    apply_candidate,
    find_project,
    job_records,
    job_status,
    prepare_optimize,
    run_optimize,
    show_candidate,
    split_list,
)

optimize_app = typer.Typer(
    help="Search for a better agent configuration and apply the winner.",
    invoke_without_command=True,
    rich_markup_mode="rich",
    epilog="Examples:\n\n  agentopt optimize\n\n"
    "  agentopt optimize --max-candidates 8 --targets instructions,model "
    "--model-search-space gpt-4.1,gpt-4.1-mini\n\n"
    "  agentopt optimize --resume 20261129-210000-a1b2c3\n\n"
    "  agentopt optimize apply --candidate cand_02 --promote\n\n"
    "  agentopt optimize --remote --no-wait            # a Foundry optimization job\n\n"
    "  agentopt optimize status JOB_ID --watch\n\n"
    "  agentopt optimize cancel JOB_ID\n\n"
    "  agentopt optimize deploy --candidate CANDIDATE_ID",
)


def _say(items: list[RenderableType]) -> None:
    for item in items:
        STATE.say(item)


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
    max_candidates: Annotated[
        int | None,
        typer.Option("--max-candidates", min=1, help="Candidates fully evaluated (default 5)."),
    ] = None,
    max_stalls: Annotated[
        int | None,
        typer.Option("--max-stalls", min=1, help="Failed screenings in a row (default 5)."),
    ] = None,
    budget_calls: Annotated[
        int | None, typer.Option("--budget-calls", min=1, help="Cap on agent+judge calls.")
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
    parallel_proposals: Annotated[
        int | None,
        typer.Option("--parallel-proposals", min=1, help="Proposals screened at once (default 2)."),
    ] = None,
    seed: Annotated[int | None, typer.Option("--seed", help="Split and sampling seed.")] = None,
    concurrency: Annotated[
        int | None,
        typer.Option("--concurrency", min=1, help="Agent runs at once, all proposals (default 8)."),
    ] = None,
    resume: Annotated[str | None, typer.Option("--resume", help="Continue a job.")] = None,
    require_improvement: Annotated[
        bool, typer.Option("--require-improvement", help="Exit 1 when nothing beats baseline.")
    ] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print the plan only.")] = False,
    remote: Annotated[
        bool,
        typer.Option("--remote", help="Submit a Foundry optimization job for the deployed agent."),
    ] = False,
    no_wait: Annotated[
        bool, typer.Option("--no-wait", help="--remote: return once the job is submitted.")
    ] = False,
    poll_interval: Annotated[
        float | None,
        typer.Option("--poll-interval", min=0.0, help="--remote: seconds between status reads."),
    ] = None,
    executor: ExecutorOpt = None,
    ray_address: RayAddressOpt = None,
) -> None:
    """Score the baseline, propose candidates, screen them, evaluate the promising ones fully,
    rank them on quality and cost.

    Exit codes: 0 ok, 1 --require-improvement found none, 2 bad input, 3 errors, 130 Ctrl-C.
    """
    if ctx.invoked_subcommand is not None:
        return
    opts = OptimizeOptions(
        config=config,
        agent=agent,
        environment=STATE.environment,
        call_timeout=STATE.call_timeout,
        dataset=dataset,
        eval_model=eval_model,
        optimize_model=optimize_model,
        evaluators=evaluator or None,
        max_candidates=max_candidates,
        max_stalls=max_stalls,
        budget_calls=budget_calls,
        max_cost=max_cost,
        targets=split_list(targets),
        model_search_space=split_list(model_search_space),
        real_tools=True if real_tools else None,
        parallel_proposals=parallel_proposals,
        seed=seed,
        concurrency=concurrency,
        resume=resume,
        require_improvement=require_improvement,
        dry_run=dry_run,
        executor=executor,
        ray_address=ray_address,
    )
    if no_wait and not remote:
        raise ConfigError.at("", "--no-wait", "--no-wait only applies to --remote jobs")
    if remote or (resume and optimize_remote.remote_store(resume)):
        optimize_remote.run_remote_optimize(opts, no_wait=no_wait, poll_interval=poll_interval)
        return
    prepared = prepare_optimize(opts, STATE.cwd, ask_yes_no if STATE.interactive else None)
    for problem in prepared.inputs.warnings:
        STATE.warn(str(problem))
    for notice in prepared.notices:
        STATE.err.print(f"[yellow]note:[/] {notice}")
    _say(plan_renderables(prepared.plan, dry_run=dry_run))
    if dry_run:
        return
    view = LiveOptimizeView(STATE.console, quiet=STATE.quiet)
    try:
        outcome = run_optimize(prepared, view)
    finally:
        view.close()
    _say(
        final_report(
            outcome.job, outcome.instructions, outcome.report_path, table=not view.interactive
        )
    )
    if outcome.too_many_errors:
        STATE.err.print(
            f"[red]error:[/] {escape(error_line(outcome.job) or '')}; more than "
            f"options.max_errors ({outcome.max_errors}) evaluations failed",
            soft_wrap=True,
        )
        STATE.err.print(
            "  → see why in the report; fix the agent or judge, then resume or start again"
        )
    elif outcome.exit_code:
        STATE.err.print(
            "[red]gate failed:[/] --require-improvement: no candidate beat the baseline "
            "beyond the noise"
        )
    if outcome.exit_code:
        raise typer.Exit(outcome.exit_code)


@optimize_app.command(
    "status",
    epilog="Examples:\n\n  agentopt optimize status\n\n"
    "  agentopt optimize status 20261201-101500-ab12cd",
)
@handle_errors
def status_command(
    job_id: Annotated[str | None, typer.Argument()] = None,
    watch: Annotated[
        bool, typer.Option("--watch", help="Follow a Foundry job (--remote) until it ends.")
    ] = False,
    poll_interval: Annotated[
        float | None, typer.Option("--poll-interval", min=0.0, help="--watch: seconds.")
    ] = None,
) -> None:
    """Progress of an optimization job (default: the latest); a Foundry job is read from the
    service."""
    found = optimize_remote.remote_store(job_id)
    if found is not None:
        optimize_remote.status(found, watch_it=watch, poll_interval=poll_interval)
        return
    if watch:
        raise ConfigError.at("", "--watch", "--watch follows Foundry jobs (optimize --remote)")
    _, job = job_status(find_project(STATE.cwd), job_id)
    _say(status_renderables(job))


@optimize_app.command(
    "cancel", epilog="Example:\n\n  agentopt optimize cancel   # the latest Foundry job"
)
@handle_errors
def cancel_command(job_id: Annotated[str | None, typer.Argument()] = None) -> None:
    """Cancel a running Foundry optimization job (default: the latest)."""
    found = optimize_remote.remote_store(job_id)
    if found is None:
        raise ConfigError(
            "only a Foundry job (optimize --remote) can be cancelled; a local job stops with "
            "Ctrl-C and continues with --resume"
        )
    optimize_remote.cancel(found)


@optimize_app.command("deploy", epilog="Example:\n\n  agentopt optimize deploy --candidate cand_02")
@handle_errors
def deploy_command(
    candidate: Annotated[str, typer.Option("--candidate", help="Candidate id.")],
    job: Annotated[str | None, typer.Option("--job", help="Job id (default: latest).")] = None,
    poll_interval: Annotated[
        float | None, typer.Option("--poll-interval", min=0.0, help="Seconds between reads.")
    ] = None,
) -> None:
    """Deploy a Foundry job's candidate as a new version of the deployed agent."""
    found = optimize_remote.remote_store(job)
    if found is None:
        raise ConfigError(
            "deploy creates a Foundry agent version from a Foundry job's candidate "
            "(optimize --remote); apply a local job's candidate with `optimize apply`"
        )
    optimize_remote.deploy(found, candidate, poll_interval)


@optimize_app.command("list", epilog="Example:\n\n  agentopt optimize list")
@handle_errors
def list_command() -> None:
    """List optimization jobs."""
    jobs = job_records(find_project(STATE.cwd))
    if not jobs:
        STATE.say("No optimization jobs yet: start one with `agentopt optimize`.")
        return
    STATE.say(jobs_table(jobs))


@optimize_app.command(
    "apply",
    epilog="Examples:\n\n  agentopt optimize apply --candidate cand_02\n\n"
    "  agentopt optimize apply --candidate cand_02 --promote   # make it the baseline",
)
@handle_errors
def apply_command(
    candidate: Annotated[str, typer.Option("--candidate", help="Candidate id, e.g. cand_02.")],
    job: Annotated[str | None, typer.Option("--job", help="Job id (default: latest).")] = None,
    promote: Annotated[
        bool, typer.Option("--promote", help="Make it the baseline (old one backed up).")
    ] = False,
) -> None:
    """Write a candidate to .agent_configs/<id>/ (and with --promote, make it the baseline)."""
    found = optimize_remote.remote_store(job)
    if found is not None:
        done = optimize_remote.apply(found, candidate, promote=promote)
        result = done.result
        result.notes.extend(done.notes)
    else:
        result = apply_candidate(find_project(STATE.cwd), candidate, job, promote=promote)
    STATE.say(f"Wrote {result.written}")
    if result.backup:
        STATE.say(f"  (the previous copy is kept at {result.backup})")
    if result.promoted:
        saved = f" (old baseline backed up to {result.baseline_backup})"
        STATE.say(f"Promoted {candidate} to the baseline{saved if result.baseline_backup else ''}")
    if result.instruction_diff:
        _say(show_diff(result.instruction_diff))
    else:
        STATE.say("Instructions: unchanged from the baseline.")
    for note in result.notes:
        STATE.err.print(f"[yellow]note:[/] {note}")


def show_diff(lines: list[str]) -> list[RenderableType]:
    from rich.text import Text

    text = Text()
    for line in lines:
        style = {"+": "green", "-": "red", "@": "cyan"}.get(line[:1], "")
        text.append(line + "\n", style="bold" if line.startswith(("+++", "---")) else style)
    return [text]


@optimize_app.command(
    "show",
    epilog="Example:\n\n  agentopt optimize show --candidate cand_02 --job 20261201-101500-ab12cd",
)
@handle_errors
def show_command(
    candidate: Annotated[str, typer.Option("--candidate", help="Candidate id.")],
    job: Annotated[str | None, typer.Option("--job", help="Job id (default: latest).")] = None,
) -> None:
    """A candidate's full configuration and its diff against the baseline."""
    found = optimize_remote.remote_store(job)
    if found is not None:
        optimize_remote.download(found, candidate)
    view = show_candidate(find_project(STATE.cwd), candidate, job)
    _say(show_renderables(view.job, view.record, view.files, view.diff))
