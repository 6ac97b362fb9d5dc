"""`agentopt optimize` and its subcommands `status`, `list`, `apply`, `show`, and for Foundry
jobs (`--remote`) `cancel` and `deploy`: options → OptimizeOptions → one workflow call →
render."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import RenderableType
from rich.markup import escape
from rich.text import Text

from agentopt.cli import azure_eval_run, optimize_remote
from agentopt.cli.azd_flags import (
    OptimizeGroup,
    endpoint_override,
    positional_agent,
)
from agentopt.cli.context import STATE
from agentopt.cli.errors import handle_errors
from agentopt.cli.provenance import render_provenance
from agentopt.cli.run_render import ask_yes_no, live_view, render_notices
from agentopt.cli.shared_options import (
    AgentOpt,
    AzureEvalOpt,
    ConcurrencyOpt,
    DryRunOpt,
    EvalModelOpt,
    EvaluatorOpt,
    ExecutorOpt,
    MaxCostOpt,
    NoWaitOpt,
    PollIntervalOpt,
    RayAddressOpt,
    RemoteOpt,
    ResumeOpt,
    WatchOpt,
    options_from,
)
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
    find_project,
    job_records,
    job_status,
    prepare_optimize,
    run_optimize,
    show_candidate,
    split_list,
)
from agentopt.workflows.optimize.apply import FileChange, apply_plan, plan_apply

JobOpt = Annotated[str | None, typer.Option("--job", help="Job id (default: latest).")]
CandidateOpt = Annotated[str, typer.Option("--candidate", help="Candidate id, e.g. cand_02.")]

optimize_app = typer.Typer(
    cls=OptimizeGroup,
    help="Search for a better agent configuration and apply the winner.\n\n"
    "Usage: agentopt optimize [AGENT-NAME] [OPTIONS], or a subcommand.",
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
    agent: AgentOpt = None,
    dataset: Annotated[Path | None, typer.Option("-d", "--dataset", help="Dataset file.")] = None,
    eval_model: EvalModelOpt = None,
    optimize_model: Annotated[
        str | None, typer.Option("--optimize-model", help="Reflection model.")
    ] = None,
    evaluator: EvaluatorOpt = None,
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
    max_cost: MaxCostOpt = None,
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
    concurrency: ConcurrencyOpt = None,
    resume: ResumeOpt = None,
    require_improvement: Annotated[
        bool, typer.Option("--require-improvement", help="Exit 1 when nothing beats baseline.")
    ] = False,
    dry_run: DryRunOpt = False,
    remote: RemoteOpt = False,
    no_wait: NoWaitOpt = False,
    poll_interval: PollIntervalOpt = None,
    executor: ExecutorOpt = None,
    ray_address: RayAddressOpt = None,
    eval_name: AzureEvalOpt = None,
    from_matrix: Annotated[
        str | None,
        typer.Option(
            "--from-matrix",
            help="Start from the best variant of a matrix run (ID or 'latest').",
        ),
    ] = None,
) -> None:
    """Score the baseline, propose candidates, screen them, evaluate the promising ones fully,
    rank them on quality and cost.

    Exit codes: 0 ok, 1 --require-improvement found none, 2 bad input, 3 errors, 130 Ctrl-C.
    """
    flags = dict(locals())  # the options by name, before anything else is bound
    if ctx.invoked_subcommand is not None:
        return
    opts = options_from(
        OptimizeOptions,
        flags,
        agent=positional_agent(ctx, agent),
        project_endpoint=endpoint_override(),
        evaluators=evaluator or None,
        targets=split_list(targets),
        model_search_space=split_list(model_search_space),
        real_tools=True if real_tools else None,
    )
    if no_wait and not remote:
        raise ConfigError.at("", "--no-wait", "--no-wait only applies to --remote jobs")
    opts = azure_eval_run.prepare_optimize(opts)
    if remote or (resume and optimize_remote.remote_store(resume)):
        optimize_remote.run_remote_optimize(opts, no_wait=no_wait, poll_interval=poll_interval)
        return
    prepared = prepare_optimize(opts, STATE.cwd, ask_yes_no if STATE.interactive else None)
    render_notices(prepared.inputs.warnings, prepared.notices)
    render_provenance(prepared.inputs.suite, dry_run=dry_run)
    _say(plan_renderables(prepared.plan, dry_run=dry_run))
    if dry_run:
        return
    with live_view(LiveOptimizeView) as view:
        outcome = run_optimize(prepared, view)
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
    watch: WatchOpt = False,
    poll_interval: PollIntervalOpt = None,
) -> None:
    """Progress of an optimization job (default: the latest); a Foundry job is read from the
    service. With -o json: the job record as JSON."""
    found = optimize_remote.remote_store(job_id)
    if found is not None:
        optimize_remote.status(found, watch_it=watch, poll_interval=poll_interval)
        return
    if watch:
        raise ConfigError.at("", "--watch", "--watch follows Foundry jobs (optimize --remote)")
    _, job = job_status(find_project(STATE.cwd), job_id)
    if STATE.json_output:
        STATE.emit_json(job.model_dump(mode="json"))
        return
    _say(status_renderables(job))


@optimize_app.command(
    "cancel", epilog="Example:\n\n  agentopt optimize cancel   # the latest Foundry job"
)
@handle_errors
def cancel_command(
    job_id: Annotated[str | None, typer.Argument()] = None,
) -> None:
    """Cancel a running Foundry optimization job (default: the latest)."""
    found = optimize_remote.remote_store(job_id)
    if found is None:
        raise ConfigError(
            "only a Foundry job (optimize --remote) can be cancelled; a local job stops with "
            "Ctrl-C and continues with --resume"
        )
    optimize_remote.cancel(found)


@optimize_app.command(
    "deploy",
    epilog="Examples:\n\n  agentopt optimize deploy --candidate cand_02\n\n"
    "  agentopt optimize deploy support-agent --candidate cand_02",
)
@handle_errors
def deploy_command(
    candidate: CandidateOpt,
    agent_name: Annotated[
        str | None, typer.Argument(help="Agent service or Foundry agent (default: the job's).")
    ] = None,
    agent: Annotated[
        str | None, typer.Option("--agent", help="Same as AGENT-NAME (azd's flag).")
    ] = None,
    job: JobOpt = None,
    poll_interval: PollIntervalOpt = None,
) -> None:
    """Deploy a Foundry job's candidate as a new version of the deployed agent."""
    if agent_name and agent and agent_name != agent:
        raise ConfigError(f"the agent is given twice: {agent_name!r} and --agent {agent!r}")
    found = optimize_remote.remote_store(job)
    if found is None:
        raise ConfigError(
            "deploy creates a Foundry agent version from a Foundry job's candidate "
            "(optimize --remote); apply a local job's candidate with `optimize apply`"
        )
    optimize_remote.deploy(found, candidate, poll_interval, agent=agent_name or agent)


