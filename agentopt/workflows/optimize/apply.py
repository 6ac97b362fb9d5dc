"""`optimize status | list | show | apply`: reading jobs back and applying a candidate.

Applying changes exactly what it shows. `plan_apply` compares the candidate's folder with the
job's copy of the baseline: the files the candidate changed (instructions, tools.json, skills,
metadata.yaml for the model, tool mocks) are its changes, and only those are applied, on top
of the live `.agent_configs/baseline/` — to `.agent_configs/<id>/`, and with `--promote` over
`.agent_configs/baseline/` itself after the old one is moved to
`.agent_configs/baseline.<timestamp>/`. Every other file (one added to the baseline since the
job, `tools.py`, data files) stays as it is. The plan's diff is against the live files, so what
is printed is what is written; a tool the candidate drops is named, and promoting a candidate
that was screened out, not fully evaluated or not better than the baseline beyond the noise —
or one that drops a tool, or overwrites an edit made since the job — is confirmed first
(`--force` under `--no-prompt`). Every copy is staged beside its target and renamed into place.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from agentopt.contracts.optimize_job import BASELINE_ID, CandidateRecord, JobRecord
from agentopt.core.atomic import free_aside_name
from agentopt.core.errors import ConfigError
from agentopt.core.paths import AGENT_CONFIGS_DIR
from agentopt.reports.optimize_diff import folder_diff, folder_texts, unified_diff
from agentopt.workflows.optimize.journal import JobStore, list_job_ids, resolve_job

INSTRUCTIONS = "instructions.md"
TOOLS_FILE = "tools.json"


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
    changes: list[FileChange] = field(default_factory=list)
    """Every file written or removed, with its diff against the live baseline."""


@dataclass
class FileChange:
    """One file the candidate changes, relative to the configuration folder."""

    path: str
    before: bytes | None
    """The live baseline's content (None: the file does not exist there)."""
    after: bytes | None
    """The candidate's content (None: the candidate removes it)."""

    def diff(self) -> list[str]:
        """Unified diff against the live baseline (a binary file: one line saying so)."""
        try:
            old = (self.before or b"").decode("utf-8")
            new = (self.after or b"").decode("utf-8")
        except UnicodeDecodeError:
            verb = "removed" if self.after is None else "replaced" if self.before else "added"
            return [f"binary file {self.path} {verb}"]
        return unified_diff(old, new, f"{BASELINE_ID}/{self.path}", f"candidate/{self.path}")


@dataclass
class ApplyPlan:
    """What `optimize apply` will do, computed before anything is written."""

    job: JobRecord
    record: CandidateRecord
    folder: Path
    """The candidate's folder under the job."""
    live: Path
    """`.agent_configs/baseline/` as it is now."""
    promote: bool
    changes: list[FileChange] = field(default_factory=list)
    dropped_tools: list[str] = field(default_factory=list)
    added_tools: list[str] = field(default_factory=list)
    edited_since_job: list[str] = field(default_factory=list)
    """Files the candidate changes that were edited in the live baseline since the job."""
    concerns: list[str] = field(default_factory=list)
    """Why promoting it should be confirmed (empty: nothing to confirm)."""

    @property
    def diff(self) -> list[str]:
        return [line for change in self.changes for line in change.diff()]


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
    folder = store.candidate_folder(record) if record is not None else None
    if record is None or folder is None:
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


def _files(folder: Path) -> dict[str, bytes]:
    """Relative path → bytes of every file of a configuration folder."""
    if not folder.is_dir():
        return {}
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


def _tool_names(data: bytes | None) -> list[str]:
    try:
        tools = json.loads(data or b"[]")
    except ValueError:
        return []
    names = []
    for tool in tools if isinstance(tools, list) else []:
        fn = tool.get("function") if isinstance(tool, dict) else None
        name = fn.get("name") if isinstance(fn, dict) else (tool or {}).get("name")
        if isinstance(name, str):
            names.append(name)
    return names


