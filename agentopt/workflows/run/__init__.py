"""`agentopt eval run` as a library (cli.md `eval run`).

    prepared = prepare_run(RunOptions(...), cwd, ask=None)   # exit-2 errors, nothing written
    outcome = run_prepared(prepared, NullSink())             # the run: journal, results.json
    outcome.results, outcome.gate.exit_code

The pieces: `inputs` (flags + eval.yaml → what to run), `plan` (the estimate printed first),
`engine` (every (task, repeat) against the agent and the evaluators), `store` / `records` /
`results` (the run's files), `gates` (the exit code).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentopt.core.exports import lazy_exports

if TYPE_CHECKING:
    from agentopt.workflows.run.eval_run import PreparedRun, RunOutcome, prepare_run, run_prepared
    from agentopt.workflows.run.inputs import ResolvedInputs, RunOptions
    from agentopt.workflows.run.plan import RunPlan

_HOMES = {
    "PreparedRun": "agentopt.workflows.run.eval_run",
    "RunOutcome": "agentopt.workflows.run.eval_run",
    "prepare_run": "agentopt.workflows.run.eval_run",
    "run_prepared": "agentopt.workflows.run.eval_run",
    "ResolvedInputs": "agentopt.workflows.run.inputs",
    "RunOptions": "agentopt.workflows.run.inputs",
    "RunPlan": "agentopt.workflows.run.plan",
}

__all__ = [
    "PreparedRun",
    "ResolvedInputs",
    "RunOptions",
    "RunOutcome",
    "RunPlan",
    "prepare_run",
    "run_prepared",
]

__getattr__ = lazy_exports(__name__, _HOMES)
