"""A Foundry optimization job as a local job.json (`JobRecord`), so `optimize status | list |
show`, the live table and the final report read a remote job exactly as they read a local one.

The remote job (V2Preview `AgentOptimizationJob`) maps as:
- status `queued`/`pending`/`in_progress`/`running` → running; `succeeded`/`completed` →
  completed; `failed` → failed; `cancelled` → cancelled (azd accepts both status sets);
- each `result.candidates[]` → a `CandidateRecord`: the baseline as `baseline`, the others under
  their `candidate_id` (what `optimize apply --candidate` takes, as in azd); `avg_score` →
  validation score, `avg_tokens` → tokens, mutation keys → strategy; the pass rate and task
  count come from the candidate's own evaluation run when Foundry exposes it;
- `result.best` → `best`, starred when it is not the baseline; outcome improved / no_improvement.

`config.remote` keeps `{endpoint, job_id, operation_id, status, agent, agent_version,
portal_url, candidates: {local id: remote candidate_id}}`.
"""

from __future__ import annotations

from typing import Any

from agentopt.contracts.optimize_job import (
    BASELINE_ID,
    CandidateRecord,
    JobRecord,
    JobStatus,
    ScoreSummary,
)
from agentopt.core.errors import ConfigError
from agentopt.core.ids import utc_now_iso

RUNNING = {"queued", "pending", "in_progress", "running", "notstarted", "not_started"}
SUCCEEDED = {"succeeded", "completed"}
TERMINAL = SUCCEEDED | {"failed", "cancelled", "canceled"}
STRATEGY = {"system_prompt": "instructions", "instructions": "instructions", "skills": "skills"}


def local_status(remote: str | None) -> JobStatus:
    value = (remote or "").lower()
    if value in SUCCEEDED:
        return "completed"
    if value == "failed":
        return "failed"
    if value in ("cancelled", "canceled"):
        return "cancelled"
    return "running"


def remote_section(job: JobRecord) -> dict[str, Any] | None:
    """The `config.remote` section of a remote job, accepted by Foundry or not (None: local)."""
    remote = job.config.get("remote")
    return remote if isinstance(remote, dict) else None


def remote_info(job: JobRecord) -> dict[str, Any] | None:
    """The `config.remote` section of a job Foundry accepted (it has the service's job id)."""
    remote = remote_section(job)
    return remote if remote is not None and remote.get("job_id") else None


def accepted(job: JobRecord) -> dict[str, Any]:
    """`remote_info`, or a ConfigError saying what the job is instead."""
    remote = remote_info(job)
    if remote is not None:
        return remote
    if remote_section(job) is not None:
        raise ConfigError(
            f"job {job.id} was never accepted by Foundry (stopped while submitting)",
            hint="submit it again, with the same Operation-Id: "
            f"`agentopt optimize --resume {job.id}`",
        )
    raise ConfigError(f"job {job.id} is a local job: it has no Foundry counterpart")


def remote_candidate_id(job: JobRecord, local_id: str) -> str:
    """The service's candidate id behind a local one (`baseline` → its remote id)."""
    remote = remote_info(job) or {}
    mapping = remote.get("candidates") or {}
    return str(mapping.get(local_id, local_id))


def _strategy(mutations: Any) -> str:
    if not isinstance(mutations, dict) or not mutations:
        return "-"
    parts = []
    for key in sorted(mutations):
        if key == "model" and isinstance(mutations[key], str):
            parts.append(f"model:{mutations[key]}")
        elif key == "tools":
            parts.append("tools")
        else:
            parts.append(STRATEGY.get(key, key))
    return ",".join(parts)


def _match(result: dict[str, Any], ref: Any) -> dict[str, Any] | None:
    """azd `findCandidate`: by candidate_id, else by name."""
    if not ref:
        return None
    for cand in result.get("candidates") or []:
        if ref in (cand.get("candidate_id"), cand.get("name")):
            return cand
    return None


def apply_remote_status(
    job: JobRecord, status: dict[str, Any], runs: dict[str, dict[str, Any]] | None = None
) -> JobRecord:
    """Update `job` from a remote status (`runs`: eval run id → that run, for pass rates)."""
    remote = dict(remote_info(job) or {})
    remote["status"] = status.get("status")
    if status.get("progress"):
        remote["progress"] = status["progress"]
    job.status = local_status(status.get("status"))
    result = status.get("result") or {}
    if result.get("candidates"):  # a cancel answer or an early status may carry none
        baseline = _match(result, result.get("baseline"))
        best = _match(result, result.get("best"))
        mapping: dict[str, str] = {}
        records: list[CandidateRecord] = []
        for number, cand in enumerate(result["candidates"]):
            remote_id = str(cand.get("candidate_id") or cand.get("name") or f"candidate_{number}")
            local_id = BASELINE_ID if cand is baseline else remote_id
            mapping[local_id] = remote_id
            records.append(
                _record(cand, local_id, number, baseline, best, runs or {}, job.started_at)
            )
        remote["candidates"] = mapping
        job.candidates = records
        if best is not None:
            job.best = BASELINE_ID if best is baseline else str(best.get("candidate_id"))
    if job.status == "completed":
        job.termination_reason = "completed"
        job.outcome = "improved" if job.best not in (None, BASELINE_ID) else "no_improvement"
        job.finished_at = job.finished_at or utc_now_iso()
    elif job.status in ("failed", "cancelled"):
        job.termination_reason = "interrupted" if job.status == "cancelled" else None
        job.finished_at = job.finished_at or utc_now_iso()
    error = status.get("error")
    if error:
        message = error.get("message") if isinstance(error, dict) else str(error)
        note = f"Foundry: {message}"
        if note not in job.warnings:
            job.warnings.append(note)
    for warning in status.get("warnings") or []:
        if f"Foundry: {warning}" not in job.warnings:
            job.warnings.append(f"Foundry: {warning}")
    job.config["remote"] = remote
    return job


def _record(
    cand: dict[str, Any],
    local_id: str,
    number: int,
    baseline: dict[str, Any] | None,
    best: dict[str, Any] | None,
    runs: dict[str, dict[str, Any]],
    started_at: str,
) -> CandidateRecord:
    score = cand.get("avg_score")
    run = runs.get(str(cand.get("eval_run_id"))) or {}
    counts = run.get("result_counts") or {}
    total = int(counts.get("total") or 0)
    summary = ScoreSummary(
        score=float(score) if isinstance(score, (int, float)) else None,
        pass_rate=(int(counts.get("passed") or 0) / total) if total else 0.0,
        n=total,
        errors=int(counts.get("errored") or 0),
        error_rate=(int(counts.get("errored") or 0) / total) if total else 0.0,
    )
    tokens = cand.get("avg_tokens")
    raw = cand.get("mutations")
    mutations: dict[str, Any] = raw if isinstance(raw, dict) else {}
    is_baseline = cand is baseline
    return CandidateRecord(
        id=local_id,
        number=number,
        parent=None if is_baseline else BASELINE_ID,
        strategy="-" if is_baseline else _strategy(mutations),
        rationale=str(cand.get("rationale") or ""),
        mutation=dict(mutations or {}),
        model=str(mutations["model"]) if isinstance(mutations.get("model"), str) else None,
        status="baseline" if is_baseline else "evaluated",
        validation=summary,
        tokens=float(tokens) if isinstance(tokens, (int, float)) else None,
        star=cand is best and not is_baseline,
        config_dir=f"candidates/{local_id}",
        created_at=started_at,
    )