STATUS_ALIASES = {
    "pending": "running",
    "queued": "running",
    "in_progress": "running",
    "succeeded": "completed",
    "canceled": "cancelled",
}
"""azd's (and Foundry's) status names → the local job's."""


@optimize_app.command(
    "list",
    epilog="Examples:\n\n  agentopt optimize list\n\n"
    "  agentopt optimize list --status completed --limit 5 -o json",
)
@handle_errors
def list_command(
    limit: Annotated[int, typer.Option("--limit", min=1, help="Most recent N jobs.")] = 20,
    status: Annotated[
        str | None,
        typer.Option("--status", help="Only jobs in this status (running, completed, failed…)."),
    ] = None,
) -> None:
    """List optimization jobs, newest last."""
    jobs = job_records(find_project(STATE.cwd))
    if status:
        wanted = STATUS_ALIASES.get(status.strip().lower(), status.strip().lower())
        jobs = [j for j in jobs if j.status == wanted]
    jobs = jobs[-limit:]
    STATE.emit_list(
        jobs,
        "No optimization jobs yet: start one with `agentopt optimize`.",
        lambda: STATE.say(jobs_table(jobs)),
    )


@optimize_app.command(
    "apply",
    epilog="Examples:\n\n  agentopt optimize apply --candidate cand_02\n\n"
    "  agentopt optimize apply --candidate cand_02 --promote   # make it the baseline\n\n"
    "  agentopt --no-prompt optimize apply --candidate cand_03 --promote --force",
)
@handle_errors
def apply_command(
    candidate: CandidateOpt,
    job: JobOpt = None,
    promote: Annotated[
        bool, typer.Option("--promote", help="Make it the baseline (old one backed up).")
    ] = False,
    force: Annotated[
        bool,
        typer.Option(
            "--force",
            help="Promote without asking a candidate that was screened out, not better than "
            "the baseline, drops a tool or overwrites edits made since the job.",
        ),
    ] = False,
    agent: Annotated[
        str | None,
        typer.Option("--agent", help="azd agent service to write it to (when there are several)."),
    ] = None,
) -> None:
    """Write a candidate's changes to .agent_configs/<id>/ (and with --promote, to the
    baseline), printing the diff of every file it changes first."""
    project = agent_project(agent)
    found = optimize_remote.remote_store(job, project)
    if found is not None:
        done = optimize_remote.apply(found, candidate, promote=promote, project_dir=project)
        result = done.result
        result.notes.extend(done.notes)
        _say(apply_changes(result.changes, [], []))
    else:
        plan = plan_apply(project, candidate, job, promote=promote)
        _say(apply_changes(plan.changes, plan.dropped_tools, plan.added_tools))
        confirm = (lambda q: ask_yes_no(q, False)) if STATE.interactive else None
        result = apply_plan(plan, force=force, confirm=confirm)
    STATE.say(f"Wrote {result.written}")
    if result.backup:
        STATE.say(f"  (the previous copy is kept at {result.backup})")
    if result.promoted:
        saved = f" (old baseline backed up to {result.baseline_backup})"
        STATE.say(f"Promoted {candidate} to the baseline{saved if result.baseline_backup else ''}")
    for note in result.notes:
        STATE.err.print(f"[yellow]note:[/] {note}")


