"""`--executor` and `--ray-address`, declared once for `eval run` and `optimize` (both hand
them to `ExecutorSettings.of`, which owns their meaning)."""

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
