"""`--remote`: running in a Foundry project, as azd does (docs/foundry-remote.md).

    setup = prepare_remote(RunOptions(remote=True), project_dir, ask=None)    # exit-2 errors
    outcome = run_remote(setup, NullSink())      # the same run folder and gates as a local run

    prep = prepare_remote_optimize(OptimizeOptions(...), project_dir, ask=None)
    with FoundryProject(prep.endpoint) as project:
        store, job = submit_optimize(prep, project)          # job.json, as a local job's
        job = watch_job(store, project, NullOptimizeSink(), PollSettings())

The pieces: `client` (one project client: the azure-ai-projects SDK, raw HTTP on its pipeline
for what it lacks, the one retry policy), `errors`, `polling`, `eval_*` (cloud evaluation),
`opt_*` (optimization jobs, apply, deploy), `azd_state` (the azd files apply writes).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentopt.core.exports import lazy_exports

if TYPE_CHECKING:
    from agentopt.workflows.remote.client import FoundryProject, RetrySettings
    from agentopt.workflows.remote.errors import RemoteAuthError, RemoteError, RemoteRunFailed
    from agentopt.workflows.remote.eval_run import run_remote
    from agentopt.workflows.remote.eval_setup import RemoteSetup, prepare_remote
    from agentopt.workflows.remote.opt_apply import apply_remote, deploy_remote
    from agentopt.workflows.remote.opt_run import (
        cancel_job,
        prepare_remote_optimize,
        refresh_job,
        submit_optimize,
        watch_job,
    )
    from agentopt.workflows.remote.polling import PollSettings

_HOMES = {
    "FoundryProject": "agentopt.workflows.remote.client",
    "RetrySettings": "agentopt.workflows.remote.client",
    "RemoteAuthError": "agentopt.workflows.remote.errors",
    "RemoteError": "agentopt.workflows.remote.errors",
    "RemoteRunFailed": "agentopt.workflows.remote.errors",
    "run_remote": "agentopt.workflows.remote.eval_run",
    "RemoteSetup": "agentopt.workflows.remote.eval_setup",
    "prepare_remote": "agentopt.workflows.remote.eval_setup",
    "apply_remote": "agentopt.workflows.remote.opt_apply",
    "deploy_remote": "agentopt.workflows.remote.opt_apply",
    "cancel_job": "agentopt.workflows.remote.opt_run",
    "prepare_remote_optimize": "agentopt.workflows.remote.opt_run",
    "refresh_job": "agentopt.workflows.remote.opt_run",
    "submit_optimize": "agentopt.workflows.remote.opt_run",
    "watch_job": "agentopt.workflows.remote.opt_run",
    "PollSettings": "agentopt.workflows.remote.polling",
}

__all__ = [
    "FoundryProject",
    "PollSettings",
    "RemoteAuthError",
    "RemoteError",
    "RemoteRunFailed",
    "RemoteSetup",
    "RetrySettings",
    "apply_remote",
    "cancel_job",
    "deploy_remote",
    "prepare_remote",
    "prepare_remote_optimize",
    "refresh_job",
    "run_remote",
    "submit_optimize",
    "watch_job",
]

__getattr__ = lazy_exports(__name__, _HOMES)