def apply_changes(
    changes: list[FileChange], dropped: list[str], added: list[str]
) -> list[RenderableType]:
    """Every file apply changes, with its diff against the live baseline, and the tools it
    removes or adds, named."""
    if not changes:
        return [Text("No file changes: the candidate's configuration is the baseline's.")]
    names = ", ".join(c.path for c in changes)
    out: list[RenderableType] = [Text(f"Changes to the baseline ({len(changes)} files: {names}):")]
    for tool in dropped:
        out.append(Text(f"  tools.json: removes the tool '{tool}'", style="bold red"))
    for tool in added:
        out.append(Text(f"  tools.json: adds the tool '{tool}'", style="bold green"))
    lines = [line for change in changes for line in change.diff()]
    return [*out, *show_diff(lines)]


def show_diff(lines: list[str]) -> list[RenderableType]:

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
    candidate: CandidateOpt,
    job: JobOpt = None,
) -> None:
    """A candidate's full configuration and its diff against the baseline."""
    found = optimize_remote.remote_store(job)
    if found is not None:
        optimize_remote.download(found, candidate)
    view = show_candidate(find_project(STATE.cwd), candidate, job)
    if STATE.json_output:
        STATE.emit_json(
            {
                "job": view.job.id,
                "candidate": view.record.model_dump(mode="json"),
                "files": view.files,
                "diff": view.diff,
            }
        )
        return
    _say(show_renderables(view.job, view.record, view.files, view.diff))


def agent_project(agent: str | None) -> Path:
    """The project folder of `--agent SERVICE` (azd `optimize apply --agent`), else where the
    jobs are."""
    if agent is None:
        return find_project(STATE.cwd)
    from agentopt.workflows.detect import detect_target

    return detect_target(STATE.cwd, agent=agent, no_prompt=True).project_dir
