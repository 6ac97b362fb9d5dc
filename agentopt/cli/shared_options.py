"""The options several commands share, declared once: the same flag means the same thing in
each (`eval run` and `optimize`: `workflows.resolve_suite` merges each over its eval.yaml key
the same way; the Foundry ones follow a `--remote` run or job the same way in `eval run`,
`optimize` and the commands that read them back). Options whose meaning differs stay with
their command (`--seed` seeds the bootstrap in `eval run` and the split in `optimize`;
`-c/--config` defaults differently)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields
from typing import Annotated, Any, TypeVar

import typer

from agentopt.cli.context import STATE

_Options = TypeVar("_Options")

ExecutorOpt = Annotated[
    str | None,
    typer.Option("--executor", help="local (default) | ray: play the tasks on a Ray cluster."),
]
RayAddressOpt = Annotated[
    str | None,
    typer.Option(
        "--ray-address", help="Ray cluster (default: RAY_ADDRESS, else a local instance)."
    ),
]
AgentOpt = Annotated[str | None, typer.Option("--agent", "-a", help="azd agent service.")]
EvalModelOpt = Annotated[str | None, typer.Option("--eval-model", "-m", help="Judge model.")]
EvaluatorOpt = Annotated[
    list[str] | None,
    typer.Option("--evaluator", help="Evaluator name (repeatable).", show_default=False),
]
ConcurrencyOpt = Annotated[
    int | None,
    typer.Option("--concurrency", min=1, help="Agent runs at once: the agent pool (default 8)."),
]
MaxCostOpt = Annotated[
    float | None, typer.Option("--max-cost", help="Stop new calls past this USD spend.")
]
DryRunOpt = Annotated[
    bool, typer.Option("--dry-run", help="Print the plan and estimate; send nothing.")
]
ResumeOpt = Annotated[
    str | None, typer.Option("--resume", help="Continue an interrupted run or job by its id.")
]
StrictOpt = Annotated[
    bool, typer.Option("--strict", help="Validate M365 documents against the official schema.")
]

# Foundry (`--remote`): where the run or job happens, and how it is followed.
RemoteOpt = Annotated[
    bool,
    typer.Option("--remote", help="Run in the Foundry project against the deployed agent."),
]
NoWaitOpt = Annotated[
    bool, typer.Option("--no-wait", help="--remote: return once it is submitted.")
]
WatchOpt = Annotated[
    bool, typer.Option("--watch", help="Follow a Foundry run or job (--remote) until it ends.")
]
PollIntervalOpt = Annotated[
    float | None,
    typer.Option("--poll-interval", min=0.0, help="Seconds between Foundry status reads."),
]
AzureEvalOpt = Annotated[
    str | None,
    typer.Option("--eval", help="The eval of evals/azure.eval.yaml to use (name or id)."),
]
FailOnOpt = Annotated[
    str | None,
    typer.Option(
        "--fail-on", help="azd's gate: any-failure | pass-rate=R (0–1); exit 1 when breached."
    ),
]


def options_from(cls: type[_Options], flags: Mapping[str, object], **given: Any) -> _Options:
    """`cls`, a workflow's options (one dataclass field a flag), from a command's `flags` (its
    parameters) and the global options it was given (`-e`, `--call-timeout`, held by `STATE`):
    each goes to the field of its name; `given` sets the fields of renamed or converted flags,
    and those the command computes. Flags with no field of their name (display and gate flags)
    stay with the command."""
    names = {f.name for f in fields(cls)}  # type: ignore[arg-type]
    known = {"environment": STATE.environment, "call_timeout": STATE.call_timeout, **flags}
    same = {name: value for name, value in known.items() if name in names and name not in given}
    return cls(**same, **given)
