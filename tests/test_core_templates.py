"""The compiled-template cache: a second process renders from it without compiling, and no
state of the cache (damaged, unwritable, stale, switched off) changes what a template says."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from jinja2 import Environment, FileSystemLoader, StrictUndefined

from agentopt.core.templates import ENVIRONMENT_OPTIONS, compiled_template_cache


def _env(folder: Path, cache: Path) -> Environment:
    return Environment(
        loader=FileSystemLoader(str(folder)),
        undefined=StrictUndefined,
        bytecode_cache=compiled_template_cache(cache),
        **ENVIRONMENT_OPTIONS,
    )


@pytest.fixture
def writes_allowed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", False)  # this machine sets it


GREET = "Hello {{ name }}!\n{% if loud %}LOUD{% endif %}\n"


def _template(folder: Path, text: str = GREET) -> None:
    folder.mkdir(exist_ok=True)
    (folder / "greet.j2").write_text(text, encoding="utf-8")


def test_a_second_environment_renders_from_the_cache_without_compiling(
    tmp_path: Path, writes_allowed: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    _template(tmp_path / "t")
    cache = tmp_path / "t" / "__pycache__"
    first = _env(tmp_path / "t", cache).get_template("greet.j2").render(name="Ada", loud=True)
    assert first == "Hello Ada!\nLOUD"
    assert len(list(cache.glob("jinja2-*.cache"))) == 1

    def no_parse(*args: object, **kwargs: object) -> None:
        raise AssertionError("compiled again")

    monkeypatch.setattr(Environment, "_parse", no_parse)
    second = _env(tmp_path / "t", cache).get_template("greet.j2").render(name="Ada", loud=True)
    assert second == first


@pytest.mark.parametrize(
    "damage",
    [b"", b"j2", b"\x00" * 64, b"garbage that is not a cache entry", None],
    ids=["empty", "magic-only", "zeros", "text", "truncated"],
)
def test_a_damaged_cache_entry_is_compiled_again(
    tmp_path: Path, writes_allowed: None, damage: bytes | None
) -> None:
    _template(tmp_path / "t")
    cache = tmp_path / "t" / "__pycache__"
    _env(tmp_path / "t", cache).get_template("greet.j2").render(name="x", loud=False)
    (entry,) = cache.glob("jinja2-*.cache")
    data = entry.read_bytes()
    entry.write_bytes(data[: len(data) // 2] if damage is None else damage)
    text = _env(tmp_path / "t", cache).get_template("greet.j2").render(name="Bo", loud=False)
    assert text == "Hello Bo!\n"


def test_an_edited_template_is_not_served_from_the_cache(
    tmp_path: Path, writes_allowed: None
) -> None:
    _template(tmp_path / "t")
    cache = tmp_path / "t" / "__pycache__"
    _env(tmp_path / "t", cache).get_template("greet.j2").render(name="x", loud=False)
    _template(tmp_path / "t", "Goodbye {{ name }}.")
    assert _env(tmp_path / "t", cache).get_template("greet.j2").render(name="Cy") == "Goodbye Cy."


def test_a_cache_that_cannot_be_written_leaves_rendering_as_it_was(
    tmp_path: Path, writes_allowed: None
) -> None:
    _template(tmp_path / "t")
    blocked = tmp_path / "t" / "__pycache__"
    blocked.write_text("a file where the cache folder would go", encoding="utf-8")
    text = _env(tmp_path / "t", blocked).get_template("greet.j2").render(name="Di", loud=True)
    assert text == "Hello Di!\nLOUD"
    assert blocked.read_text(encoding="utf-8").startswith("a file")


def test_nothing_is_written_where_python_would_not_write_bytecode(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    _template(tmp_path / "t")
    cache = tmp_path / "t" / "__pycache__"
    text = _env(tmp_path / "t", cache).get_template("greet.j2").render(name="Ed", loud=False)
    assert text == "Hello Ed!\n"
    assert not cache.exists()
