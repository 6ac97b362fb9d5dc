"""CSV datasets (files.md §4.3): header row, JSON cells, errors naming line and column."""

from __future__ import annotations

import pytest

from agentopt.datasets import Criterion, load_dataset, validate_dataset


def test_csv_with_every_column(write):
    text = (
        "name,prompt,expected_response,category,criteria,tags\n"
        'refund,"Can I return shoes, please?",No.,edge,"[""States the window."", '
        '{""name"": ""tone"", ""instruction"": ""Is polite.""}]","a, b"\n'
        ',"Multi\nline prompt",,,,\n'
    )
    ds = load_dataset(write("tasks.csv", text))
    assert ds.format == "csv"
    first, second = ds.tasks
    assert (first.name, first.query, first.ground_truth, first.category) == (
        "refund",
        "Can I return shoes, please?",
        "No.",
        "edge",
    )
    assert first.criteria == [
        Criterion(name="criterion_1", instruction="States the window."),
        Criterion(name="tone", instruction="Is polite."),
    ]
    assert first.tags == ["a", "b"]
    assert (second.name, second.query, second.ground_truth) == (
        "task_2",
        "Multi\nline prompt",
        None,
    )
    assert (first.line, second.line) == (2, 3)


def test_utf8_bom_and_unicode(write):
    ds = load_dataset(
        write("t.csv", "\ufeffquery,ground_truth\nÇa va ? 日本,très bien 👍\n".encode())
    )
    assert (ds.tasks[0].query, ds.tasks[0].ground_truth) == ("Ça va ? 日本", "très bien 👍")


def test_unknown_column_warns_once_and_is_kept(write):
    ds = load_dataset(write("t.csv", "query,answer\nq1,a1\nq2,a2\n"))
    (warning,) = ds.warnings
    assert warning.location == "line 1, column answer"
    assert 'did you mean "ground_truth"' in warning.message
    assert [t.extra for t in ds.tasks] == [{"answer": "a1"}, {"answer": "a2"}]


CSV_ERRORS = [
    ("query,criteria\nq,not json\n", "line 2, column criteria", ["expected JSON", "invalid JSON"]),
    (
        'query,criteria\nq,"[{""name"": ""x""}]"\n',
        "line 2, column criteria",
        ["[0].instruction", "found nothing"],
    ),
    ('query,criteria\nq,"{}"\n', "line 2, column criteria", ["expected a list", "an empty object"]),
    ("query,ground_truth\n,x\n", "line 2, column query", ["non-empty", "an empty string"]),
    (
        "query,desired_num_turns\nq,many\n",
        "line 2, column desired_num_turns",
        ["whole number", '"many"'],
    ),
    ("query,desired_num_turns\nq,99\n", "line 2, column desired_num_turns", ["1 to 20", "99"]),
    ("query\nq,extra\n", "line 2", ["at most 1 cells", "found 2"]),
    ("name,query\nx,a\nx,b\n", "line 3", ['duplicate name "x"', "line 2"]),
    ("question_text,answer\nq,a\n", "line 1", ['"query"', '"question_text"']),
    ("query,query\nq,q\n", "line 1", ['column "query" appears 2 times']),
]


@pytest.mark.parametrize(("text", "where", "fragments"), CSV_ERRORS)
def test_csv_errors_name_line_and_column(write, load_errors, text, where, fragments):
    path = write("bad.csv", text)
    errors = load_errors(path)
    assert errors[0].location == where
    assert errors[0].file == str(path)
    message = " ".join(e.message for e in errors)
    for fragment in fragments:
        assert fragment in message, f"{fragment!r} not in {message!r}"


@pytest.mark.parametrize("text", ["", "query\n", "query\n\n,\n"])
def test_csv_without_rows(write, load_errors, text):
    (error,) = load_errors(write("empty.csv", text))
    assert "found" in error.message and (
        "empty file" in error.message or "data row" in error.message
    )


def test_csv_validate_collects_all_rows(write):
    problems = validate_dataset(write("t.csv", "query,ground_truth,criteria\n,a,\nq,,[\n"))
    assert [p.location for p in problems] == ["line 2, column query", "line 3, column criteria"]
