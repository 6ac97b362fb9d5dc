"""The job's files are written off the event loop: job.json and report.html by the store's
writer thread, a candidate's folder by a worker thread. What a reader finds must still be the
latest state once the store is flushed, a failed write must not vanish, and what is written
is what the candidate was when it was handed over."""

from __future__ import annotations

import copy
import json
import time
from pathlib import Path
from typing import Any

import pytest

from agentopt.contracts.optimize_job import JobRecord
from agentopt.core.files.agent_config import load_agent_config, write_agent_config
from agentopt.core.files.agent_definition import AgentDefinition
from agentopt.workflows.optimize.journal import JobStore
from tests.optimize.conftest import Models, make_project, optimize, task

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "order_status",
            "description": "The status of one order.",
            "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}},
        },
    }
]


def _files(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


def test_saved_files_hold_the_latest_state_once_flushed(tmp_path: Path) -> None:
    store = JobStore(tmp_path, "job-1")
    job = JobRecord(id="job-1")
    store.save_files(job, "<html>first</html>")
    job.status = "completed"
    job.notes.append("the second save")
    store.save_files(job, "<html>second</html>")
    store.flush()
    saved = json.loads(store.job_json.read_text(encoding="utf-8"))
    assert saved["status"] == "completed"
    assert saved["notes"] == ["the second save"]
    assert store.report_html.read_text(encoding="utf-8") == "<html>second</html>"
    store.close()
    assert not [p.name for p in store.dir.iterdir() if p.name.endswith(".tmp")]


def test_a_save_that_cannot_be_written_fails_loudly(tmp_path: Path) -> None:
    store = JobStore(tmp_path, "job-2")
    store.dir.mkdir(parents=True)
    store.job_json.mkdir()  # a folder where job.json goes: the rename over it fails
    store.save_files(JobRecord(id="job-2"), "<html></html>")
    with pytest.raises(OSError):
        store.close()


def test_a_failed_save_still_lets_the_journal_close_with_its_lines_on_disk(
    tmp_path: Path,
) -> None:
    """The writers close side by side; one that failed is raised after the other is done."""
    import threading

    from agentopt.contracts.optimize_journal import ProposalEntry

    store = JobStore(tmp_path, "job-4")
    store.dir.mkdir(parents=True)
    store.job_json.mkdir()  # job.json cannot be written
    store.save_files(JobRecord(id="job-4"), "<html></html>")
    store.append(ProposalEntry(number=1, strategy="tools", parent="baseline", reason="r"))
    with pytest.raises(OSError):
        store.close()
    lines = store.journal.read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["number"] for line in lines] == [1]
    assert not [t for t in threading.enumerate() if t.name.endswith("-job-4")]  # both ended


def test_a_candidate_folder_is_what_the_candidate_was_when_handed_over(tmp_path: Path) -> None:
    store = JobStore(tmp_path, "job-3")
    definition = AgentDefinition(
        name="store",
        model="compat:agent",
        instructions="Answer briefly.",
        tools=copy.deepcopy(TOOLS),
    )
    write = store.candidate_writer("cand_01", definition)
    definition.instructions = "Changed after the hand-over."
    definition.tools[0]["function"]["description"] = "Changed too."
    folder = write()
    loaded, problems = load_agent_config(folder / "metadata.yaml")
    assert not problems
    assert loaded.instructions == "Answer briefly."
    assert loaded.tools[0]["function"]["description"] == "The status of one order."
    # Byte for byte what `.agent_configs` gets for the same definition (apply = copy).
    reference = tmp_path / "reference"
    write_agent_config(
        reference,
        AgentDefinition(
            name="store", model="compat:agent", instructions="Answer briefly.", tools=TOOLS
        ),
    )
    assert _files(folder) == _files(reference)


def test_a_run_writes_job_json_before_its_first_journal_line_and_ends_with_it_final(
    tmp_path: Path, models: Models, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--resume` reads job.json: a crash after the first journal line must find it (the
    journal's writer thread waits for it; the event loop does not). And when the command
    returns, the files hold the finished job, not a save still in flight."""
    import agentopt.workflows.optimize.journal as journal

    seen: list[bool] = []
    write_lines, write_files = journal.append_lines_fsync, JobStore._write_files

    def checking(path: Path, lines: Any) -> None:
        seen.append((path.parent / "job.json").is_file())
        write_lines(path, lines)

    def slow_disk(files: Any) -> None:
        time.sleep(0.3)  # the files' writer thread lags far behind the event loop
        write_files(files)

    monkeypatch.setattr(journal, "append_lines_fsync", checking)
    monkeypatch.setattr(JobStore, "_write_files", staticmethod(slow_disk))
    project = make_project(
        tmp_path,
        [task(f"tr{i}", "refund window") for i in range(4)],
        validation=[task(f"va{i}", "refund window") for i in range(3)],
        instructions="Mention the 'refund window'.",
    )
    outcome = optimize(project, targets=["instructions"], max_stalls=1, seed=2)
    assert seen and all(seen)
    saved = json.loads(outcome.store.job_json.read_text(encoding="utf-8"))
    assert saved["status"] == "completed" and saved["finished_at"]
    assert saved["termination_reason"] == outcome.job.termination_reason
    assert "completed" in outcome.store.report_html.read_text(encoding="utf-8")