def plan_apply(project: Path, cand: str, job_id: str | None, *, promote: bool = False) -> ApplyPlan:
    """Compute what applying `cand` changes (see the module docstring); writes nothing in the
    project's configurations (a screened-out candidate's folder in the job is written from
    the journal, `JobStore.candidate_folder`)."""
    store, job = job_status(project, job_id)
    record, folder = _candidate(store, job, cand)
    live = Path(project) / AGENT_CONFIGS_DIR / BASELINE_ID
    snapshot = _files(store.candidate_dir(BASELINE_ID))
    candidate, current = _files(folder), _files(live)
    plan = ApplyPlan(job=job, record=record, folder=folder, live=live, promote=promote)
    for path in sorted(set(snapshot) | set(candidate)):
        if snapshot.get(path) == candidate.get(path):
            continue  # the optimizer did not change it: the live file stays as it is
        before, after = current.get(path), candidate.get(path)
        if before == after:
            continue
        plan.changes.append(FileChange(path, before, after))
        if path in snapshot and before != snapshot[path]:
            plan.edited_since_job.append(path)
    tools = next((c for c in plan.changes if c.path == TOOLS_FILE), None)
    if tools is not None:
        old, new = _tool_names(tools.before), _tool_names(tools.after)
        plan.dropped_tools = [n for n in old if n not in new]
        plan.added_tools = [n for n in new if n not in old]
    if promote and cand != BASELINE_ID:
        plan.concerns = _concerns(plan)
    return plan


def _concerns(plan: ApplyPlan) -> list[str]:
    record, job = plan.record, plan.job
    out = []
    if record.status in ("screened_out", "incomplete", "outranked") or record.validation is None:
        out.append(
            f"{record.id} was {record.status.replace('_', ' ')} in job {job.id}: it has no "
            "full validation score"
        )
    elif not record.star:
        out.append(f"{record.id} did not beat the baseline beyond the noise in job {job.id}")
    if plan.dropped_tools:
        out.append("it removes the tool(s) " + ", ".join(plan.dropped_tools) + " from tools.json")
    if plan.edited_since_job:
        out.append(
            "it overwrites edits made to the baseline since the job: "
            + ", ".join(plan.edited_since_job)
        )
    return out


def _write_folder(plan: ApplyPlan, target: Path) -> Path | None:
    """`target` = the live baseline with the plan's changes (staged, then renamed); an existing
    target is kept aside as `<target>.<timestamp>`, whose path is returned."""
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        staged = staging / target.name
        if plan.live.is_dir():
            shutil.copytree(plan.live, staged, symlinks=True)
        else:
            staged.mkdir()
        for change in plan.changes:
            path = staged / change.path
            if change.after is None:
                path.unlink(missing_ok=True)
            else:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(change.after)
        backup = None
        if target.exists():
            backup = free_aside_name(target)
            target.rename(backup)
        staged.rename(target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return backup


Confirm = Callable[[str], bool]


def apply_plan(
    plan: ApplyPlan, *, force: bool = False, confirm: Confirm | None = None
) -> ApplyResult:
    """Write what `plan` shows. A plan with concerns needs `force`, or `confirm` (the CLI's
    question) to say yes; without either it is refused (ConfigError naming --force)."""
    project = plan.live.parent.parent
    cand, job = plan.record.id, plan.job
    if plan.concerns and not force:
        question = f"Promote {cand} anyway? " + "; ".join(plan.concerns) + "."
        if confirm is None:
            raise ConfigError(
                f"not promoting {cand}: " + "; ".join(plan.concerns),
                hint="look at `agentopt optimize status`; pass --force to promote it anyway",
            )
        if not confirm(question):
            raise ConfigError(f"not promoting {cand}: declined", hint="nothing was written")
    configs = project / AGENT_CONFIGS_DIR
    result = ApplyResult(candidate=cand, written=configs / cand, changes=list(plan.changes))
    instructions = next((c for c in plan.changes if c.path == INSTRUCTIONS), None)
    result.instruction_diff = instructions.diff() if instructions else []
    if cand != BASELINE_ID:
        result.backup = _write_folder(plan, configs / cand)
    if plan.promote:
        result.baseline_backup = _write_folder(plan, configs / BASELINE_ID)
        result.promoted = True
        source = str((job.config.get("agent") or {}).get("source") or "")
        if source and AGENT_CONFIGS_DIR not in source:
            result.notes.append(
                f"the agent is defined by {source}: point it at "
                f"{AGENT_CONFIGS_DIR}/{BASELINE_ID}/ (eval.yaml `agent.config`) to run the "
                "promoted configuration"
            )
    if not plan.record.star and cand != BASELINE_ID:
        result.notes.append(
            f"{cand} did not beat the baseline beyond the noise in job {job.id}; "
            "check `agentopt optimize status` before relying on it"
        )
    return result


def apply_candidate(
    project: Path,
    cand: str,
    job_id: str | None,
    *,
    promote: bool = False,
    force: bool = False,
    confirm: Confirm | None = None,
) -> ApplyResult:
    """Write the candidate's changes to `.agent_configs/<id>/` (and with `promote`, to the
    baseline): `plan_apply`, then `apply_plan`."""
    plan = plan_apply(project, cand, job_id, promote=promote)
    return apply_plan(plan, force=force, confirm=confirm)
