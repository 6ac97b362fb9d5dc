"""The what-if behind `bench tool_wall_what_if` takes out what it says it takes out, and
nothing else: the same optimizer run, without the response cache, the journal and job
files, or the candidates' folders."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.gepa_peer.suite import WORLDS
from bench.optimizer_efficiency import Result, run_agentopt
from bench.tool_wall_what_if import RUN_WITHOUT
from tests.fake_openai import FakeOpenAI

pytestmark = pytest.mark.slow


def _run(srv: FakeOpenAI, root: Path, parts: str) -> tuple[Result, Path]:
    root.mkdir()
    result = run_agentopt(srv, WORLDS["tool-routing"], 1, root, command=[str(RUN_WITHOUT), parts])
    assert isinstance(result, Result), result
    jobs = list((root / "project" / ".agentopt" / "optimize").iterdir())
    assert len(jobs) == 1
    return result, jobs[0]


def test_without_nothing_is_the_optimizer_run_and_without_all_three_writes_none_of_them(
    tmp_path: Path,
) -> None:
    with FakeOpenAI(schemas="any") as srv:
        whole, job = _run(srv, tmp_path / "whole", "none")
        bare, bare_job = _run(srv, tmp_path / "bare", "cache,journal,folders")

    assert (tmp_path / "whole" / "project" / ".agentopt" / "cache.sqlite").is_file()
    assert (job / "journal.jsonl").stat().st_size > 0
    assert (job / "job.json").is_file() and (job / "report.html").is_file()
    folders = sorted(p.name for p in (job / "candidates").iterdir())
    assert "baseline" in folders and len(folders) >= 2

    assert not (tmp_path / "bare" / "project" / ".agentopt" / "cache.sqlite").exists()
    assert not (bare_job / "journal.jsonl").exists()
    assert not (bare_job / "job.json").exists() and not (bare_job / "report.html").exists()
    assert not (bare_job / "candidates").exists()

    # The search itself is the same one: same baseline and best scores on the held-out split.
    assert (bare.test_baseline, bare.test_best) == (whole.test_baseline, whole.test_best)
    assert bare.requests["agent"] >= whole.requests["agent"]  # nothing served from a cache


def test_an_unknown_part_is_refused_before_anything_runs(tmp_path: Path) -> None:
    with FakeOpenAI(schemas="any") as srv:
        (tmp_path / "r").mkdir()
        outcome = run_agentopt(
            srv, WORLDS["tool-routing"], 1, tmp_path / "r", command=[str(RUN_WITHOUT), "ledger"]
        )
        assert srv.requests == []
    assert isinstance(outcome, str) and "unknown part(s) ['ledger']" in outcome
