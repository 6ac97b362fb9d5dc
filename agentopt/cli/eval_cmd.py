"""`agentopt eval …`: the evaluation command group (cli.md). Commands map options to one
workflow call and render the result; all logic lives below the cli layer."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from agentopt.cli.errors import handle_errors
from agentopt.cli.lazy import Lazy, lazy_group
from agentopt.cli.shared_options import StrictOpt

COMMANDS = {
    "init": Lazy(
        "agentopt.cli.eval_generate_cmd",
        "init_command",
        "Examples:\n\n  agentopt eval init\n\n"
        '  agentopt eval init --no-prompt -g "A support agent for an online store" '
        "--eval-model gpt-4.1-mini",
        help="Guided first run: detect the agent, write the baseline, generate the suite.",
    ),
    "generate": Lazy(
        "agentopt.cli.eval_generate_cmd",
        "generate_command",
        "Examples:\n\n"
        '  agentopt eval generate -g "Answers HR policy questions" --max-samples 20\n\n'
        "  agentopt eval generate --gen-instruction-file brief.md --multi-turn 3\n\n"
        "  agentopt eval generate --dataset my_tasks.jsonl   # only the rubric is generated",
        help="Generate a seed dataset and a rubric evaluator, register them and write eval.yaml.",
    ),
    "update": Lazy(
        "agentopt.cli.eval_generate_cmd",
        "update_command",
        "Examples:\n\n  agentopt eval update\n\n  agentopt eval update --dataset-only",
        help="Register edited dataset/rubric working copies as new versions and re-pin eval.yaml.",
    ),
    "run": Lazy(
        "agentopt.cli.eval_run_group",
        "run_app",
        help="Run an evaluation suite against the agent and score it (azd: `run start`).",
    ),
    "calibrate": Lazy(
        "agentopt.cli.eval_calibrate_cmd",
        "calibrate_command",
        "Examples:\n\n"
        "  agentopt eval calibrate labelled.jsonl               # the model-free check\n\n"
        "  agentopt eval calibrate labelled.jsonl --sweep       # agreement per threshold\n\n"
        "  agentopt eval calibrate labelled.jsonl --method judge -m gpt-4.1-mini "
        "--min-agreement 0.9",
        help="Measure how often a criterion check agrees with your labels.",
    ),
    "list": Lazy(
        "agentopt.cli.eval_show_cmd",
        "list_command",
        "Example:\n\n  agentopt eval list --limit 10",
        help="List recent runs: id, name, date, dataset version, score, pass rate, errors.",
    ),
    "show": Lazy(
        "agentopt.cli.eval_show_cmd",
        "show_command",
        "Examples:\n\n  agentopt eval show\n\n"
        "  agentopt eval show RUN_ID --task refund_window\n\n"
        "  agentopt eval show RUN_ID --compare OTHER_RUN_ID\n\n"
        "  agentopt eval show RUN_ID --watch                # follow a --remote run",
        help="Show the summary of one run (default: the latest).",
    ),
}
"""Imported when used: `eval validate` (below) loads none of them."""

eval_app = typer.Typer(
    cls=lazy_group(COMMANDS),
    help="Create, run and maintain evaluation suites.",
    epilog="Examples:\n\n  agentopt eval init\n\n  agentopt eval run --output report.html\n\n"
    "  agentopt eval show --compare <older-run-id>",
    no_args_is_help=True,
    rich_markup_mode="rich",
)


@eval_app.command(
    "validate",
    epilog="Examples:\n\n  agentopt eval validate eval.yaml datasets/*/*.jsonl\n\n"
    "  agentopt eval validate evals/evals.json --strict\n\n"
    "  agentopt eval validate --upgrade prompts.json",
)
@handle_errors
def validate_command(
    paths: Annotated[
        list[Path], typer.Argument(help="Files to check (type detected from content).")
    ],
    strict: StrictOpt = False,
    upgrade: Annotated[
        bool,
        typer.Option(
            "--upgrade",
            help="Rewrite legacy M365 prompt files as versioned eval documents (backup first).",
        ),
    ] = False,
) -> None:
    """Check eval.yaml, task JSONL, M365 documents, rubric_dimensions.json and evaluator YAML.

    Prints `ok` or every problem found (file:line or key path). Exit 0 when all are valid, else 2.
    """
    from agentopt.cli.context import STATE
    from agentopt.workflows.validate import validate_paths

    reports = validate_paths([STATE.cwd / p for p in paths], strict=strict, upgrade=upgrade)
    failed = False
    for report in reports:
        shown = report.display_path(STATE.cwd)
        errors = [p for p in report.problems if p.severity == "error"]
        warnings = [p for p in report.problems if p.severity != "error"]
        if not errors:
            note = (
                f" ({len(warnings)} warning{'s' if len(warnings) != 1 else ''})" if warnings else ""
            )
            STATE.say(f"[green]ok[/]  {shown}  [dim]{report.kind}{note}[/]")
            if report.backup:
                STATE.say(f"  upgraded in place; backup: {escape(report.backup)}")
        else:
            failed = True
            STATE.say(f"[red]FAIL[/] {shown}  [dim]{report.kind}[/]")
        for p in report.problems:
            colour = "red" if p.severity == "error" else "yellow"
            STATE.say(f"  [{colour}]{p.severity}[/] {escape(str(p))}")
    if failed:
        raise typer.Exit(2)
