"""Bracket depths in JSON text (core/json_scan.py): brackets inside strings, escaped quotes
included, never count."""

from __future__ import annotations

from agentopt.core.json_scan import bracket_depths


def test_depths_follow_the_brackets_outside_strings() -> None:
    text = '{"a": [1, {"b": "]}"}], "c": "\\"{["}'
    depths = list(bracket_depths(text))
    assert [text[i] for i, _ in depths] == ["{", "[", "{", "}", "]", "}"]
    assert [d for _, d in depths] == [1, 2, 3, 2, 1, 0]


def test_only_the_named_pairs_count_from_the_start_given() -> None:
    text = 'x [{"k": "}"}, {}]'
    assert list(bracket_depths(text, 3, "{}")) == [(3, 1), (12, 0), (15, 1), (16, 0)]
