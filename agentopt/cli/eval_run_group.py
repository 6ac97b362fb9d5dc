"""`agentopt eval run` as a group, so azd's evaluations-extension spellings work as aliases
over the same code: `eval run start` (= `eval run`), `eval run list` (= `eval list`),
`eval run show [RUN] [--wait] [--fail-on …]`, and `eval run output list|show|export`.

`eval run` itself, with no subcommand, is exactly `eval_run_cmd.run_command`; the
subcommands load when named (`lazy.py`): a run does not import `eval list`'s and `run show`'s
modules (the remote run's watcher among them).
"""

from __future__ import annotations

import functools
import inspect
from typing import Any

import typer

from agentopt.cli.eval_run_cmd import run_command
from agentopt.cli.lazy import Lazy, lazy_group

RUN_EXAMPLES = (
    "Examples:\n\n"
    "  agentopt eval run                                  # ./eval.yaml\n\n"
    "  agentopt eval run --output report.html --output results.xml --fail-under 0.7\n\n"
    '  agentopt eval run --prompts "What is 2+2?" --expected 4 --evaluator ExactMatch '
    "--agent-model gpt-4.1-mini\n\n"
    "  agentopt eval run --prompts-file evals/evals.json --strict\n\n"
    "  agentopt eval run --env dev --log-level debug      # runevals' flags\n\n"
    "  agentopt eval run --evaluate-only --prompts-file evals/results.json -o rescored.json\n\n"
    "  agentopt eval run --repeat 3 --baseline 20261129-210000-a1b2c3\n\n"
    "  agentopt eval run --remote --fail-under 0.7      # in the Foundry project\n\n"
    "  agentopt eval run --remote --no-wait\n\n"
    "  agentopt eval run --dry-run\n\n"
    "  agentopt eval run --eval support-quality --fail-on pass-rate=0.8   # azure.eval.yaml\n\n"
    "  agentopt eval run start --eval support-quality --fail-on any-failure   # azd's spelling\n\n"
    "  agentopt eval run output export --format csv --output-file rows.csv"
)


def _as_callback(command: Any) -> Any:
    """`command` with a leading `ctx` that runs it only when no subcommand was named (click
    calls a group's callback before its subcommand)."""

    @functools.wraps(command)
    def callback(ctx: typer.Context, **kwargs: Any) -> None:
        if ctx.invoked_subcommand is None:
            command(**kwargs)

    signature = inspect.signature(command, eval_str=True)
    ctx = inspect.Parameter(
        "ctx", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=typer.Context
    )
    params = [ctx, *signature.parameters.values()]
    callback.__signature__ = signature.replace(parameters=params)  # type: ignore[attr-defined]
    callback.__annotations__ = {p.name: p.annotation for p in params}
    del callback.__wrapped__  # type: ignore[attr-defined]
    return callback


COMMANDS = {
    "start": Lazy(
        "agentopt.cli.eval_run_cmd",
        "run_command",
        "Examples:\n\n  agentopt eval run start --eval support-quality\n\n"
        "  agentopt eval run start --eval gate --fail-on pass-rate=0.8 --no-prompt",
        help="Run an evaluation suite against the agent and score it.",
    ),
    "list": Lazy(
        "agentopt.cli.eval_show_cmd",
        "list_command",
        "Example:\n\n  agentopt eval run list --limit 10",
        help="List recent runs: id, name, date, dataset version, score, pass rate, errors.",
    ),
    "show": Lazy(
        "agentopt.cli.run_output_cmd",
        "show_run_command",
        "Examples:\n\n  agentopt eval run show\n\n"
        "  agentopt eval run show RUN_ID --fail-on any-failure\n\n"
        "  agentopt eval run show RUN_ID --wait --fail-on pass-rate=0.8   # a --remote run",
        help="Show one run's summary (default: the latest), gated like azd's `run show`.",
    ),
    "output": Lazy(
        "agentopt.cli.run_output_cmd",
        "output_app",
        help="Per-sample results of a run (azd: `run output list|show|export`).",
    ),
}

run_app = typer.Typer(
    cls=lazy_group(COMMANDS),
    help="Run an evaluation suite against the agent and score it (azd: `run start`).",
    rich_markup_mode="rich",
    epilog=RUN_EXAMPLES,
)
run_app.callback(invoke_without_command=True, epilog=RUN_EXAMPLES)(_as_callback(run_command))
