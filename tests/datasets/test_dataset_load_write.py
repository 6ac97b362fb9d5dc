"""Picking the loader (extension, content, folders), hashes, and the canonical JSONL writer."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

import agentopt.datasets as datasets
from agentopt.datasets import (
    Criterion,
    EvaluatorRef,
    Task,
    Turn,
    dump_tasks_jsonl,
    load_dataset,
    resolve_dataset_path,
    validate_dataset,
)
from tests.conftest import M365_FIXTURES

FOUNDRY_SAMPLE = (
    "azd/foundry-samples/"
    "samples_python_enterprise-agent-tutorial_1-idea-to-prototype_questions.jsonl"
)


def test_public_names():
    assert set(datasets.__all__) >= {
        "load_dataset",
        "validate_dataset",
        "dump_tasks_jsonl",
        "dataset_from_prompts",
        "discover_dataset",
        "write_starter_file",
        "STARTER_QUESTION",
        "Task",
        "Dataset",
    }
    assert all(hasattr(datasets, name) for name in datasets.__all__)


def test_json_with_one_object_per_line_is_task_jsonl(write, jsonl):
    ds = load_dataset(write("tasks.json", jsonl({"query": "a"}, {"query": "b"})))
    assert ds.format == "jsonl" and [t.query for t in ds.tasks] == ["a", "b"]


def test_json_with_a_single_task_line_is_task_jsonl(write):
    ds = load_dataset(write("tasks.json", '{"query": "only one"}\n'))
    assert ds.format == "jsonl" and ds.tasks[0].query == "only one"


def test_single_line_m365_document_is_m365(write):
    ds = load_dataset(write("e.json", '{"schemaVersion": "1.0.0", "items": [{"prompt": "p"}]}'))
    assert ds.format == "m365"


def test_pretty_printed_task_in_json_gets_a_clear_error(write, load_errors):
    (error,) = load_errors(write("t.json", json.dumps({"query": "a"}, indent=2)))
    assert "one task object per line" in error.message and ".jsonl" in error.message


def test_broken_json_names_the_line(write, load_errors):
    (error,) = load_errors(write("e.json", '{\n  "schemaVersion": "1.0.0",\n  "items": [,]\n}\n'))
    assert error.location == "line 3"
    assert "expected valid JSON" in error.message


def test_sha256_is_of_the_file_bytes(write, jsonl):
    path = write("a.jsonl", jsonl({"query": "a"}))
    assert load_dataset(path).sha256 == hashlib.sha256(path.read_bytes()).hexdigest()


def test_source_is_the_path_as_given(write, jsonl, tmp_path, monkeypatch):
    write("a.jsonl", jsonl({"query": "a"}))
    monkeypatch.chdir(tmp_path)
    assert load_dataset("a.jsonl").source == "a.jsonl"


def test_folder_means_its_single_jsonl_file(write, jsonl, tmp_path):
    write("ds/seed.jsonl", jsonl({"query": "a"}))
    write("ds/notes.txt", "ignored")
    ds = load_dataset(tmp_path / "ds")
    assert ds.source == str(tmp_path / "ds" / "seed.jsonl")
    assert resolve_dataset_path(tmp_path / "ds") == tmp_path / "ds" / "seed.jsonl"


def test_folder_falls_back_to_a_single_json_file(write, tmp_path):
    write("ds/evals.json", {"schemaVersion": "1.0.0", "items": [{"prompt": "p"}]})
    assert load_dataset(tmp_path / "ds").format == "m365"


def test_folder_with_several_or_no_files_lists_them(write, jsonl, tmp_path, load_errors):
    write("two/a.jsonl", jsonl({"query": "a"}))
    write("two/b.jsonl", jsonl({"query": "b"}))
    (error,) = load_errors(tmp_path / "two")
    assert "found 2: a.jsonl, b.jsonl" in error.message
    (tmp_path / "none").mkdir()
    (error,) = load_errors(tmp_path / "none")
    assert "an empty folder" in error.message


@pytest.mark.parametrize(
    ("name", "content", "fragment"),
    [
        ("missing.jsonl", None, "found nothing at this path"),
        ("data.txt", "query\n", "found a .txt file"),
        ("data.jsonl", b"\xff\xfe\x00bad", "not UTF-8"),
        ("e.json", "", "empty file"),
    ],
)
def test_unreadable_inputs(write, tmp_path, load_errors, name, content, fragment):
    path = write(name, content) if content is not None else tmp_path / name
    (error,) = load_errors(path)
    assert error.file == str(path) and fragment in error.message
    assert [p.message for p in validate_dataset(path)] == [error.message]


def _sample_tasks() -> list[Task]:
    return [
        Task(
            name="refund",
            turns=[
                Turn(
                    query="Retour après 40 jours ? 日本",
                    ground_truth="Non.",
                    context="Policy: 30 days.",
                    criteria=[Criterion(name="window", instruction="States 30 days.")],
                )
            ],
            category="edge",
            tags=["refund"],
            metadata={"source": "faq"},
            tool_mocks={},
            evaluators=[EvaluatorRef(name="Similarity", options={"threshold": 4})],
            evaluators_mode="replace",
            extra={"owner": "team-a"},
        ),
        Task(
            name="trip",
            turns=[
                Turn(query="Seattle next week.", ground_truth="Happy to help."),
                Turn(
                    query="Jacket?",
                    evaluators=[EvaluatorRef(name="Groundedness")],
                    criteria=[Criterion(name="c", instruction="Says yes.")],
                    extra={"note": "kept"},
                ),
            ],
            desired_num_turns=4,
            description="multi-turn",
        ),
        Task(name="lonely", turns=[Turn(query="One turn with options", evaluators_mode="replace")]),
    ]


def _comparable(tasks: list[Task]) -> list[dict]:
    return [t.model_dump(exclude={"line", "index"}) for t in tasks]


def test_dump_then_load_gives_equal_tasks(tmp_path):
    tasks = _sample_tasks()
    text = dump_tasks_jsonl(tasks)
    path = tmp_path / "out.jsonl"
    path.write_text(text, encoding="utf-8")
    ds = load_dataset(path)
    assert _comparable(ds.tasks) == _comparable(tasks)
    assert dump_tasks_jsonl(ds.tasks) == text
    unknown = [w for w in ds.warnings if w.message.startswith("unknown key")]
    assert [w.message.split('"')[1] for w in unknown] == ["owner", "note"]
    # desired_num_turns beside scripted turns is kept, and said to be ignored.
    [ignored] = [w for w in ds.warnings if w not in unknown]
    assert ignored.message.startswith("desired_num_turns: ignored: a task with scripted turns")


def test_dump_is_canonical_jsonl(tmp_path):
    text = dump_tasks_jsonl(_sample_tasks())
    lines = text.splitlines()
    assert text.endswith("\n") and len(lines) == 3
    first = json.loads(lines[0])
    assert list(first)[:4] == ["name", "query", "ground_truth", "context"]
    assert "日本" in lines[0]  # ensure_ascii=False
    assert "turns" in json.loads(lines[1]) and "query" not in json.loads(lines[1])
    assert "turns" in json.loads(lines[2])  # its turn carries options a plain query cannot


def test_round_trip_of_real_files(reference, tmp_path):
    src = reference / FOUNDRY_SAMPLE
    first = load_dataset(Path(shutil.copy(src, tmp_path / "q.jsonl")))
    again_path = tmp_path / "again.jsonl"
    again_path.write_text(dump_tasks_jsonl(first.tasks), encoding="utf-8")
    assert _comparable(load_dataset(again_path).tasks) == _comparable(first.tasks)
    m365 = load_dataset(M365_FIXTURES / "samples/multiturn_example.json")
    again_path.write_text(dump_tasks_jsonl(m365.tasks), encoding="utf-8")
    assert _comparable(load_dataset(again_path).tasks) == _comparable(m365.tasks)


def test_jsonl_lines_break_where_splitlines_breaks_them():
    """The loader walks the text a line at a time (no list of every line) and breaks it
    exactly where `str.splitlines` does, U+2028 and a lone CR included."""
    import random

    from agentopt.datasets.jsonl import _lines

    chars = "ab \n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029x{}"
    rng = random.Random(1)
    for _ in range(5_000):
        text = "".join(rng.choice(chars) for _ in range(rng.randint(0, 12)))
        assert list(_lines(text)) == text.splitlines(), repr(text)
