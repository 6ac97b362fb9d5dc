"""Aliases in YAML files: shared values load, a file that expands past the value cap is
refused by its size on paper, before any of the expansion is built."""

from __future__ import annotations

import tracemalloc

import pytest

from agentopt.core.errors import InputError
from agentopt.core.files.yaml_source import parse_yaml
from tests.fuzz.inputs import BILLION_LAUGHS

LAUGHS = BILLION_LAUGHS


def test_a_billion_laughs_is_refused_without_building_it() -> None:
    tracemalloc.start()
    try:
        with pytest.raises(InputError) as err:
            parse_yaml(LAUGHS, "laughs.yaml")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert "expands to more than 100000 values" in str(err.value)
    assert "laughs.yaml" in str(err.value)
    # 9**9 values would be gigabytes; even the first 100,000 would be several MB.
    assert peak < 2_000_000


def test_shared_values_under_the_cap_load_as_copies() -> None:
    text = (
        "base: &b {model: m, temperature: 0}\none: *b\ntwo: *b\nlist: &l [*b, *b]\nmore: [*l, *l]\n"
    )
    data, _lines = parse_yaml(text, "ok.yaml")
    assert data["one"] == data["two"] == {"model": "m", "temperature": 0}
    assert data["more"] == [[data["base"]] * 2] * 2
