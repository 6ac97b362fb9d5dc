"""The results.json contract: loads what the run engine writes, tolerates unknown keys,
explains a broken file, and round-trips through write_results_json."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentopt.contracts import iter_results
from agentopt.core.errors import InputError
from agentopt.reports import RunResults, load_results, redacted, write_results_json


def test_loads_every_task_shape(mixed: RunResults) -> None:
    assert [t.status for t in mixed.tasks].count("partial") == 2
    thread = mixed.task("trip-thread")
    assert thread is not None and thread.turns is not None
    assert thread.turns[1].tool_calls[0].arguments == {"city": "Portland"}
    assert thread.evaluators == []
    assert mixed.summary.score_ci == [0.52, 0.81]
    assert mixed.summary.usage["judge"].cost_usd == pytest.approx(0.0456)
    assert mixed.title == "nightly"


def test_unknown_keys_load_and_survive_a_round_trip(
    tmp_path: Path, mixed_dict: dict[str, Any]
) -> None:
    mixed_dict["future_field"] = {"x": 1}
    mixed_dict["tasks"][0]["new_metric"] = 0.5
    mixed_dict["summary"]["evaluators"][0]["p95"] = 1.0
    results = RunResults.model_validate(mixed_dict)
    path = tmp_path / "out" / "results.json"
    write_results_json(path, results)
    again = json.loads(path.read_text(encoding="utf-8"))
    assert again["future_field"] == {"x": 1}
    assert again["tasks"][0]["new_metric"] == 0.5
    assert again["summary"]["evaluators"][0]["p95"] == 1.0
    assert load_results(path).model_dump() == results.model_dump()
    assert not list(path.parent.glob(".*.tmp"))  # atomic write left no temp file


def test_repeats_count_once_in_iter_results(mixed: RunResults) -> None:
    flaky = mixed.task("flaky-one")
    assert flaky is not None
    wheres = [where for where, _ in iter_results(flaky)]
    assert wheres == ["repeat 1", "repeat 2", "repeat 3"]
    thread = mixed.task("trip-thread")
    assert thread is not None
    assert [w for w, _ in iter_results(thread)] == ["turn 1", "turn 1", "turn 2", "turn 2"]


def test_broken_file_names_the_file_and_key(tmp_path: Path, mixed_dict: dict[str, Any]) -> None:
    bad = tmp_path / "results.json"
    bad.write_text('{\n  "run": \n', encoding="utf-8")
    with pytest.raises(InputError) as err:
        load_results(bad)
    assert "results.json:line" in str(err.value)

    mixed_dict["tasks"][2]["status"] = "maybe"
    bad.write_text(json.dumps(mixed_dict), encoding="utf-8")
    with pytest.raises(InputError) as err:
        load_results(bad)
    assert "tasks.2.status" in str(err.value)
    assert "'maybe'" in str(err.value)


def test_redacted_masks_secret_values(
    monkeypatch: pytest.MonkeyPatch, mixed_dict: dict[str, Any]
) -> None:
    monkeypatch.setenv("ACME_API_KEY", "topsecret-value-123")
    mixed_dict["tasks"][0]["response"] = "my key is topsecret-value-123, bearer abc.def"
    clean = redacted(RunResults.model_validate(mixed_dict))
    assert "topsecret-value-123" not in clean.tasks[0].response
    assert "***" in clean.tasks[0].response
