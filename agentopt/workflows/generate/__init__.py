"""`agentopt eval generate` / `eval init` as a library (cli.md `eval generate`).

    request = SuiteRequest(...)               # built by the CLI (or `init.plan_suite`)
    result = run_generate(request, settings)  # or `await generate_suite(request, layer)`

The pieces: `suite` (the whole command), `dataset` and `rubric` (what the generator model is
asked for), `prompts` / `schemas` / `validate` / `dedupe` (how its answers are asked for and
checked), `rubric_check` (the self-check), `remote` (Foundry upload), `config` (eval.yaml),
`summary` (the lines printed at the end).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentopt.core.exports import lazy_exports

if TYPE_CHECKING:
    from agentopt.workflows.generate.suite import (
        AssetInfo,
        SuiteRequest,
        SuiteResult,
        generate_suite,
        run_generate,
    )

_HOMES = {
    "AssetInfo": "agentopt.workflows.generate.suite",
    "SuiteRequest": "agentopt.workflows.generate.suite",
    "SuiteResult": "agentopt.workflows.generate.suite",
    "generate_suite": "agentopt.workflows.generate.suite",
    "run_generate": "agentopt.workflows.generate.suite",
}

__all__ = ["AssetInfo", "SuiteRequest", "SuiteResult", "generate_suite", "run_generate"]

__getattr__ = lazy_exports(__name__, _HOMES)
