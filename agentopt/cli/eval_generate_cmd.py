"""`agentopt eval init`, `eval generate`, `eval update`."""

from __future__ import annotations

import contextlib
import dataclasses
import enum
import functools
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from agentopt.cli.context import STATE
from agentopt.cli.errors import handle_errors
from agentopt.core.errors import ConfigError, InputError


class Level(enum.StrEnum):
    """`--evaluation-level` values (eval.yaml `options.evaluation_level`)."""

    item = "item"
    conversation = "conversation"


if TYPE_CHECKING:
    from rich.console import Console

GenInstruction = Annotated[
    str | None,
    typer.Option("-g", "--gen-instruction", help="One paragraph about what the agent does."),
]
GenInstructionFile = Annotated[
    Path | None, typer.Option("--gen-instruction-file", help="The same, from a file.")
]
EvalModel = Annotated[str | None, typer.Option("--eval-model", help="Judge/generator model.")]
AZD_MIN_SAMPLES = 15
MaxSamples = Annotated[
    int,
    typer.Option(
        "--max-samples",
        min=1,
        max=1000,
        help="Tasks to generate (azd: 15–1000; fewer makes a smoke-test suite, with a note).",
    ),
]
DatasetOpt = Annotated[
    Path | None,
    typer.Option("--dataset", help="Bring your own dataset; only the rubric is generated."),
]
EvaluatorOpt = Annotated[
    list[str] | None,
    typer.Option("--evaluator", help="Extra evaluator (repeatable).", show_default=False),
]
NameOpt = Annotated[str | None, typer.Option("--name", help="Suite name (default: agent name).")]
AgentOpt = Annotated[str | None, typer.Option("--agent", help="azd agent service to use.")]
OutFile = Annotated[
    Path,
    typer.Option(
        "--out-file",
        "--config",
        "-c",
        help="Where to write the eval config (its datasets/ and evaluators/ go beside it).",
    ),
]
ResetDefaults = Annotated[
    bool, typer.Option("--reset-defaults", help="Regenerate even if eval.yaml exists.")
]
Categories = Annotated[
    str | None,
    typer.Option(
        "--categories",
        help="Task mix (default: core,edge,out_of_scope,ambiguous,adversarial,multi_step).",
    ),
]
MultiTurn = Annotated[int, typer.Option("--multi-turn", min=0, help="Multi-turn tasks to add.")]
EvaluationLevel = Annotated[
    Level | None,
    typer.Option(
        "--evaluation-level",
        help="conversation: score each task as a whole conversation (written to eval.yaml), "
        "and make the --multi-turn tasks persona/goal tasks a simulated user plays. Default: "
        "the suite's own (item).",
    ),
]
Seed = Annotated[int, typer.Option("--seed", help="Generation seed.")]
Remote = Annotated[bool, typer.Option("--remote", help="Also upload to the Foundry project.")]
Format = Annotated[
    str,
    typer.Option(
        "--format",
        help="eval-yaml (agentopt's suite) or azure-eval (azd ai eval's evals/azure.eval.yaml, "
        "evals/datasets/, evals/evaluators/).",
    ),
]
FromTraces = Annotated[
    Path | None,
    typer.Option(
        "--from-traces",
        help="Tasks from real users' turns in exported OpenTelemetry traces (OTLP JSON or the "
        "SDK's console output): a file or a folder.",
    ),
]
TraceDays = Annotated[
    int,
    typer.Option("--trace-days", min=0, help="--from-traces: only the last N days (0: all)."),
]
ProjectEndpoint = Annotated[
    str | None, typer.Option("-p", "--project-endpoint", help="Foundry project endpoint.")
]
NoWait = Annotated[
    bool,
    typer.Option(
        "--no-wait",
        help="azd's flag: submit and return. Generation runs here, so the suite is written "
        "before the command returns (a note says so).",
    ),
]


