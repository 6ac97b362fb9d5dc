"""`eval init|generate --format azure-eval` and `eval generate --from-traces`: the CLI side
of `workflows.azure_eval.scaffold` and `workflows.generate.from_traces`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agentopt.cli.context import STATE
from agentopt.core.errors import ConfigError
from agentopt.workflows.detect import DetectedTarget, find_azure_yaml
from agentopt.workflows.generate.from_traces import TraceMining, mine_traces, write_jsonl

FORMATS = ("eval-yaml", "azure-eval")
DEFAULT_JUDGE = "gpt-4.1-mini"


def _say(line: str) -> None:
    if not STATE.quiet:
        STATE.console.print(line, soft_wrap=True, markup=False)


def _shown(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(STATE.cwd.resolve()))
    except ValueError:
        return str(path)


def check_format(value: str) -> None:
    if value not in FORMATS:
        raise ConfigError.at("", "--format", f"expected eval-yaml or azure-eval, found {value}")


def mine(flags: dict[str, Any], target: DetectedTarget, given_max: bool) -> TraceMining:
    """`--from-traces`: the user turns of the agent as task rows (printed as a summary)."""
    path = Path(flags["from_traces"]).expanduser()
    path = path if path.is_absolute() else STATE.cwd / path
    days = flags.get("trace_days") or 0
    mined = mine_traces(
        path,
        days=days,
        max_samples=flags["max_samples"] if given_max else None,
        agent=target.agent_name,
    )
    _say(f"From traces ({_shown(path)}): {mined.summary()}")
    return mined


def traces_dataset(flags: dict[str, Any], target: DetectedTarget, given_max: bool) -> Path:
    """eval.yaml flow: the mined rows as the dataset `eval generate --dataset` imports."""
    mined = mine(flags, target, given_max)
    name = f"{target.agent_name or 'agent'}-traces"
    path = target.project_dir / "datasets" / name / f"{name}.jsonl"
    write_jsonl(path, mined.tasks)
    return path


def _root(target: DetectedTarget) -> tuple[Path, Path | None]:
    azure = target.azure_yaml or find_azure_yaml(STATE.cwd.resolve())
    return (azure.parent if azure else STATE.cwd), azure


def _target_name(target: DetectedTarget, flags: dict[str, Any]) -> str:
    name = flags.get("agent") or target.service or target.agent_name
    if not name:
        raise ConfigError(
            "this project declares no agent service to evaluate",
            hint="add one to azure.yaml, or name it with --agent",
        )
    return str(name)


def init_azure(target: DetectedTarget, flags: dict[str, Any]) -> None:
    """`eval init --format azure-eval`: the layout, offline."""
    from agentopt.workflows.azure_eval.scaffold import check_loads, init_layout

    root, azure = _root(target)
    deployment = target.foundry.model_deployment.value if target.foundry else None
    judge = flags.get("eval_model") or deployment or DEFAULT_JUDGE
    dataset = flags.get("dataset")
    written = init_layout(
        root,
        azure,
        target=_target_name(target, flags),
        judge_model=judge,
        name=flags.get("name"),
        dataset=Path(dataset) if dataset else None,
        evaluators=list(flags.get("evaluator") or []),
        force=bool(flags.get("reset_defaults")),
    )
    check_loads(written.config)
    _report(written)
    _say("")
    _say("Next steps:")
    _say('   agentopt eval generate --format azure-eval -g "…"   fill the dataset and a rubric')
    _say("   agentopt eval run --eval NAME                        run an eval of the file")


def generate_azure(target: DetectedTarget, flags: dict[str, Any], given_max: bool) -> None:
    """`eval generate --format azure-eval`: a dataset (generated, or mined from traces) and a
    rubric, written where the extension writes them and declared in the catalog."""
    from agentopt.core.aio import run_loop
    from agentopt.workflows.azure_eval.scaffold import (
        add_to_catalog,
        check_loads,
        eval_file,
        register_rows,
        write_rubric,
    )

    root, _azure = _root(target)
    config = eval_file(root)
    name = _target_name(target, flags)
    instruction = _instruction(flags)
    if instruction is None and not flags.get("from_traces"):
        raise ConfigError.at(
            "",
            "-g/--gen-instruction",
            "describe the agent in one paragraph "
            "(or pass --from-traces FILE|DIR to take real users' turns)",
        )
    dataset_path = config.parent / "datasets" / f"{name}-dataset.jsonl"
    rubric_path = config.parent / "evaluators" / f"{name}-evaluator.json"
    model = flags.get("eval_model") or DEFAULT_JUDGE
    rows: list[dict[str, Any]]
    source: dict[str, Any]
    if flags.get("from_traces"):
        rows, source = mine(flags, target, given_max).tasks, {"kind": "traces"}
    else:
        rows, source = [], {"kind": "generated", "model": model}
    dims = []

    async def generate() -> None:
        nonlocal rows, dims
        from agentopt.models.call import CallLayer
        from agentopt.workflows.generate.dataset import DatasetSpec, generate_dataset
        from agentopt.workflows.generate.prompts import AgentContext
        from agentopt.workflows.generate.rubric import generate_rubric
        from agentopt.workflows.generate.suite import call_settings

        assert instruction is not None
        definition = target.definition
        agent = AgentContext(
            instruction=instruction,
            agent_instructions=definition.instructions if definition else None,
        )
        settings = call_settings(None, target.project_endpoint)
        async with CallLayer(root, settings, on_notice=STATE.warn) as layer:
            if not rows:
                spec = DatasetSpec(count=flags["max_samples"], seed=flags.get("seed") or 0)
                generated = await generate_dataset(layer, model, agent, spec)
                rows = [json.loads(line) for line in generated.jsonl().splitlines() if line]
            dims = await generate_rubric(layer, model, agent, seed=flags.get("seed") or 0)

    if instruction is not None:
        _say(f"Generating {'a rubric' if rows else 'tasks and a rubric'} with {model} …")
        run_loop(generate())
    write_jsonl(dataset_path, rows)
    version = register_rows(root, f"{name}-dataset", dataset_path, source)
    rubric = None
    if dims:
        write_rubric(rubric_path, dims)
        rubric = (f"{name}-evaluator", rubric_path)
    written = add_to_catalog(config, dataset=(f"{name}-dataset", dataset_path), evaluator=rubric)
    check_loads(config)
    _say(f"Dataset:    {name}-dataset ({version})  {_shown(dataset_path)}  {len(rows)} tasks")
    if rubric is not None:
        _say(f"Evaluator:  {name}-evaluator  {_shown(rubric_path)}  {len(dims)} dimensions")
    _report(written)
    _say(
        "Declared in the catalog, not attached to an eval: point an eval's dataset: (and its "
        "evaluators:) at them."
    )


def _instruction(flags: dict[str, Any]) -> str | None:
    text = flags.get("gen_instruction")
    if text:
        return str(text)
    file = flags.get("gen_instruction_file")
    if file:
        path = Path(file)
        path = path if path.is_absolute() else STATE.cwd / path
        from agentopt.core.files.yaml_source import read_text

        return read_text(path, shown=str(file), kind="text")
    return None


def _report(written: Any) -> None:
    for path in written.created:
        _say(f"Wrote {_shown(path)}")
    for path in written.edited:
        _say(f"Updated {_shown(path)} (comments kept)")
    for path in written.backups:
        _say(f"  backup: {_shown(path)}")
    for note in written.notes:
        _say(f"note: {note}")
