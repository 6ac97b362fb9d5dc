"""The options `eval run` and `optimize` share, declared once: the same flag means the same
thing in both (`workflows.resolve_suite` merges each over its eval.yaml key the same way).
Options whose meaning differs stay with their command (`--seed` seeds the bootstrap in
`eval run` and the split in `optimize`; `-c/--config` defaults differently)."""

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
PollIntervalOpt = Annotated[
    float | None,
    typer.Option("--poll-interval", min=0.0, help="--remote: seconds between status reads."),
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
