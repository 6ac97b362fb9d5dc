"""azd's run-reading spellings over agentopt's stored runs: `eval run show [RUN] [--wait]
[--fail-on …]` and `eval run output list|show|export` (azd-eval.md §2.5–§2.6)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from agentopt.cli.azure_eval_run import apply_gate, outcome_gate
from agentopt.cli.context import STATE
from agentopt.cli.errors import handle_errors
from agentopt.cli.shared_options import FailOnOpt, PollIntervalOpt
from agentopt.contracts import load_results
from agentopt.contracts.run_results import RunResults, load_run_record
from agentopt.core.atomic import write_text_atomic
from agentopt.core.errors import ConfigError, InputError, Problem
from agentopt.core.paths import runs_dir
from agentopt.reports import render_summary
from agentopt.reports.run_output import FORMATS, failed_only, output_items, render
from agentopt.workflows.azure_eval.gate import parse_fail_on
from agentopt.workflows.run.store import list_run_ids, resolve_run_ref

RunArg = Annotated[str | None, typer.Argument(help="Run id (default: the latest).")]
EvalOpt = Annotated[
    str | None, typer.Option("--eval", help="The latest run of this eval (azure.eval.yaml).")
]
RunOpt = Annotated[str | None, typer.Option("--run", help="Run id (default: the latest).")]
FailedOnlyOpt = Annotated[bool, typer.Option("--failed-only", help="Only rows that did not pass.")]


def run_of(run: str | None, eval_name: str | None) -> str | None:
    """`run`, else the latest run of `eval_name` (as recorded by `eval run --eval`), else
    None (the latest run)."""
    if run is not None or eval_name is None:
        return run
    for run_id in reversed(list_run_ids(STATE.cwd)):
        try:
            record = load_run_record(runs_dir(STATE.cwd) / run_id / "run.json")
        except InputError:
            continue
        if record.config.get("eval_name") == eval_name:
            return run_id
    raise ConfigError(
        problems=[Problem("", "--eval", f'no run of eval "{eval_name}" yet')],
        hint=f"start one with `agentopt eval run --eval {eval_name}`",
    )


def _results(run: str | None, eval_name: str | None) -> RunResults:
    return load_results(resolve_run_ref(STATE.cwd, run_of(run, eval_name)))


@handle_errors
def show_run_command(
    run: RunArg = None,
    eval_name: EvalOpt = None,
    wait: Annotated[
        bool, typer.Option("--wait", help="Follow a --remote run until it ends.")
    ] = False,
    fail_on: FailOnOpt = None,
    poll_interval: PollIntervalOpt = None,
) -> None:
    """Show one run's summary (default: the latest), gated like azd's `run show`."""
    gate = parse_fail_on(fail_on) if fail_on is not None else None
    ref = run_of(run, eval_name)
    ids = list_run_ids(STATE.cwd)
    folder = runs_dir(STATE.cwd) / (ref or (ids[-1] if ids else ""))
    if ids and not (folder / "results.json").exists() and (folder / "run.json").exists():
        if not wait:
            if gate is not None:
                raise ConfigError.at(
                    "",
                    "--fail-on",
                    f"run {folder.name} has not finished; pass --wait to follow it, then gate it",
                )
        else:
            from agentopt.cli.remote_render import watch_remote

            watch_remote(folder.name, poll_interval, outcome_gate(gate) if gate else None)
            return
    results = load_results(resolve_run_ref(STATE.cwd, ref))
    render_summary(results, STATE.console)
    if gate is not None:
        code = apply_gate(gate, results.summary, 0)
        if code:
            raise typer.Exit(code)


output_app = typer.Typer(
    help="Per-sample results of a run (azd: `run output list|show|export`).",
    rich_markup_mode="rich",
    no_args_is_help=True,
    epilog="Examples:\n\n  agentopt eval run output list --failed-only\n\n"
    "  agentopt eval run output export --format csv --output-file rows.csv",
)


@output_app.command(
    "list",
    epilog="Examples:\n\n  agentopt eval run output list --failed-only\n\n"
    "  agentopt eval run output list --eval support-quality --output-file rows.json",
)
@handle_errors
def list_output_command(
    run: RunArg = None,
    eval_name: EvalOpt = None,
    failed: FailedOnlyOpt = False,
    output_file: Annotated[
        Path | None, typer.Option("--output-file", help="Write the rows as JSON here.")
    ] = None,
) -> None:
    """One line per sample: status and each evaluator's verdict (JSON with --output-file)."""
    results = _results(run, eval_name)
    items = output_items(results)
    items = failed_only(items) if failed else items
    if output_file is not None:
        _write(output_file, json.dumps(items, indent=2, ensure_ascii=False) + "\n")
        return
    names = [r["name"] for r in items[0]["results"]] if items else []
    table = Table(title=f"Run {results.run.id}", title_justify="left")
    for col in ("sample", "status", *names):
        table.add_column(col)
    for item in items:
        cells = {r["name"]: _verdict(r) for r in item["results"]}
        table.add_row(escape(item["id"]), item["status"], *(cells.get(n, "") for n in names))
    STATE.say(table if items else "No rows." if not failed else "Every row passed.")


