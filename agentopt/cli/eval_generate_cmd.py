"""`agentopt eval init`, `eval generate`, `eval update`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from agentopt.cli.errors import handle_errors, not_implemented

GenInstruction = Annotated[
    str | None,
    typer.Option("-g", "--gen-instruction", help="One paragraph about what the agent does."),
]
GenInstructionFile = Annotated[
    Path | None, typer.Option("--gen-instruction-file", help="The same, from a file.")
]
EvalModel = Annotated[str | None, typer.Option("--eval-model", help="Judge/generator model.")]
MaxSamples = Annotated[
    int, typer.Option("--max-samples", min=1, max=1000, help="Tasks to generate.")
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
OutFile = Annotated[Path, typer.Option("--out-file", help="Where to write the eval config.")]
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
Seed = Annotated[int, typer.Option("--seed", help="Generation seed.")]
Remote = Annotated[bool, typer.Option("--remote", help="Also upload to the Foundry project.")]
ProjectEndpoint = Annotated[
    str | None, typer.Option("--project-endpoint", help="Foundry project endpoint.")
]


@handle_errors
def init_command(
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
    seed: Seed = 0,
    remote: Remote = False,
    project_endpoint: ProjectEndpoint = None,
) -> None:
    """Guided first run: detect the agent, write the baseline, generate the suite."""
    not_implemented("eval init")


@handle_errors
def generate_command(
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
    seed: Seed = 0,
    remote: Remote = False,
    project_endpoint: ProjectEndpoint = None,
) -> None:
    """Generate a seed dataset and a rubric evaluator, register them and write eval.yaml."""
    not_implemented("eval generate")


@handle_errors
def update_command(
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
    not_implemented("eval update")
