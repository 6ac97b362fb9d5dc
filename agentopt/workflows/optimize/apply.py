"""`optimize status | list | show | apply`: reading jobs back and applying a candidate.

A candidate's folder under the job already has the `.agent_configs` layout, so applying it is
a copy: to `.agent_configs/<id>/`, and with `--promote` over `.agent_configs/baseline/` after
the old baseline is moved to `.agent_configs/baseline.<timestamp>/`. Nothing is overwritten
without a backup, and every copy is staged beside its target and renamed into place.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from agentopt.contracts.optimize_job import BASELINE_ID, CandidateRecord, JobRecord
from agentopt.core.errors import ConfigError
from agentopt.core.ids import timestamp
from agentopt.core.paths import AGENT_CONFIGS_DIR
from agentopt.reports.optimize_diff import folder_diff, folder_texts, unified_diff
from agentopt.workflows.optimize.journal import JobStore, list_job_ids, resolve_job

INSTRUCTIONS = "instructions.md"


@dataclass
class CandidateView:
    """One candidate of one job, for `optimize show`."""

    job: JobRecord
    record: CandidateRecord
    folder: Path
    files: dict[str, str]
    """Relative path → text of its configuration files."""
    diff: list[str]
    """Whole-folder diff against the baseline."""


@dataclass
class ApplyResult:
    """What `optimize apply` wrote."""

    candidate: str
    written: Path
    backup: Path | None = None
    """An earlier `.agent_configs/<id>/` kept aside."""
    promoted: bool = False
    baseline_backup: Path | None = None
    instruction_diff: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def find_project(cwd: Path) -> Path:
    """Where jobs live: `cwd` when it has optimize jobs, else the detected agent project."""
    if list_job_ids(cwd):
        return cwd
    try:
        from agentopt.workflows.detect import detect_target

        return detect_target(cwd, no_prompt=True).project_dir
    except ConfigError:
        return cwd


def job_records(project: Path) -> list[JobRecord]:
    """Every readable job, oldest first."""
    out = []
    for job_id in list_job_ids(project):
        store = JobStore(project, job_id)
        if store.job_json.is_file():
            try:
                out.append(store.read_job())
            except ConfigError:
                continue
    return out


def job_status(project: Path, job_id: str | None) -> tuple[JobStore, JobRecord]:
    store = resolve_job(project, job_id)
    return store, store.read_job()


def _candidate(store: JobStore, job: JobRecord, cand: str) -> tuple[CandidateRecord, Path]:
    record = job.candidate(cand)
    folder = store.candidate_dir(cand)
    if record is None or not folder.is_dir():
        known = ", ".join(c.id for c in job.candidates) or "none"
        raise ConfigError.at(
            "", "--candidate", f"no candidate '{cand}' in job {job.id} (candidates: {known})"
        )
    return record, folder


def show_candidate(project: Path, cand: str, job_id: str | None) -> CandidateView:
    store, job = job_status(project, job_id)
    record, folder = _candidate(store, job, cand)
    diff = folder_diff(store.candidate_dir(BASELINE_ID), folder, BASELINE_ID, cand)
    return CandidateView(job, record, folder, folder_texts(folder), diff)


def _copy_into_place(source: Path, target: Path) -> Path | None:
    """Copy a folder to `target` (staged, then renamed); an existing target is kept aside as
    `<target>.<timestamp>`, whose path is returned."""
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        staged = staging / target.name
        shutil.copytree(source, staged)
        backup = None
        if target.exists():
            backup = target.with_name(f"{target.name}.{timestamp()}")
            n = 1
            while backup.exists():
                backup = target.with_name(f"{target.name}.{timestamp()}.{n}")
                n += 1
            target.rename(backup)
        staged.rename(target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return backup


def apply_candidate(
    project: Path, cand: str, job_id: str | None, *, promote: bool = False
) -> ApplyResult:
    """Write the candidate to `.agent_configs/<id>/` (and with `promote`, make it the baseline)."""
    store, job = job_status(project, job_id)
    record, folder = _candidate(store, job, cand)
    configs = Path(project) / AGENT_CONFIGS_DIR
    before = folder_texts(store.candidate_dir(BASELINE_ID)).get(INSTRUCTIONS, "")
    after = folder_texts(folder).get(INSTRUCTIONS, "")
    result = ApplyResult(candidate=cand, written=configs / cand)
    result.instruction_diff = unified_diff(
        before, after, f"{BASELINE_ID}/{INSTRUCTIONS}", f"{cand}/{INSTRUCTIONS}"
    )
    if cand != BASELINE_ID:
        result.backup = _copy_into_place(folder, configs / cand)
    if promote:
        result.baseline_backup = _copy_into_place(folder, configs / BASELINE_ID)
        result.promoted = True
        source = str((job.config.get("agent") or {}).get("source") or "")
        if source and AGENT_CONFIGS_DIR not in source:
            result.notes.append(
                f"the agent is defined by {source}: point it at "
                f"{AGENT_CONFIGS_DIR}/{BASELINE_ID}/ (eval.yaml `agent.config`) to run the "
                "promoted configuration"
            )
    if not record.star and record.id != BASELINE_ID:
        result.notes.append(
            f"{cand} did not beat the baseline beyond the noise in job {job.id}; "
            "check `agentopt optimize status` before relying on it"
        )
    return result