def _verdict(result: dict[str, object]) -> str:
    if result["passed"] is None:
        return "error"
    score = result["score"]
    shown = f" {score:g}" if isinstance(score, int | float) else ""
    return f"{'pass' if result['passed'] else 'fail'}{shown}"


@output_app.command(
    "show", epilog="Example:\n\n  agentopt eval run output show refund_window --run RUN_ID"
)
@handle_errors
def show_output_command(
    item: Annotated[str, typer.Argument(help="The sample (its id in `run output list`).")],
    run: RunOpt = None,
    eval_name: EvalOpt = None,
) -> None:
    """One sample's scores and reasons."""
    items = output_items(_results(run, eval_name))
    found = next((i for i in items if i["id"] == item), None)
    if found is None:
        known = ", ".join(i["id"] for i in items[:10])
        raise ConfigError(f'no sample "{item}" in the run', hint=f"samples: {known}")
    STATE.say(f"[bold]{escape(found['id'])}[/]  {found['status']}")
    STATE.say(f"  query:    {escape(found['datasource_item']['query'])}")
    STATE.say(f"  response: {escape(found['response'])}")
    for r in found["results"]:
        STATE.say(f"  {escape(r['name'])}: {_verdict(r)} — {escape(r['reason'] or '')}")


@output_app.command(
    "export",
    epilog="Examples:\n\n  agentopt eval run output export --output-file rows.jsonl\n\n"
    "  agentopt eval run output export RUN_ID --format csv --output-file rows.csv",
)
@handle_errors
def export_output_command(
    run: RunArg = None,
    eval_name: EvalOpt = None,
    fmt: Annotated[
        str, typer.Option("--format", help="jsonl (one row per line), csv, or json (run + rows).")
    ] = "jsonl",
    output_file: Annotated[
        Path | None, typer.Option("--output-file", help="Where to write (default: stdout).")
    ] = None,
    failed: FailedOnlyOpt = False,
) -> None:
    """Every sample of a run with each evaluator's score, verdict and reason."""
    if fmt not in FORMATS:
        raise ConfigError.at("", "--format", f"expected one of {', '.join(FORMATS)}, found {fmt}")
    results = _results(run, eval_name)
    items = output_items(results)
    text = render(results, fmt, failed_only(items) if failed else items)  # type: ignore[arg-type]
    if output_file is None:
        typer.echo(text, nl=False)
        return
    _write(output_file, text)


def _write(path: Path, text: str) -> None:
    target = path if path.is_absolute() else STATE.cwd / path
    target.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(target, text)
    STATE.say(f"Wrote {target}")
