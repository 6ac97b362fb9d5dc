"""`agentopt optimize --remote`: a Foundry optimization job (V2Preview `agent_optimization_jobs`,
as azd submits it), mirrored into `.agentopt/optimize/<job-id>/job.json`.

    submit:  job.json (with an Operation-Id) → POST /agent_optimization_jobs → job id saved
    watch:   GET /agent_optimization_jobs/{id} until succeeded | failed | cancelled
    cancel:  POST /agent_optimization_jobs/{id}:cancel

The Operation-Id is written before the POST (the service treats a repeated one as the same
job), and the job id right after it, so nothing a crash interrupts creates a second job.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentopt.contracts.optimize_job import JobRecord, SplitInfo
from agentopt.core.errors import ConfigError, Interrupted, Problem
from agentopt.core.files.azd_env import service_env_prefix
from agentopt.core.ids import utc_now_iso
from agentopt.evaluators.base import BuildContext, EvaluatorUse
from agentopt.evaluators.build import EvaluatorCache
from agentopt.models.call import CallLayer
from agentopt.models.settings import call_settings
from agentopt.workflows.generate.remote import require_endpoint
from agentopt.workflows.optimize.events import OptimizeSink
from agentopt.workflows.optimize.inputs import Ask, OptimizeInputs, resolve_optimize_inputs
from agentopt.workflows.optimize.journal import JobStore
from agentopt.workflows.optimize.options import OptimizeOptions
from agentopt.workflows.remote.azd_state import project_id, service_for, set_azd_values
from agentopt.workflows.remote.client import FoundryProject, plain
from agentopt.workflows.remote.errors import RemoteError
from agentopt.workflows.remote.eval_request import (
    OPTIMIZER_BUILTINS,
    RemoteCriterion,
    split_evaluators,
)
from agentopt.workflows.remote.eval_submit import portal_prefix, register_rubrics, uploaded_version
from agentopt.workflows.remote.opt_job import (
    TERMINAL,
    accepted,
    apply_remote_status,
    remote_section,
)
from agentopt.workflows.remote.opt_request import optimization_body
from agentopt.workflows.remote.polling import PollSettings, poll_until
from agentopt.workflows.resolve_suite import call_flags

JOBS = "/agent_optimization_jobs"


@dataclass
class RemoteOptimize:
    """A remote optimization job, resolved and validated (nothing sent)."""

    opts: OptimizeOptions
    inputs: OptimizeInputs
    endpoint: str
    agent_name: str
    agent_version: str | None
    criteria: list[RemoteCriterion]
    notices: list[str] = field(default_factory=list)


def prepare_remote_optimize(opts: OptimizeOptions, cwd: Path, ask: Ask | None) -> RemoteOptimize:
    """What azd validates before submitting (`OptimizeConfig.Validate`), exit 2 otherwise."""
    inputs = resolve_optimize_inputs(opts, cwd, ask)
    agent = inputs.agent
    endpoint = require_endpoint(opts.project_endpoint or agent.project_endpoint)
    if not agent.deployed_name:
        key = service_env_prefix(agent.name) + "NAME"
        raise ConfigError(
            problems=[
                Problem(
                    "",
                    key,
                    f"agent '{agent.name}' has no deployed agent name ({key} is not set): "
                    "--remote optimizes the deployed agent",
                )
            ],
            hint="run `azd deploy` first (it writes the name into the azd environment)",
        )
    if not inputs.optimization_model:
        raise ConfigError(
            problems=[
                Problem(
                    "",
                    "--optimize-model",
                    "the Foundry optimizer needs its reasoning model (gpt-5 family): pass "
                    "--optimize-model NAME or set options.optimization_model in eval.yaml",
                )
            ]
        )
    # Nothing configured (every task has criteria, or resolve_optimize_inputs refuses):
    # task adherence, as a local job scores them.
    uses = inputs.evaluators or [EvaluatorUse(name="builtin.task_adherence")]
    options = inputs.eval_config.options if inputs.eval_config else None
    planner = CallLayer(
        inputs.project_dir, call_settings(options, call_flags(inputs.suite, dry_run=True))
    )
    cache = EvaluatorCache(
        BuildContext(judge_model=inputs.judge_model, layer=planner, project_dir=inputs.project_dir)
    )
    criteria, local = split_evaluators(uses, cache, also=OPTIMIZER_BUILTINS)
    if local or not criteria:
        shown = ", ".join(u.name for u in local) or "none"
        raise ConfigError(
            problems=[
                Problem(
                    "",
                    "evaluators",
                    "the Foundry optimizer scores with Foundry evaluators only (builtin judges, "
                    f"rubrics); these run only locally: {shown}",
                )
            ],
            hint="drop them for --remote, or run `agentopt optimize` locally",
        )
    return RemoteOptimize(
        opts=opts,
        inputs=inputs,
        endpoint=endpoint,
        agent_name=agent.deployed_name,
        agent_version=agent.deployed_version,
        criteria=criteria,
        notices=list(inputs.notices),
    )


def _new_job(prep: RemoteOptimize, store: JobStore) -> JobRecord:
    inputs = prep.inputs
    train = [t.name for t in inputs.dataset.tasks]
    validation = [t.name for t in inputs.validation.tasks] if inputs.validation else train
    return JobRecord(
        id=store.job_id,
        started_at=utc_now_iso(),
        config={
            "options": prep.opts.snapshot(),
            "agent": {
                "name": inputs.agent.name,
                "model": inputs.agent.model,
                "target": "foundry",
                "source": inputs.agent.source,
            },
            "eval_model": inputs.judge_model,
            "optimization_model": inputs.optimization_model,
            "evaluators": [c.evaluator for c in prep.criteria],
            "dataset": {
                "name": inputs.dataset.name,
                "version": inputs.dataset.version,
                "source": inputs.dataset.source,
                "sha256": inputs.dataset.sha256,
            },
            "eval_config": str(inputs.config_path) if inputs.config_path else None,
            "remote": {
                "endpoint": prep.endpoint,
                "operation_id": str(uuid.uuid4()),
                "agent": prep.agent_name,
                "agent_version": prep.agent_version,
                "service": service_for(
                    inputs.project_dir, prep.agent_name, inputs.agent.name, prep.opts.environment
                )
                or inputs.agent.name,
                "environment": prep.opts.environment,
                "status": "submitting",
            },
        },
        splits=SplitInfo(
            train=train, validation=validation, validation_is_train=not inputs.validation
        ),
        warnings=[str(w) for w in inputs.warnings],
    )


def submit_optimize(prep: RemoteOptimize, project: FoundryProject) -> tuple[JobStore, JobRecord]:
    """Register rubrics, write job.json, submit; return the store and the job as accepted."""
    store = JobStore(prep.inputs.project_dir)
    store.create()
    job = _new_job(prep, store)
    store.write_job(job)
    register_rubrics(project, prep.criteria, prep.inputs.project_dir)
    return store, _post(store, job, prep, project)


def _references(prep: RemoteOptimize, project: FoundryProject) -> dict[str, tuple[str, str]]:
    """azd sends a registered dataset (eval.yaml `name` + `version`) as a reference to the
    project's copy: a version only agentopt's registry holds is uploaded first (once)."""
    config = prep.inputs.eval_config
    if config is None:
        return {}
    found: dict[str, tuple[str, str]] = {}
    pairs = (("train", config.dataset, prep.inputs.dataset), ("validation",
             config.validation_dataset, prep.inputs.validation))  # fmt: skip
    for split, ref, loaded in pairs:
        if ref is None or not ref.name or loaded is None:
            continue
        if split == "train" and prep.opts.dataset is not None:
            continue  # --dataset FILE replaces eval.yaml's
        version = loaded.version or ref.version
        if version:
            found[split] = (ref.name, uploaded_version(project, prep.inputs.project_dir,
                                                       ref.name, version))  # fmt: skip
    return found


def _post(
    store: JobStore, job: JobRecord, prep: RemoteOptimize, project: FoundryProject
) -> JobRecord:
    inputs = prep.inputs
    body = optimization_body(
        agent=inputs.agent,
        agent_name=prep.agent_name,
        agent_version=prep.agent_version,
        dataset=inputs.dataset,
        validation=inputs.validation,
        config=inputs.eval_config,
        references=_references(prep, project),
        criteria=prep.criteria,
        suite=inputs.suite,
    )
    remote = dict(job.config["remote"])
    created = project.request(
        "submitting the optimization job",
        "POST",
        JOBS,
        body=body,
        preview=True,
        headers={"Operation-Id": remote["operation_id"]},
    )
    remote["job_id"] = str(created["id"])
    remote["status"] = created.get("status")
    prefix = portal_prefix(project_id(inputs.project_dir, prep.opts.environment))
    if prefix:
        remote["portal_url"] = (
            f"{prefix}/build/agents/{prep.agent_name}/optimization/{remote['job_id']}"
        )
    job.config["remote"] = remote
    store.write_job(job)
    set_azd_values(
        inputs.project_dir,
        {
            service_env_prefix(remote["service"]) + "OPTIMIZATION_JOB_ID": remote["job_id"],
            "OPTIMIZE_LAST_OPERATION_ID": remote["job_id"],
        },
        prep.opts.environment,
    )
    return job


def resubmit(store: JobStore, cwd: Path, ask: Ask | None, project: FoundryProject) -> JobRecord:
    """A job stopped while submitting: the same request, with the same Operation-Id (so the
    service answers with the job the first POST may have created)."""
    job = store.read_job()
    remote = remote_section(job) or {}
    opts = OptimizeOptions.from_snapshot(job.config.get("options") or {})
    opts.environment = opts.environment or remote.get("environment")
    prep = prepare_remote_optimize(opts, cwd, ask)
    register_rubrics(project, prep.criteria, prep.inputs.project_dir)
    return _post(store, job, prep, project)


def read_status(project: FoundryProject, job_id: str) -> dict[str, Any]:
    status = project.request(
        "reading the optimization job", "GET", f"{JOBS}/{job_id}", preview=True
    )
    if not isinstance(status, dict):
        raise RemoteError(f"reading the optimization job {job_id} returned no job")
    return status


def _runs(project: FoundryProject, status: dict[str, Any], seen: dict[str, dict[str, Any]]) -> None:
    """The candidates' own evaluation runs (pass rates), each read once; best effort."""
    for cand in (status.get("result") or {}).get("candidates") or []:
        eval_id, run_id = cand.get("eval_id"), cand.get("eval_run_id")
        if not eval_id or not run_id or run_id in seen:
            continue

        def fetch(e: str = str(eval_id), r: str = str(run_id)) -> Any:
            return project.openai.evals.runs.retrieve(r, eval_id=e)

        try:
            run = project.call("reading a candidate's evaluation run", fetch)
        except RemoteError:
            seen[run_id] = {}
            continue
        seen[run_id] = plain(run)


