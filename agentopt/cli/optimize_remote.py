"""Rendering of `optimize --remote` and of the subcommands on a Foundry optimization job
(`status [--watch]`, `cancel`, `apply`, `deploy`), with azd's wording where azd has one."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import RenderableType
from rich.text import Text

from agentopt.cli.azd_flags import endpoint_override
from agentopt.cli.context import STATE
from agentopt.cli.provenance import render_provenance
from agentopt.cli.run_render import ask_yes_no, render_notices
from agentopt.contracts.optimize_job import BASELINE_ID, JobRecord
from agentopt.core.errors import ConfigError
from agentopt.reports.optimize_live import LiveOptimizeView
from agentopt.reports.optimize_table import candidates_table
from agentopt.workflows.optimize import OptimizeOptions, find_project, resolve_job
from agentopt.workflows.optimize.journal import JobStore
from agentopt.workflows.remote.client import FoundryProject
from agentopt.workflows.remote.errors import RemoteRunFailed
from agentopt.workflows.remote.opt_apply import (
    RemoteApply,
    apply_remote,
    deploy_remote,
    fetch_candidate,
)
from agentopt.workflows.remote.opt_job import remote_info, remote_section
from agentopt.workflows.remote.opt_run import (
    cancel_job,
    prepare_remote_optimize,
    refresh_job,
    resubmit,
    submit_optimize,
    watch_job,
)
from agentopt.workflows.remote.polling import PollSettings

NOTE = (
    "Note: Optimization creates candidate agents as draft versions. Your live agent versions "
    "are not affected until you explicitly deploy a candidate."
)


def poll_settings(interval: float | None) -> PollSettings:
    """azd polls optimization jobs every 10 s (`--poll-interval`)."""
    seconds = 10.0 if interval is None else interval
    return PollSettings(interval_s=seconds, max_interval_s=max(seconds, 1.0) * 3)


def remote_store(
    job_id: str | None, project: Path | None = None
) -> tuple[JobStore, JobRecord] | None:
    """The job `job_id` (default: the latest) when it is a Foundry job, else None."""
    try:
        store = resolve_job(project or find_project(STATE.cwd), job_id)
        job = store.read_job()
    except ConfigError:
        return None
    return (store, job) if remote_section(job) else None


def _project(job: JobRecord) -> FoundryProject:
    """The job's project, unless `-p/--project-endpoint` or `--endpoint` names another."""
    remote = remote_section(job) or {}
    return FoundryProject(endpoint_override() or str(remote["endpoint"]))


def summary(job: JobRecord) -> list[RenderableType]:
    """Header, candidate table and next steps of a remote job."""
    remote = remote_info(job) or {}
    head = Text(f"Job {job.id}  (Foundry job {remote.get('job_id')}): {job.status}", style="bold")
    out: list[RenderableType] = [head]
    if remote.get("portal_url"):
        out.append(Text(f"Portal: {remote['portal_url']}", style="dim"))
    for warning in job.warnings:
        out.append(Text(f"warning: {warning}", style="yellow"))
    if job.candidates:
        out.append(candidates_table(job))
    best = job.candidate(job.best) if job.best else None
    if job.status == "running":
        out.append(Text(f"Follow it: agentopt optimize status {job.id} --watch"))
    elif best is not None and best.id != BASELINE_ID:
        out.append(
            Text(f"Best: {best.id}  score {best.validation.score if best.validation else '-'}")
        )
        out.append(Text("Apply the best candidate locally, then deploy:", style="bold"))
        out.append(Text(f"  agentopt optimize apply --candidate {best.id}\n  azd deploy"))
        out.append(Text(f"Or deploy it directly: agentopt optimize deploy --candidate {best.id}"))
    elif job.status == "completed":
        out.append(Text("No candidate beat the baseline. Outcome: no_improvement.", style="yellow"))
    return out


def _say(items: list[RenderableType]) -> None:
    for item in items:
        if STATE.quiet:
            continue
        # Lines stay whole (portal URLs paste and click as one); tables lay themselves out.
        STATE.console.print(item, soft_wrap=isinstance(item, Text))


def _finish(job: JobRecord, require_improvement: bool) -> None:
    _say(summary(job))
    if job.status == "failed":
        message = next((w for w in job.warnings if w.startswith("Foundry:")), "no error details")
        raise RemoteRunFailed(f"the optimization job {job.id} failed: {message}")
    if require_improvement and job.status == "completed" and job.outcome != "improved":
        STATE.err.print(
            "[red]gate failed:[/] --require-improvement: no candidate beat the baseline"
        )
        raise typer.Exit(1)


