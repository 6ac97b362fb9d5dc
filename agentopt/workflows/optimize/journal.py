"""On-disk state of one optimization job: `.agentopt/optimize/<job-id>/{job.json,
journal.jsonl, candidates/<id>/}` (files.md §7).

The journal gets one line per finished unit (a candidate on a task), per proposal and per
screening, so `--resume` after a crash replays finished work from the file: no model call is
repeated for it (the calls that were in flight are in the model-call cache). The lines are
written by one writer thread in fsync'd batches, as `eval run`'s journal is
(`core/batch_writer.py`). A line per unit through `asyncio.to_thread`, each with its own
open, write and fsync, cost the bench's `tool-descriptions` world 0.45–0.47 s a run against
0.41–0.43 s batched (what is left is serializing the records, which `--resume` needs). A crash
loses at most the last batch's linger (20 ms), which --resume plays again, from the model-call
cache where it holds the answers. job.json and report.html are rewritten atomically whenever
something a reader cares about changes: serialised at once, written and fsync'd by a second
writer thread (`save_files`), so the event loop never waits on a disk; `flush` and `close` wait
for both writers.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from agentopt.contracts.optimize_job import CandidateRecord, JobRecord, load_job
from agentopt.contracts.optimize_journal import (
    OptimizeEntry,
    parse_optimize_entry,
    proposed_definitions,
)
from agentopt.contracts.record import read_journal
from agentopt.core.atomic import (
    append_lines_fsync,
    json_bytes,
    write_files_atomic,
    write_json_atomic,
)
from agentopt.core.batch_writer import LINGER_S, BatchWriter
from agentopt.core.errors import ConfigError
from agentopt.core.files.agent_config import agent_config_files, write_agent_config
from agentopt.core.files.agent_definition import AgentDefinition
from agentopt.core.ids import ID_RE, new_id
from agentopt.core.paths import inside_project, optimize_dir
from agentopt.core.redaction import model_line

CANDIDATES = "candidates"


class JobStore:
    """Files of one optimization job."""

    def __init__(self, project: Path, job_id: str | None = None) -> None:
        self.project = Path(project)
        self.job_id = job_id or new_id()
        self.dir = inside_project(
            self.project, optimize_dir(self.project) / self.job_id, "the job folder"
        )
        self._writer: BatchWriter[bytes] | None = None
        self._files: BatchWriter[tuple[Path, bytes]] | None = None
        self._lines_started = False
        self._last_files: BatchWriter[tuple[Path, bytes]] | None = None
        """The files' writer the journal's first batch waits for (`close` does not clear it:
        that batch may come while `close` is waiting on that writer)."""

    @classmethod
    def open_existing(cls, project: Path, job_id: str) -> JobStore:
        """For --resume / status / apply: the job must exist."""
        store = cls(project, job_id)
        if os.path.lexists(store.job_json):
            store.read_job()  # a broken job.json is an error naming it and the key, not "no job"
        elif store.dir.is_dir():
            raise ConfigError.at(
                str(store.job_json), "", f"job '{job_id}' has no job.json (its folder exists)"
            )
        else:
            known = ", ".join(list_job_ids(project)[-5:]) or "none"
            raise ConfigError(
                f"no optimization job '{job_id}' in {optimize_dir(project)}",
                hint=f"job ids are listed by `agentopt optimize list` (recent: {known})",
            )
        return store

    def create(self) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)

    @property
    def job_json(self) -> Path:
        return self.dir / "job.json"

    @property
    def journal(self) -> Path:
        return self.dir / "journal.jsonl"

    @property
    def report_html(self) -> Path:
        return self.dir / "report.html"

    def candidate_dir(self, cand_id: str) -> Path:
        return self.dir / CANDIDATES / cand_id

    def candidate_folder(self, record: CandidateRecord) -> Path | None:
        """The candidate's folder, written now from the journal when the run never wrote it
        (a candidate screened out: `screening.screen`); None when neither holds it."""
        folder = self.candidate_dir(record.id)
        if folder.is_dir():
            return folder
        if not record.number or not self.journal.is_file():
            return None
        definition = proposed_definitions(self.journal).get(record.number)
        if definition is None:
            return None
        return self.candidate_writer(record.id, definition)()

    def write_job(self, job: JobRecord) -> None:
        write_json_atomic(self.job_json, job.model_dump(mode="json"))

    def save_files(self, job: JobRecord, report_html: str) -> None:
        """job.json and report.html as they are now, written by the writer thread (atomic,
        fsync'd, returns at once). Four saves of an optimize run waited 14-17 ms on their
        fsyncs on the event loop's thread."""
        data = json_bytes(job.model_dump(mode="json"))
        if self._files is None:
            self.dir.mkdir(parents=True, exist_ok=True)
            self._files = BatchWriter(self._write_files, name=f"agentopt-job-{self.job_id}")
            self._last_files = self._files
        self._files.submit((self.job_json, data))
        self._files.submit((self.report_html, report_html.encode()))

    def read_job(self) -> JobRecord:
        return load_job(self.job_json)

    def append(self, entry: OptimizeEntry) -> None:
        """One line, secrets masked, queued in order for the writer thread (returns at once)."""
        text = model_line(entry, default=str)
        if self._writer is None:
            self.dir.mkdir(parents=True, exist_ok=True)
            self._writer = BatchWriter(
                self._write_lines, name=f"agentopt-optimize-{self.job_id}", linger=LINGER_S
            )
        self._writer.submit((text + "\n").encode())

    def flush(self) -> None:
        """Block until every appended line and saved file is on disk, fsync'd."""
        for writer in (self._writer, self._files):
            if writer is not None:
                writer.flush()

    def close(self) -> None:
        """Flush and stop the writer threads, side by side (a later `append` or save starts
        another; a journal batch still to come waits for job.json in `_write_lines`)."""
        writers = [w for w in (self._files, self._writer) if w is not None]
        self._writer = self._files = None
        for writer in writers:
            writer.begin_close()
        failed: BaseException | None = None
        for writer in writers:
            try:
                writer.close()
            except BaseException as exc:  # every writer is closed; the first error is raised
                failed = failed or exc
        if failed is not None:
            raise failed

    def _write_lines(self, lines: Sequence[bytes]) -> None:
        """The writer thread: every line queued so far, one write, one fsync. The first
        batch waits for the job.json saved before it (`--resume` reads it, so it is on disk
        before the journal's first line), here rather than on the event loop's thread."""
        if not self._lines_started:
            if self._last_files is not None:
                self._last_files.wait()
            self._lines_started = True
        append_lines_fsync(self.journal, lines)

    @staticmethod
    def _write_files(files: Sequence[tuple[Path, bytes]]) -> None:
        """The files' writer thread: the latest contents of each file queued so far."""
        write_files_atomic(dict(files))

    def entries(self) -> Iterator[OptimizeEntry]:
        """Journal entries in order (what was appended is flushed first); a torn last line
        (crash mid-write) and entries of kinds this version does not know are skipped."""
        self.flush()
        for entry in read_journal(self.journal, parse_optimize_entry):
            if entry is not None:
                yield entry

    def candidate_writer(self, cand_id: str, definition: AgentDefinition) -> Callable[[], Path]:
        """The candidate's full configuration in the `.agent_configs` layout (apply = copy),
        in two halves: the files are serialised now, on the caller's thread; the returned
        function only writes them (for a worker thread). A Python tools module is copied in
        beside metadata.yaml so the folder works on its own. Serialising on the worker thread
        too made the bench's `tool-descriptions` runs slower, not faster: 1.04x the time of
        writing the folder on the loop, in three rounds of ten seeds, where serialising first
        gave 0.96-1.00x."""
        folder = self.candidate_dir(cand_id)
        module = Path(definition.tools_module) if definition.tools_module else None
        portable = definition
        if module is not None and module.is_file():
            portable = definition.model_copy(update={"tools_module": module.name})
        files = agent_config_files(portable)

        def write() -> Path:
            if folder.is_dir():
                return folder
            staged = files
            if module is not None and module.is_file():
                staged = {**files, module.name: module.read_bytes()}
            write_agent_config(folder, portable, files=staged)
            return folder

        return write


def list_job_ids(project: Path) -> list[str]:
    """Job ids in time order."""
    folder = optimize_dir(project)
    if not folder.is_dir():
        return []
    return sorted(p.name for p in folder.iterdir() if ID_RE.match(p.name) and p.is_dir())


def resolve_job(project: Path, job_id: str | None) -> JobStore:
    """A job by id, or the latest one."""
    if job_id:
        return JobStore.open_existing(project, job_id)
    ids = [i for i in list_job_ids(project) if (optimize_dir(project) / i / "job.json").is_file()]
    if not ids:
        raise ConfigError(
            f"no optimization job yet in {optimize_dir(project)}",
            hint="start one with `agentopt optimize`",
        )
    return JobStore(project, ids[-1])
