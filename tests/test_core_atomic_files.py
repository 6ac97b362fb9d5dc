"""Files saved together (`atomic.write_files_atomic`: an optimize job's job.json and
report.html) are each replaced whole or not at all: one that cannot be written leaves every
target as it was and no temp file behind; written, each keeps its mode."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from agentopt.core.atomic import write_files_atomic


def test_a_file_that_cannot_be_written_leaves_every_target_as_it_was(tmp_path: Path) -> None:
    job = tmp_path / "job.json"
    job.write_text("old job")
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where a folder should be")
    with pytest.raises(OSError) as raised:
        write_files_atomic({job: b"new job", blocker / "report.html": b"<html>"})
    assert "not-a-folder" in str(raised.value)  # the error names the path it failed on
    assert job.read_text() == "old job"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["job.json", "not-a-folder"]


def test_files_written_together_are_whole_and_keep_their_modes(tmp_path: Path) -> None:
    job, report = tmp_path / "job.json", tmp_path / "sub" / "report.html"
    job.write_text("old")
    os.chmod(job, 0o640)
    write_files_atomic({job: b"new job", report: b"<html>"})
    assert (job.read_bytes(), report.read_bytes()) == (b"new job", b"<html>")
    assert stat.S_IMODE(job.stat().st_mode) == 0o640
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["job.json", "report.html", "sub"]