def run_remote_optimize(
    opts: OptimizeOptions, *, no_wait: bool, poll_interval: float | None
) -> None:
    """`optimize --remote`: submit (or, with --resume, follow) a Foundry optimization job."""
    if opts.resume:
        found = remote_store(opts.resume)
        if found is None:
            raise ConfigError(f"job {opts.resume} is not a Foundry job")
        store, job = found
        if remote_info(job) is None:  # stopped while submitting: send it again
            with _project(job) as project:
                job = resubmit(store, STATE.cwd, None, project)
        watch((store, job), poll_interval, require_improvement=opts.require_improvement)
        return
    prep = prepare_remote_optimize(opts, STATE.cwd, ask_yes_no if STATE.interactive else None)
    render_notices(prep.inputs.warnings, prep.notices)
    evaluators = ", ".join(c.evaluator for c in prep.criteria)
    render_provenance(prep.inputs.suite, dry_run=opts.dry_run)
    if opts.dry_run:
        STATE.say(
            f"Dry run (--remote): nothing was sent. Would optimize {prep.agent_name} in "
            f"{prep.endpoint} on {len(prep.inputs.dataset.tasks)} tasks with {evaluators}."
        )
        return
    STATE.say(NOTE)
    STATE.say(Text(f'Optimizing agent "{prep.agent_name}"...', style="bold"))
    with FoundryProject(prep.endpoint) as project:
        store, job = submit_optimize(prep, project)
        remote = remote_info(job) or {}
        STATE.say(f"  Job ID: {remote.get('job_id')}  (local job {job.id})")
        STATE.say(f"  Status: {remote.get('status')}")
        if remote.get("portal_url"):
            STATE.console.print(f"  Portal: {remote['portal_url']}", soft_wrap=True)
        if no_wait:
            STATE.say(f"Follow it with `agentopt optimize status {job.id} --watch`.")
            return
        job = _watch(store, project, poll_interval)
    _finish(job, opts.require_improvement)


def _watch(store: JobStore, project: FoundryProject, poll_interval: float | None) -> JobRecord:
    view = LiveOptimizeView(STATE.console, quiet=STATE.quiet)
    return watch_job(store, project, view, poll_settings(poll_interval))


def watch(
    found: tuple[JobStore, JobRecord], poll_interval: float | None, *, require_improvement: bool
) -> None:
    store, job = found
    with _project(job) as project:
        job = _watch(store, project, poll_interval)
    _finish(job, require_improvement)


def status(
    found: tuple[JobStore, JobRecord], *, watch_it: bool, poll_interval: float | None
) -> None:
    """`optimize status JOB [--watch]` for a Foundry job (read from the service)."""
    if watch_it:
        watch(found, poll_interval, require_improvement=False)
        return
    store, job = found
    with _project(job) as project:
        job = refresh_job(store, project)
    if STATE.json_output:
        STATE.emit_json(job.model_dump(mode="json"))
        return
    _say(summary(job))


def _deployed_name(agent: str) -> str:
    """azd: an agent service name from azure.yaml, or a Foundry agent name outside one."""
    from agentopt.workflows.detect import detect_target

    try:
        found = detect_target(STATE.cwd, agent=agent, no_prompt=True, environment=STATE.environment)
    except ConfigError:
        return agent
    return found.deployed_name or agent


def cancel(found: tuple[JobStore, JobRecord]) -> None:
    store, job = found
    with _project(job) as project:
        job = cancel_job(store, project)
    remote = remote_info(job) or {}
    STATE.say(
        f"  ⚠ Job {remote.get('job_id')} has been cancelled (status: {remote.get('status')})."
    )
    STATE.say(f"  Check status with:\n    agentopt optimize status {job.id}")


def apply(
    found: tuple[JobStore, JobRecord],
    candidate: str,
    *,
    promote: bool,
    project_dir: Path | None = None,
) -> RemoteApply:
    store, job = found
    with _project(job) as project:
        done = apply_remote(
            project_dir or find_project(STATE.cwd), store.job_id, candidate, project,
            promote=promote,
        )  # fmt: skip
    for path in (done.definition_file, done.env_file):
        if path is not None:
            STATE.say(f"  Updated {path}")
    return done


def download(found: tuple[JobStore, JobRecord], candidate: str) -> None:
    """A remote candidate (and the baseline, for the diff) fetched into the job folder once."""
    store, job = found
    wanted = [
        c for c in dict.fromkeys([candidate, BASELINE_ID]) if not store.candidate_dir(c).is_dir()
    ]
    if not wanted:
        return
    with _project(job) as project:
        for cand in wanted:
            fetch_candidate(store, project, cand)


def deploy(
    found: tuple[JobStore, JobRecord],
    candidate: str,
    poll_interval: float | None,
    *,
    agent: str | None = None,
) -> None:
    """`agent`: an azd service (its deployed agent name is used) or a Foundry agent name."""
    store, job = found
    STATE.say(Text(f"Deploying candidate {candidate}...", style="bold"))
    name = _deployed_name(agent) if agent else None
    with _project(job) as project:
        done = deploy_remote(
            find_project(STATE.cwd), store.job_id, candidate, project,
            poll_settings(poll_interval), agent_name=name,
        )  # fmt: skip
    STATE.say(f"  ✓ Successfully deployed candidate {candidate} as version {done.version}")
    STATE.say(f"  Agent:   {done.agent}\n  Version: {done.version}")
    for note in done.notes:
        STATE.err.print(f"[yellow]warning:[/] {note}")
