"""`eval run --interactive`: one prompt at a time; each answer is scored and shown at once."""

from __future__ import annotations

import dataclasses
import itertools

import typer

from agentopt.cli.context import STATE
from agentopt.core.errors import ConfigError
from agentopt.reports.terminal_task import render_task
from agentopt.workflows.events import NullSink
from agentopt.workflows.run.eval_run import prepare_run, run_prepared
from agentopt.workflows.run.inputs import RunOptions


def interactive_loop(opts: RunOptions) -> None:
    """Read prompts until an empty line; run and score each as its own small run."""
    if not STATE.interactive:
        raise ConfigError(
            "--interactive needs a terminal", hint="drop --no-prompt, or use --prompts …"
        )
    STATE.say("Type a prompt and press Enter; an empty line ends.")
    for number in itertools.count(1):
        prompt = typer.prompt("prompt", default="", show_default=False).strip()
        if not prompt:
            return
        expected = typer.prompt("expected (optional)", default="", show_default=False).strip()
        one = dataclasses.replace(
            opts,
            prompts=[prompt],
            expected=[expected] if expected else None,
            first_prompt=number,
            outputs=[],
        )
        prepared = prepare_run(one, STATE.cwd, None)
        outcome = run_prepared(prepared, NullSink())
        if outcome.results is not None and outcome.results.tasks:
            render_task(outcome.results, outcome.results.tasks[0].name, STATE.console)