def _suite_command(wizard: bool, doc: str) -> Callable[..., None]:
    """`eval init` and `eval generate` take the same options, declared here once."""

    def command(
        ctx: typer.Context,
        gen_instruction: GenInstruction = None,
        gen_instruction_file: GenInstructionFile = None,
        eval_model: EvalModel = None,
        max_samples: MaxSamples = 15,
        dataset: DatasetOpt = None,
        evaluator: EvaluatorOpt = None,
        name: NameOpt = None,
        agent: AgentOpt = None,
        out_file: OutFile = Path("eval.yaml"),
        reset_defaults: ResetDefaults = False,
        categories: Categories = None,
        multi_turn: MultiTurn = 0,
        evaluation_level: EvaluationLevel = None,
        seed: Seed = 0,
        remote: Remote = False,
        project_endpoint: ProjectEndpoint = None,
        format: Format = "eval-yaml",
        from_traces: FromTraces = None,
        trace_days: TraceDays = 0,
        no_wait: NoWait = False,
    ) -> None:
        flags = {k: v for k, v in locals().items() if k not in ("ctx", "wizard")}
        _generate(ctx, wizard=wizard, agent=agent, project_endpoint=project_endpoint, flags=flags)

    command.__doc__ = doc
    command.__name__ = command.__qualname__ = "init_command" if wizard else "generate_command"
    return handle_errors(command)


init_command = _suite_command(
    True, "Guided first run: detect the agent, write the baseline, generate the suite."
)
generate_command = _suite_command(
    False, "Generate a seed dataset and a rubric evaluator, register them and write eval.yaml."
)


@handle_errors
def update_command(
    ctx: typer.Context,
    config: Annotated[Path, typer.Option("--config", "-c", help="eval.yaml to update.")] = Path(
        "eval.yaml"
    ),
    dataset_only: Annotated[bool, typer.Option("--dataset-only", help="Only the dataset.")] = False,
    evaluator_only: Annotated[
        bool, typer.Option("--evaluator-only", help="Only the evaluators.")
    ] = False,
    remote: Remote = False,
) -> None:
    """Register edited dataset/rubric working copies as new versions and re-pin eval.yaml."""
    from agentopt.core.files.azd_env import load_azd_environment, resolve_project_endpoint
    from agentopt.workflows.generate.summary import shown_path
    from agentopt.workflows.suite_assets import find_project_dir
    from agentopt.workflows.update import update_suite

    if dataset_only and evaluator_only:
        raise ConfigError(
            "--dataset-only and --evaluator-only exclude each other",
            hint="pass one of them, or neither to update both",
        )
    path = config if config.is_absolute() else STATE.cwd / config
    if not path.is_file() and not _given(ctx, "config"):
        path = _agent_eval_yaml() or path
    if not path.is_file():
        raise ConfigError(
            f"no eval config at {shown_path(path, STATE.cwd)}",
            hint="run `agentopt eval generate` first, or pass --config PATH",
        )
    project_dir = find_project_dir(path)
    endpoint = None
    if remote:
        env = load_azd_environment(project_dir, name=STATE.environment)
        endpoint, warnings = resolve_project_endpoint(None, env)
        for problem in warnings:
            STATE.warn(str(problem))
    with _relative_paths(STATE.cwd):
        result = update_suite(
            path,
            datasets=not evaluator_only,
            evaluators=not dataset_only,
            project_dir=project_dir,
            remote=remote,
            project_endpoint=endpoint,
        )
    for change in result.changes:
        remote_note = ""
        if change.remote:
            remote_note = f"  (uploaded as version {change.remote.get('version')})"
        _say(change.line() + remote_note)
        for note in change.notes:
            _say(f"  {note}")
    if remote and any(c.kind == "Evaluator" and c.changed for c in result.changes):
        _say("Note: evaluators stay local (Foundry has no upload API for them).")
    if result.updated:
        _say(f"Done. Updated config saved to {shown_path(path, STATE.cwd)}")
    else:
        _say("No updates were made.")


def _agent_eval_yaml() -> Path | None:
    """eval.yaml in the detected agent folder (an azd project run from its root)."""
    from agentopt.workflows.detect import detect_target

    try:
        found = detect_target(STATE.cwd, no_prompt=True, environment=STATE.environment).eval_yaml
    except InputError:
        return None
    return found if found.is_file() else None


