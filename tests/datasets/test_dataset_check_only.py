"""`eval validate` checks a task file without building its tasks (`load_jsonl(check_only=
True)`: no pydantic model is imported or made). It must find exactly what loading finds: the
same problems, in the same order, for valid and broken records alike."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentopt.datasets import validate_dataset
from agentopt.datasets.jsonl import load_jsonl
from agentopt.datasets.load import _load

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"

RECORDS = [
    {"query": "q1", "ground_truth": "a"},
    {"name": "dup", "query": "q2"},
    {"name": "dup", "prompt": "q3", "expected_response": 4},
    {"query": "q4", "prompt": "q5"},
    {"query": ""},
    {"name": "  ", "query": "q6"},
    {"turns": [{"prompt": "hi", "ground_truth": "x"}, {"query": "next", "criteria": ["c"]}]},
    {"turns": [{"prompt": "a"}], "query": "not beside turns"},
    {"turns": []},
    {"turns": [{"prompt": str(i)} for i in range(25)]},
    {"goal": "get a refund", "persona": "terse", "desired_num_turns": 3},
    {"goal": "x", "desired_num_turns": 99},
    {"query": "q7", "criteria": [{"name": "c", "instruction": "be kind"}, "also short", 3]},
    {
        "query": "q8",
        "criteria": [{"name": "c", "instruction": "a"}, {"name": "c", "instruction": "b"}],
    },
    {"query": "q9", "evaluators": {"Relevance": {}, "Bad": 3}, "evaluators_mode": "replace"},
    {"query": "q10", "evaluators": ["ExactMatch"], "evaluators_mode": "sometimes"},
    {"query": "q11", "tags": ["a", 1], "metadata": [], "tool_mocks": {"t": 1}, "answer": "typo"},
    {"query": "q12", "simulation_configuration": {"max_turns": 4}},
    {"id": 7, "query": "q13", "candidate_response": "kept"},
    [1, 2],
]


def _text(lines: list[str]) -> str:
    return "\n".join(lines) + "\n"


CASES = {
    "records": _text([json.dumps(r) for r in RECORDS] + ["{not json", "", "  "]),
    "unnamed": _text(
        [json.dumps({"query": f"q{i}"}) for i in range(5)] + ['{"name": "task_2", "query": "x"}']
    ),
    "empty": "",
    "one document": json.dumps({"query": "a"}, indent=2),
}
CASES.update(
    {
        f"fixture {p.name}": p.read_text(encoding="utf-8", errors="replace")
        for p in sorted((FIXTURES / "fuzz").glob("*.jsonl"))
    }
)


@pytest.mark.parametrize("name", sorted(CASES))
def test_checking_finds_what_loading_finds(name: str) -> None:
    text = CASES[name]
    built, built_log = load_jsonl(text, "tasks.jsonl")
    checked, checked_log = load_jsonl(text, "tasks.jsonl", check_only=True)
    assert checked_log.in_order() == built_log.in_order()
    assert len(checked) == len(built)
    assert [t.name for t in checked] == [t.name for t in built]


def test_validate_dataset_reports_the_problems_of_a_load(tmp_path: Path) -> None:
    path = tmp_path / "tasks.jsonl"
    path.write_text(CASES["records"], encoding="utf-8")
    loaded = _load(path, str(path), strict=False, upgrade=False)
    assert loaded.log.errors  # the corpus is broken on purpose
    assert validate_dataset(path) == loaded.log.in_order()
