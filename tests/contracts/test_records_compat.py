"""Files written by the previous version still load, and this version writes the same bytes.

`tests/fixtures/records-e2ad180/` holds what commit e2ad180 (before the records were typed)
wrote for `records_scenario.py`: two runs' run.json, journal and results.json, and an optimize
job's job.json and journal. The readers must take them as they are, and the scenario run again
here must write the same files, byte for byte, once the values that differ on every run (ids,
clocks, latencies, the project's path) are masked and the `schema_version` this version adds
is left out.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from agentopt.contracts import load_job, load_results
from tests.contracts.records_scenario import run_scenario, saved_files

FIXTURES = Path(__file__).parents[1] / "fixtures" / "records-e2ad180"
FIXTURE_PROJECT = "/home/user/shop"
"""Where the fixtures' project was (the real path was replaced by this one)."""
NAMES = sorted(p.name for p in FIXTURES.iterdir() if p.suffix in {".json", ".jsonl"})

_VOLATILE = re.compile(
    r'("(?:started_at|finished_at|created_at|at|latency_s|duration_s)": )'
    r'("[^"]*"|-?[0-9][0-9.e+-]*|null)'
)
_RUN_ID = re.compile(r"\d{8}-\d{6}-[0-9a-f]{6}")
_SCHEMA_VERSION = re.compile(r'"schema_version": \d+,\s*')


def masked(text: str, project: str) -> str:
    text = text.replace(project, FIXTURE_PROJECT)
    text = _SCHEMA_VERSION.sub("", text)
    return _RUN_ID.sub("<id>", _VOLATILE.sub(r'\1"<v>"', text))


def test_the_fixtures_are_all_there() -> None:
    assert NAMES == [
        "optimize-job.json",
        "optimize-journal.jsonl",
        "run-repeat1-journal.jsonl",
        "run-repeat1-results.json",
        "run-repeat1-run.json",
        "run-repeat2-journal.jsonl",
        "run-repeat2-results.json",
        "run-repeat2-run.json",
    ]


@pytest.mark.parametrize("name", ["run-repeat1-results.json", "run-repeat2-results.json"])
def test_old_results_load_and_round_trip(name: str) -> None:
    path = FIXTURES / name
    results = load_results(path)
    assert results.run.dataset.source == f"{FIXTURE_PROJECT}/data/tasks.jsonl"
    assert [t.name for t in results.tasks][:2] == ["refund-window", "order-status"]
    assert results.summary.tasks == 6
    assert json.loads(results.model_dump_json()) == json.loads(path.read_text(encoding="utf-8"))


def test_old_job_loads_and_round_trips() -> None:
    path = FIXTURES / "optimize-job.json"
    job = load_job(path)
    assert job.outcome == "improved" and job.best == "cand_01"
    assert job.test is not None and job.test.best == "cand_01"
    assert json.loads(job.model_dump_json()) == json.loads(path.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Path]]:
    project = run_scenario(tmp_path_factory.mktemp("records"))
    return project, saved_files(project)


@pytest.mark.parametrize("name", NAMES)
def test_this_version_writes_the_same_bytes(
    name: str, written: tuple[Path, dict[str, Path]]
) -> None:
    project, files = written
    old = (FIXTURES / name).read_text(encoding="utf-8")
    new = files[name].read_text(encoding="utf-8")
    assert masked(new, str(project)) == masked(old, FIXTURE_PROJECT)