def _azd_notes(ctx: typer.Context, flags: dict[str, Any]) -> None:
    """What differs from azd for its own flags, said before anything runs."""
    samples = flags["max_samples"]
    if _given(ctx, "max_samples") and samples < AZD_MIN_SAMPLES:
        STATE.err.print(
            f"[yellow]note:[/] --max-samples {samples} is under azd's range "
            f"({AZD_MIN_SAMPLES}–1000): agentopt generates {samples} tasks, a smoke-test "
            "suite; `azd ai agent eval generate` refuses fewer than 15"
        )
    if flags.get("no_wait"):
        STATE.err.print(
            "[yellow]note:[/] --no-wait: azd submits generation jobs to Foundry and returns; "
            "agentopt generates here, so the suite is written before this command returns"
        )


def _generate(
    ctx: typer.Context,
    *,
    wizard: bool,
    agent: str | None,
    project_endpoint: str | None,
    flags: dict[str, Any],
) -> None:
    """Shared body of `eval init` (wizard) and `eval generate`."""
    from agentopt.cli.progress import PhaseLines
    from agentopt.cli.target_block import render_target_block
    from agentopt.workflows.detect import detect_target
    from agentopt.workflows.generate.suite import call_settings, run_generate
    from agentopt.workflows.generate.summary import next_steps_lines, shown_path, summary_lines
    from agentopt.workflows.init import (
        GenerateOptions,
        Kept,
        ensure_baseline,
        plan_suite,
        write_instruction_baseline,
    )

    cwd = STATE.cwd
    asker = _RichAsker(STATE.console) if STATE.interactive else None
    detect = functools.partial(
        detect_target,
        cwd,
        agent=agent,
        project_endpoint=project_endpoint,
        no_prompt=asker is None,
        choose=asker.choose if asker is not None else None,
        environment=STATE.environment,
    )
    try:
        target = detect()
    except InputError:
        if not flags["reset_defaults"]:
            raise
        # A broken eval.yaml is about to be replaced (after a backup): detect without it.
        from agentopt.core.files.eval_yaml import EvalConfig

        target = detect(eval_config=EvalConfig())
    for problem in target.warnings:
        STATE.warn(str(problem))
    from agentopt.cli import azure_eval_generate as azure

    azure.check_format(flags["format"])
    if flags["trace_days"] and not flags["from_traces"]:
        raise ConfigError.at("", "--trace-days", "--trace-days needs --from-traces FILE|DIR")
    if flags["format"] == "azure-eval":
        if wizard:
            azure.init_azure(target, flags)
        else:
            azure.generate_azure(target, flags, _given(ctx, "max_samples"))
        return
    if flags["from_traces"]:
        flags["dataset"] = azure.traces_dataset(flags, target, _given(ctx, "max_samples"))
    if wizard:
        STATE.say(render_target_block(target, cwd))
        written = ensure_baseline(target)
        if written is not None:
            STATE.say(f"✓ Wrote the baseline configuration to {shown_path(written, cwd)}/")
        STATE.say("")
    _azd_notes(ctx, flags)  # after the target block, which `eval init` output starts with
    options = GenerateOptions(
        gen_instruction=flags["gen_instruction"],
        gen_instruction_file=_under(cwd, flags["gen_instruction_file"]),
        eval_model=flags["eval_model"],
        max_samples=flags["max_samples"] if _given(ctx, "max_samples") else None,
        dataset=_under(cwd, flags["dataset"]),
        evaluators=list(flags["evaluator"] or []),
        name=flags["name"],
        out_file=_under(cwd, flags["out_file"]) if _given(ctx, "out_file") else None,
        reset_defaults=flags["reset_defaults"],
        categories=flags["categories"],
        multi_turn=flags["multi_turn"],
        evaluation_level=flags["evaluation_level"].value if flags["evaluation_level"] else None,
        seed=flags["seed"],
        remote=flags["remote"],
        cwd=cwd,
        why_no_prompt="--no-prompt" if STATE.no_prompt else "no terminal to ask on",
    )
    plan = plan_suite(options, target, asker=asker, wizard=wizard)
    if isinstance(plan, Kept):
        _say(plan.message)
        return
    baseline = write_instruction_baseline(target, options)
    if baseline is not None:  # as azd's eval generate: the -g text becomes the baseline
        _say(f"Baseline: {shown_path(baseline, cwd)}")
        plan = plan.model_copy(update={"agent_config": baseline})
    _say(_plan_line(plan, cwd))
    settings = call_settings(plan.config_path, target.project_endpoint, STATE.call_timeout)
    with _relative_paths(cwd):
        phases = None if STATE.quiet else PhaseLines(STATE.console)
        result = run_generate(plan, settings, on_notice=STATE.warn, progress=phases)
    for problem in result.warnings:
        STATE.warn(str(problem))
    if result.check is not None and result.check.status in ("failed", "error"):
        STATE.warn(f"rubric self-check: {result.check.summary().lstrip('⚠ ')}")
    STATE.say("")
    for line in [*summary_lines(result, cwd), "", *next_steps_lines()]:
        _say(line)


