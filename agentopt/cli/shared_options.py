"""The options `eval run` and `optimize` share, declared once: the same flag means the same
thing in both (`workflows.resolve_suite` merges each over its eval.yaml key the same way).
Options whose meaning differs stay with their command (`--seed` seeds the bootstrap in
`eval run` and the split in `optimize`; `-c/--config` defaults differently)."""

from __future__ import annotations

from typing import Annotated

import typer

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
