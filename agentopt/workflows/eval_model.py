"""Which model judges (and generates): the one resolution every command uses.

`eval run`, `optimize`, `eval init` / `generate` and their `--dry-run`s all ask
`resolve_eval_model`, so the same project and environment plan the same judge everywhere.
First that applies: the `--eval-model` flag → eval.yaml `options.eval_model` → the azd
environment's `AZURE_AI_MODEL_DEPLOYMENT_NAME` (azd's default eval model) → an M365 Toolkit
environment's `AZURE_AI_MODEL_NAME` (`eval run --env NAME`) → `gpt-4.1-mini`
(which resolves to the configured provider, else the embedded model).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agentopt.core.files.eval_yaml import EvalConfig
    from agentopt.workflows.detect import DetectedTarget

DEFAULT_MODEL = "gpt-4.1-mini"
"""Bare default for agent and judge: resolves to the configured provider, else the embedded
model (with a notice)."""


@dataclass(frozen=True)
class EvalModel:
    """The judge model's name and where it came from (for plans and notices)."""

    name: str
    source: str
    """--eval-model | eval.yaml options.eval_model | AZURE_AI_MODEL_DEPLOYMENT_NAME | default"""


def resolve_eval_model(
    flag: str | None,
    config: EvalConfig | None,
    detected: DetectedTarget | None,
    *,
    toolkit: str | None = None,
    default: str = DEFAULT_MODEL,
) -> EvalModel:
    """The judge/eval model for this project and environment (see the module docstring).

    Args:
        flag: `--eval-model` / `-m`, when given.
        config: the eval.yaml in use, if any.
        detected: what `detect_target` found (its azd environment holds the deployment name).
        toolkit: the judge an M365 Toolkit environment names (`--env NAME`'s
            `AZURE_AI_MODEL_NAME`), after the azd deployment.
        default: the last resort (`eval init` offers the agent's own model here).
    """
    if flag:
        return EvalModel(flag, "--eval-model")
    if config is not None and config.options.eval_model:
        return EvalModel(config.options.eval_model, "eval.yaml options.eval_model")
    foundry = detected.foundry if detected is not None else None
    deployment = foundry.model_deployment.value if foundry is not None else None
    if deployment:
        return EvalModel(deployment, "AZURE_AI_MODEL_DEPLOYMENT_NAME")
    if toolkit:
        return EvalModel(toolkit, "--env AZURE_AI_MODEL_NAME")
    return EvalModel(default, "default")