def _plan_line(plan: Any, cwd: Path) -> str:
    """What is about to happen, in one line."""
    from agentopt.workflows.generate.summary import shown_path

    made = []
    if plan.write_dataset and plan.dataset_file is None:
        made.append(f"{plan.max_samples} tasks")
    if plan.write_evaluator:
        made.append("a rubric")
    text = f"Generating {' and '.join(made)} with {plan.eval_model}" if made else ""
    if plan.write_dataset and plan.dataset_file is not None:
        imported = f"Importing {shown_path(plan.dataset_file, cwd)}"
        text = f"{imported}; {text[0].lower()}{text[1:]}" if text else imported
    return f"{text} …"


def _say(line: str) -> None:
    """One plain line: no rich markup, no re-wrapping (the layout is already fixed)."""
    if not STATE.quiet:
        STATE.console.print(line, soft_wrap=True, markup=False)


@contextlib.contextmanager
def _relative_paths(cwd: Path) -> Iterator[None]:
    """Problems name files as the user would type them (relative to the working folder)."""
    from agentopt.workflows.generate.summary import shown_path

    try:
        yield
    except InputError as err:
        if not err.problems:
            raise
        problems = [
            dataclasses.replace(p, file=shown_path(Path(p.file), cwd))
            if p.file and Path(p.file).is_absolute()
            else p
            for p in err.problems
        ]
        raise type(err)(problems=problems, hint=err.hint) from None


def _given(ctx: typer.Context, name: str) -> bool:
    """True when the user passed the option (not its default)."""
    # Compared by name: typer vendors its own click, whose enum is not click.core's.
    source = ctx.get_parameter_source(name)
    return source is not None and getattr(source, "name", "") not in ("DEFAULT", "DEFAULT_MAP")


def _under(cwd: Path, path: Path | None) -> Path | None:
    if path is None:
        return None
    path = path.expanduser()
    return path if path.is_absolute() else cwd / path


class _RichAsker:
    """Questions on the terminal (rich prompts); used only when STATE.interactive."""

    def __init__(self, console: Console) -> None:
        self.console = console

    def text(self, question: str, default: str | None = None) -> str:
        from rich.prompt import Prompt

        answer = Prompt.ask(question, default=default, console=self.console)
        return answer or ""

    def confirm(self, question: str, default: bool = False) -> bool:
        from rich.prompt import Confirm

        return bool(Confirm.ask(question, default=default, console=self.console))

    def integer(self, question: str, default: int, lo: int, hi: int) -> int:
        from rich.prompt import IntPrompt

        while True:
            value = IntPrompt.ask(question, default=default, console=self.console)
            if lo <= value <= hi:
                return value
            self.console.print(f"[red]Enter a number from {lo} to {hi}.[/]")

    def choose(self, names: list[str]) -> str:
        from rich.prompt import Prompt

        return Prompt.ask("Agent service", choices=names, console=self.console)