def refresh_job(
    store: JobStore, project: FoundryProject, runs: dict[str, dict[str, Any]] | None = None
) -> JobRecord:
    """One status read, mirrored into job.json."""
    job = store.read_job()
    remote = accepted(job)
    status = read_status(project, remote["job_id"])
    seen = runs if runs is not None else {}
    _runs(project, status, seen)
    job = apply_remote_status(job, status, seen)
    store.write_job(job)
    return job


def watch_job(
    store: JobStore, project: FoundryProject, sink: OptimizeSink, poll: PollSettings
) -> JobRecord:
    """Follow a remote job to its end, reporting each candidate as it completes."""
    job = store.read_job()
    remote = accepted(job)
    shown: set[str] = set()
    runs: dict[str, dict[str, Any]] = {}
    latest: list[JobRecord] = [job]

    def read() -> dict[str, Any]:
        latest[0] = refresh_job(store, project, runs)
        return latest[0].config.get("remote") or {}

    def on_status(remote_now: dict[str, Any]) -> None:
        current = latest[0]
        for record in current.candidates:
            if record.id not in shown:
                shown.add(record.id)
                sink.candidate(current, record)
        progress = remote_now.get("progress") or {}
        done = progress.get("candidates_completed")
        sink.status(
            f"Foundry job {remote['job_id']}: {remote_now.get('status')}"
            + (f", {done} candidate(s) evaluated" if done is not None else "")
        )

    try:
        poll_until(
            read,
            lambda r: str(r.get("status") or "").lower() in TERMINAL,
            poll,
            on_status=on_status,
            what=f"the optimization job {remote['job_id']}",
            resume_hint=f"follow it with `agentopt optimize status {job.id} --watch`",
        )
    except KeyboardInterrupt:
        raise Interrupted(
            f"stopped watching: the optimization job {remote['job_id']} goes on in the project",
            hint=f"follow it with `agentopt optimize status {job.id} --watch`",
        ) from None
    sink.finish(latest[0])
    return latest[0]


def cancel_job(store: JobStore, project: FoundryProject) -> JobRecord:
    """Ask Foundry to cancel the job; job.json records the answer."""
    job = store.read_job()
    remote = accepted(job)
    try:
        answer = project.request(
            "cancelling the optimization job",
            "POST",
            f"{JOBS}/{remote['job_id']}:cancel",
            preview=True,
        )
    except RemoteError as err:
        if err.status == 409:
            raise ConfigError(
                f"job {job.id} ({remote['job_id']}) has already finished: nothing to cancel",
                hint=f"see it with `agentopt optimize status {job.id}`",
            ) from None
        raise
    status = answer if isinstance(answer, dict) else {"status": "cancelled"}
    job = apply_remote_status(job, status, {})
    store.write_job(job)
    return job
