"""`agentopt eval run`: options → RunRequest → one workflow call → render."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from agentopt.cli import azure_eval_run
from agentopt.cli.context import STATE
from agentopt.cli.errors import handle_errors
from agentopt.cli.run_render import execute_run
from agentopt.cli.runevals_flags import (
    LOG_LEVELS,
    console_log,
    open_reports,
    print_version,
    toolkit_environment,
)
from agentopt.cli.shared_options import (
    AgentOpt,
    AzureEvalOpt,
    ConcurrencyOpt,
    DryRunOpt,
    EvalModelOpt,
    EvaluatorOpt,
    ExecutorOpt,
    FailOnOpt,
    MaxCostOpt,
    NoWaitOpt,
    PollIntervalOpt,
    RayAddressOpt,
    RemoteOpt,
    ResumeOpt,
    StrictOpt,
    options_from,
)
from agentopt.core.errors import ConfigError
from agentopt.workflows.run.inputs import RunOptions
from agentopt.workflows.run.variants import VariantSpec, variants_from_flags


@handle_errors
def run_command(
    prompts: Annotated[
        list[str] | None,
        typer.Option("--prompts", help="Ad-hoc prompts: --prompts P1 P2 …", show_default=False),
    ] = None,
    expected: Annotated[
        list[str] | None,
        typer.Option("--expected", help="Expected answers, one per prompt.", show_default=False),
    ] = None,
    interactive: Annotated[
        bool,
        typer.Option("--interactive", "-i", help="One prompt at a time; empty line ends."),
    ] = False,
    prompts_file: Annotated[
        Path | None,
        typer.Option("--prompts-file", help="A dataset: task JSONL, M365 eval document, CSV."),
    ] = None,
    config: Annotated[
        Path | None, typer.Option("--config", "-c", help="eval.yaml (default: ./eval.yaml).")
    ] = None,
    agent: AgentOpt = None,
    agent_model: Annotated[
        list[str] | None,
        typer.Option(
            "--agent-model",
            help="Model for an ad-hoc local agent (repeat it: one column per model).",
            show_default=False,
        ),
    ] = None,
    instructions: Annotated[
        list[str] | None,
        typer.Option(
            "--instructions",
            help="Ad-hoc agent instructions: TEXT or @FILE (repeat it: one column each).",
            show_default=False,
        ),
    ] = None,
    evaluator: EvaluatorOpt = None,
    eval_model: EvalModelOpt = None,
    target: Annotated[
        str | None,
        typer.Option("--target", help="local | hosted | endpoint | command | foundry."),
    ] = None,
    repeat: Annotated[int, typer.Option("--repeat", min=1, help="Run each task N times.")] = 1,
    concurrency: ConcurrencyOpt = None,
    judge_concurrency: Annotated[
        int | None, typer.Option("--judge-concurrency", min=1, help="Judge pool (default 16).")
    ] = None,
    limit: Annotated[int | None, typer.Option("--limit", min=1, help="First N tasks.")] = None,
    filter_expr: Annotated[
        str | None,
        typer.Option("--filter", help="Select tasks: name glob, category:X, tag:Y (comma = or)."),
    ] = None,
    output: Annotated[
        list[Path] | None,
        typer.Option(
            "--output",
            "-o",
            help="Also write .json .html .csv .xml (JUnit) .md (repeatable).",
            show_default=False,
        ),
    ] = None,
    fail_under: Annotated[
        float | None,
        typer.Option(
            "--fail-under", min=0.0, max=1.0, help="Exit 1 when the score (0–1) is below."
        ),
    ] = None,
    min_pass_rate: Annotated[
        float | None,
        typer.Option(
            "--min-pass-rate",
            min=0.0,
            max=1.0,
            help="Exit 1 when the pass rate (0–1, e.g. 0.8) is below.",
        ),
    ] = None,
    baseline: Annotated[
        str | None,
        typer.Option("--baseline", help="RUN_ID or results.json: fail on a real regression."),
    ] = None,
    max_errors: Annotated[
        int | None,
        typer.Option("--max-errors", min=0, help="Tolerated agent/judge errors (default 0)."),
    ] = None,
    max_cost: MaxCostOpt = None,
    dry_run: DryRunOpt = False,
    resume: ResumeOpt = None,
    retry_errors: Annotated[
        bool,
        typer.Option(
            "--retry-errors",
            help="Redo the errored tasks of the latest run (or of --resume RUN_ID): agent "
            "errors run again, evaluator errors are re-scored on the saved answers.",
        ),
    ] = False,
    no_cache: Annotated[
        bool, typer.Option("--no-cache", help="Do not read the model-call cache.")
    ] = False,
    seed: Annotated[
        int | None, typer.Option("--seed", help="Seed of the bootstrap intervals (default 0).")
    ] = None,
    name: Annotated[str | None, typer.Option("--name", help="Run name.")] = None,
    strict: StrictOpt = False,
    no_upgrade: Annotated[
        bool, typer.Option("--no-upgrade", help="Read legacy M365 files without rewriting.")
    ] = False,
    evaluate_only: Annotated[
        bool,
        typer.Option(
            "--evaluate-only",
            help="Score the responses the M365 document already holds; never call the agent.",
        ),
    ] = False,
    timeout: Annotated[
        float | None, typer.Option("--timeout", help="Deadline for the whole run, seconds.")
    ] = None,
    remote: RemoteOpt = False,
    no_wait: NoWaitOpt = False,
    poll_interval: PollIntervalOpt = None,
    executor: ExecutorOpt = None,
    ray_address: RayAddressOpt = None,
    eval_name: AzureEvalOpt = None,
    fail_on: FailOnOpt = None,
    env_name: Annotated[
        str | None,
        typer.Option(
            "--env",
            metavar="NAME",
            help="M365 Agents Toolkit environment: reads env/.env.NAME (+ .user), as runevals "
            "does; its AZURE_AI_* variables configure the judge. (-e is the azd environment.)",
            show_default=False,
        ),
    ] = None,
    log_level: Annotated[
        str | None,
        typer.Option(
            "--log-level",
            metavar="[LEVEL]",
            help="Log lines on stderr from LEVEL: debug | info | warning | error (bare: info).",
            show_default=False,
        ),
    ] = None,
    no_open: Annotated[
        bool,
        typer.Option("--no-open", help="Do not open the HTML report in the browser."),
    ] = False,
    version: Annotated[
        bool,
        typer.Option(
            "-V", "--version", callback=print_version, is_eager=True, help="Show the version."
        ),
    ] = False,
) -> None:
    """Run an evaluation suite against the agent and score it.

    Inputs, first that applies: --prompts, --interactive, --prompts-file, --config, ./eval.yaml,
    then an M365 eval document (./prompts.json, ./evals.json, ./tests.json, ./evals/…).
    With --remote, Foundry runs the deployed agent (AGENT_<SVC>_NAME / _VERSION) and its judges
    in the project (FOUNDRY_PROJECT_ENDPOINT); results land in the same results.json.
    Exit codes: 0 ok, 1 a gate failed, 2 bad input, 3 errors beyond --max-errors, 130 Ctrl-C.
    """
    flags = dict(locals())  # the options by name, before anything else is bound
    reports = _formats_out(list(output or []))
    if STATE.json_output:  # `agentopt -o json eval run`: stdout holds the JSON alone
        STATE.quiet = True
    # Several models and/or instructions: a matrix run, one column per variant.
    variants = variants_from_flags(agent_model, instructions, STATE.cwd)
    opts = options_from(
        RunOptions,
        flags,
        agent_model=agent_model[0] if agent_model and not variants else None,
        instructions=instructions[0] if instructions and not variants else None,
        evaluators=evaluator,
        repeat=repeat if repeat != 1 else None,
        filter=filter_expr,
        outputs=reports,
        toolkit_env=env_name,
    )
    if log_level is not None and log_level.lower() not in LOG_LEVELS:
        raise ConfigError.at(
            "", "--log-level", f"expected one of {', '.join(LOG_LEVELS)}, found {log_level!r}"
        )
    with toolkit_environment(STATE.cwd, env_name), console_log(log_level and log_level.lower()):
        _run(
            opts,
            fail_on,
            interactive=interactive,
            poll_interval=poll_interval,
            no_open=no_open,
            variants=variants,
            flags=bool(agent_model or instructions),
        )


def _run(
    opts: RunOptions,
    fail_on: str | None,
    *,
    interactive: bool,
    poll_interval: float | None,
    no_open: bool,
    variants: list[VariantSpec],
    flags: bool,
) -> None:
    if opts.no_wait and not opts.remote:
        raise ConfigError.at("", "--no-wait", "--no-wait only applies to --remote runs")
    opts, gate = azure_eval_run.prepare(opts, fail_on, interactive=interactive)
    if opts.remote or opts.resume:  # the Foundry modules load only for a --remote run
        from agentopt.cli.remote_render import execute_remote, remote_run_id

        if opts.remote or remote_run_id(opts.resume):
            execute_remote(opts, poll_interval, gate)
            return
    if variants:
        if interactive:
            raise ConfigError.at("", "--interactive", "a matrix run takes its prompts up front")
        from agentopt.cli.matrix_render import execute_matrix

        execute_matrix(opts, variants, gate=gate)
        return
    execute_run(
        opts,
        interactive=interactive,
        gate=gate,
        on_outputs=lambda out: open_reports(out, no_open),
        flags=flags,
    )


def _formats_out(values: list[Path]) -> list[Path]:
    """`-o json|table` is azd's global output format; any other value is a report file (a
    file literally named `json` is written when it exists already or is given as ./json)."""
    reports = []
    for value in values:
        word = str(value).lower()
        if str(value) == value.name and word in ("json", "table") and not value.exists():
            STATE.output_format = word
            STATE.quiet = STATE.quiet or word == "json"  # stdout holds the JSON alone
        else:
            reports.append(value)
    return reports
