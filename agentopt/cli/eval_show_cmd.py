"""`agentopt eval list` and `agentopt eval show`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from agentopt import __version__
from agentopt.cli.context import STATE
from agentopt.cli.errors import handle_errors
from agentopt.cli.remote_render import watch_remote
from agentopt.cli.shared_options import PollIntervalOpt, WatchOpt
from agentopt.contracts import load_results
from agentopt.core.errors import InputError
from agentopt.core.paths import runs_dir
from agentopt.evaluators.stats import paired_bootstrap_ci
from agentopt.reports import (
    RunHeader,
    compare_runs,
    render_comparison,
    render_run_list,
    render_summary,
    render_task,
    write_comparison,
    write_outputs,
)
from agentopt.workflows.run.store import list_run_ids, resolve_run_ref


@handle_errors
def list_command(
    limit: Annotated[int, typer.Option("--limit", min=1, help="How many recent runs.")] = 20,
) -> None:
    """List recent runs: id, name, date, dataset version, score, pass rate, errors."""
    headers = _headers(limit)
    STATE.emit_list(
        headers,
        "No runs yet. Start one with `agentopt eval run`.",
        lambda: render_run_list(headers, STATE.console),
    )


def _headers(limit: int) -> list[RunHeader]:
    headers: list[RunHeader] = []
    for run_id in reversed(list_run_ids(STATE.cwd)):
        path = runs_dir(STATE.cwd) / run_id / "results.json"
        if not path.exists():
            headers.append(RunHeader(id=run_id, status="incomplete"))
        else:
            try:
                headers.append(RunHeader.from_results(load_results(path)))
            except InputError:
                headers.append(RunHeader(id=run_id, status="unreadable"))
        if len(headers) >= limit:
            break
    return headers


@handle_errors
def show_command(
    run_id: Annotated[
        str | None, typer.Argument(help="Run id or results.json (default: the latest).")
    ] = None,
    task: Annotated[str | None, typer.Option("--task", help="Print one task's transcript.")] = None,
    compare: Annotated[
        str | None, typer.Option("--compare", help="Per-task and per-evaluator deltas vs RUN_ID.")
    ] = None,
    out_file: Annotated[
        Path | None,
        typer.Option(
            "--out-file", "-O", help="Export (.json, .html, .csv, .xml, .md by extension)."
        ),
    ] = None,
    eval_run_id: Annotated[
        str | None,
        typer.Option("--eval-run-id", help="The run to show (azd's spelling of RUN_ID)."),
    ] = None,
    limit: Annotated[
        int | None,
        typer.Option("--limit", min=1, help="Without a run id: list this many recent runs."),
    ] = None,
    watch: WatchOpt = False,
    poll_interval: PollIntervalOpt = None,
) -> None:
    """Show the summary of one run (default: the latest)."""
    if eval_run_id is not None and run_id is not None and eval_run_id != run_id:
        raise InputError.at("", "--eval-run-id", f"names {eval_run_id}, the argument {run_id}")
    run_id = eval_run_id or run_id
    if limit is not None and run_id is None and not (task or compare or out_file or watch):
        list_command(limit)  # azd: `eval show` without a run lists the eval's runs
        return
    if watch:
        ids = list_run_ids(STATE.cwd)
        ref = run_id or (ids[-1] if ids else None)
        if ref is None:
            resolve_run_ref(STATE.cwd, None)  # the usual "no runs yet" error
        elif not (runs_dir(STATE.cwd) / ref / "results.json").exists():
            watch_remote(ref, poll_interval)
            return
    results = load_results(resolve_run_ref(STATE.cwd, run_id))
    if compare:
        base = load_results(resolve_run_ref(STATE.cwd, compare))
        comparison = compare_runs(base, results, paired_ci=paired_bootstrap_ci)
        if STATE.json_output:
            STATE.emit_json(comparison.model_dump(mode="json"))
        else:
            render_comparison(comparison, STATE.console)
        if out_file is not None:
            target = out_file if out_file.is_absolute() else STATE.cwd / out_file
            STATE.say(f"Wrote {write_comparison(comparison, target)}")
        return
    if STATE.json_output:
        data = results.model_dump(mode="json")
        if task:
            found = [t for t in data["tasks"] if t.get("name") == task]
            if not found:
                raise InputError.at("", "--task", f"no task named {task!r} in run {run_id}")
            data = found[0]
        STATE.emit_json(data)
    elif task:
        render_task(results, task, STATE.console)
    else:
        render_summary(results, STATE.console)
    if out_file is not None:
        target = out_file if out_file.is_absolute() else STATE.cwd / out_file
        for out in write_outputs(
            results,
            [target],
            agent_name=results.run.agent.name,
            cli_version=__version__,
            flag="--out-file",
        ):
            STATE.say(f"Wrote {out.path}")
