"""What `agentopt view` reads from `.agentopt/`, read-only, and only what agentopt wrote there:
a name that is a link, holds a path separator or starts with a dot is never followed.

Listing reads each run's results.json once per change (cached by size and modification
time), so the runs page of a project with many runs stays quick while a run is being written.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar, cast

from agentopt.contracts.matrix import MatrixRecord, load_matrix
from agentopt.contracts.optimize_job import JobRecord, load_job
from agentopt.contracts.optimize_journal import proposed_definitions
from agentopt.contracts.record import read_journal
from agentopt.contracts.run_journal import RunJournalEntry
from agentopt.contracts.run_results import (
    RunRecord,
    RunResults,
    load_results,
    load_run_record,
)
from agentopt.core.errors import AgentoptError
from agentopt.core.files.agent_config import agent_config_files
from agentopt.reports.optimize_diff import config_texts, folder_texts

__all__ = ["RunEntry", "ViewState", "real_child", "real_dir"]

T = TypeVar("T")


def real_child(parent: Path | None, name: str) -> Path | None:
    """`parent/name` when it is a real entry of `parent` (no link, no `..`, no path)."""
    if parent is None:
        return None
    if not name or "/" in name or "\\" in name or name.startswith(".") or "\0" in name:
        return None
    path = parent / name
    try:
        if path.is_symlink() or not path.exists():
            return None
        path.resolve().relative_to(parent.resolve())
    except (OSError, ValueError):
        return None
    return path


def real_dir(parent: Path | None, name: str) -> Path | None:
    """`real_child` when it is a folder."""
    found = real_child(parent, name)
    return found if found is not None and found.is_dir() else None


def _signature(*paths: Path | None) -> str:
    """Size and modification time of each file: what changes when agentopt writes it."""
    parts = []
    for p in paths:
        try:
            st = p.stat() if p is not None else None
        except OSError:
            st = None
        parts.append(f"{st.st_size}:{st.st_mtime_ns}" if st else "-")
    return "/".join(parts)


@dataclass
class RunEntry:
    """One folder of `.agentopt/runs/`: its results, or the record of a run still going, or
    why it cannot be shown."""

    id: str
    results: RunResults | None = None
    record: RunRecord | None = None
    """run.json of a run without results.json yet (running, or killed)."""
    problem: str | None = None

    @property
    def running(self) -> bool:
        return self.results is None and self.record is not None and self.record.status == "running"


class ViewState:
    """The `.agentopt/` folder being served."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._cache: dict[Path, tuple[str, object]] = {}
        self._lock = threading.Lock()

    # -- folders ------------------------------------------------------------------------------
    def _dir(self, name: str) -> Path | None:
        return real_dir(self.root, name)

    def _names(self, kind: str) -> list[tuple[str, Path | None]]:
        """(name, folder or None when it is not a real folder), newest first."""
        parent = self._dir(kind)
        if parent is None:
            return []
        out = []
        for entry in sorted(parent.iterdir(), reverse=True):
            if entry.name.startswith("."):
                continue
            out.append((entry.name, real_dir(parent, entry.name)))
        return out

    def run_folder(self, run_id: str) -> Path | None:
        return real_dir(self._dir("runs"), run_id)

    def job_folder(self, job_id: str) -> Path | None:
        return real_dir(self._dir("optimize"), job_id)

    def matrix_folder(self, matrix_id: str) -> Path | None:
        return real_dir(self._dir("matrices"), matrix_id)

    # -- cached loads -------------------------------------------------------------------------
    def _cached(self, folder: Path | None, name: str, load: Callable[[Path], T]) -> T | None:
        """`folder/name` as `load` reads it, read again only when the file changed; None when
        there is no such file (the loader's error is raised when it is broken)."""
        path = real_child(folder, name)
        if path is None:
            return None
        sig = _signature(path)
        with self._lock:
            hit = self._cache.get(path)
        if hit is not None and hit[0] == sig:
            return cast(T, hit[1])
        value = load(path)
        with self._lock:
            self._cache[path] = (sig, value)
        return value

    def results(self, run_id: str) -> RunResults | None:
        """The run's results.json (raises the loader's error when it is broken)."""
        return self._cached(self.run_folder(run_id), "results.json", load_results)

    def run(self, run_id: str) -> RunEntry | None:
        """A run as the pages show it; None when there is no such folder, or nothing in it."""
        folder = self.run_folder(run_id)
        if folder is None:
            return None
        try:
            results = self.results(run_id)
            if results is not None:
                return RunEntry(run_id, results=results)
            record_path = real_child(folder, "run.json")
            if record_path is None:
                return None  # nothing agentopt wrote (yet), or only links: nothing to show
            return RunEntry(run_id, record=load_run_record(record_path))
        except (AgentoptError, OSError, ValueError, RecursionError) as exc:
            return RunEntry(run_id, problem=_reason(exc))

    def runs(self) -> list[RunEntry]:
        out = []
        for name, folder in self._names("runs"):
            if folder is None:
                out.append(RunEntry(name, problem="refused: not a folder (a link is not followed)"))
                continue
            entry = self.run(name)
            if entry is not None:
                out.append(entry)
        return out

    def journal(self, run_id: str) -> list[RunJournalEntry]:
        """The finished units of a run still going (the last torn line skipped)."""
        path = real_child(self.run_folder(run_id), "journal.jsonl")
        if path is None:
            return []
        return list(read_journal(path, RunJournalEntry.model_validate))

    def job(self, job_id: str) -> JobRecord | None:
        return self._cached(self.job_folder(job_id), "job.json", load_job)

    def jobs(self) -> list[tuple[str, JobRecord | None, str | None]]:
        """(job id, its record or None, why not)."""
        out: list[tuple[str, JobRecord | None, str | None]] = []
        for name, folder in self._names("optimize"):
            if folder is None:
                out.append((name, None, "refused: not a folder (a link is not followed)"))
                continue
            try:
                job = self.job(name)
            except (AgentoptError, OSError, ValueError, RecursionError) as exc:
                out.append((name, None, _reason(exc)))
                continue
            if job is not None:
                out.append((name, job, None))
        return out

    def matrix(self, matrix_id: str) -> MatrixRecord | None:
        return self._cached(self.matrix_folder(matrix_id), "matrix.json", load_matrix)

    def matrices(self) -> list[MatrixRecord]:
        out = []
        for name, folder in self._names("matrices"):
            if folder is None:
                continue
            try:
                found = self.matrix(name)
            except (AgentoptError, OSError, ValueError, RecursionError):
                continue
            if found is not None:
                out.append(found)
        return out

    def candidate_texts(self, job_id: str, cand: str) -> dict[str, str] | None:
        """A candidate's text files: from its folder, or, for one screened out (whose folder
        the run never wrote), from its proposal in the journal; None when neither reads."""
        job_folder = self.job_folder(job_id)
        folder = real_dir(real_child(job_folder, "candidates"), cand)
        if folder is not None:
            return folder_texts(folder)
        try:
            job = self.job(job_id)
            record = job.candidate(cand) if job is not None else None
            if record is None or not record.number:
                return None
            proposals = self._cached(job_folder, "journal.jsonl", proposed_definitions)
            definition = (proposals or {}).get(record.number)
        except (AgentoptError, OSError, ValueError, RecursionError):
            return None
        return config_texts(agent_config_files(definition)) if definition else None

    # -- live ---------------------------------------------------------------------------------
    def version(self, kind: str, ident: str) -> tuple[str, bool]:
        """(signature of the files a page is built from, whether it is still changing)."""
        if kind == "runs":
            folder = self.run_folder(ident)
            if folder is None:
                return "-", False
            files = [real_child(folder, n) for n in ("run.json", "journal.jsonl", "results.json")]
            entry = self.run(ident)
            return _signature(*files), bool(entry and entry.running)
        if kind == "optimize":
            path = real_child(self.job_folder(ident), "job.json")
            return self._live(path, lambda: self.job(ident))
        if kind == "matrices":
            path = real_child(self.matrix_folder(ident), "matrix.json")
            return self._live(path, lambda: self.matrix(ident))
        return "-", False

    def _live(
        self, path: Path | None, read: Callable[[], JobRecord | MatrixRecord | None]
    ) -> tuple[str, bool]:
        """A job's or a matrix's version: its file's signature, and whether the record (when
        it reads) says it is still running."""
        try:
            found = read()
        except (AgentoptError, OSError, ValueError, RecursionError):
            found = None
        return _signature(path), bool(found and found.status == "running")


def _reason(exc: BaseException) -> str:
    return str(exc) if isinstance(exc, AgentoptError) else f"{type(exc).__name__}: {exc}"
