"""The plugin scan finds what `importlib.metadata.entry_points()` finds, faster: the same
entry points on this interpreter's path, the first distribution of a name winning, and a
path it cannot read as folders handed back to the standard library."""

from __future__ import annotations

from importlib.metadata import entry_points
from pathlib import Path

from agentopt.core.plugins import scan_entry_points


def _dist(root: Path, folder: str, entry_points_txt: str | bytes | None) -> None:
    info = root / folder
    info.mkdir(parents=True)
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {folder.split('-')[0]}\nVersion: 1.0\n", encoding="utf-8"
    )
    if isinstance(entry_points_txt, bytes):
        (info / "entry_points.txt").write_bytes(entry_points_txt)
    elif entry_points_txt is not None:
        (info / "entry_points.txt").write_text(entry_points_txt, encoding="utf-8")


def _triples(eps: list) -> list[tuple[str, str, str]]:
    return sorted((e.group, e.name, e.value) for e in eps)


def test_every_group_on_this_interpreter_matches_the_standard_library() -> None:
    every = entry_points()
    expected = [ep for group in every.groups for ep in every.select(group=group)]
    found = scan_entry_points("")
    assert found is not None
    assert _triples(found) == _triples(expected)
    assert len(found) == len(expected)  # no distribution counted twice


def test_plugins_are_found_and_the_first_distribution_of_a_name_wins(tmp_path: Path) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    _dist(first, "acme_tools-2.0.dist-info", "[agentopt.strategies]\nfast = acme.fast\n")
    _dist(second, "Acme.Tools-1.0.dist-info", "[agentopt.strategies]\nold = acme.old\n")
    _dist(second, "other-1.0.dist-info", "[console_scripts]\nother = other:main\n")
    _dist(second, "eggy-0.1.egg-info", "[agentopt.evaluators]\nacme.len = eggy.len\n")
    _dist(second, "broken-1.0.dist-info", b"[agentopt.targets]\n\xff\xfe not text\n")
    _dist(second, "plain-1.0.dist-info", None)
    path = [str(first), str(tmp_path / "missing"), "__editable__.x.finder.__path_hook__"]
    path.append(str(second))
    found = scan_entry_points("agentopt.", path)
    assert found is not None
    assert _triples(found) == [
        ("agentopt.evaluators", "acme.len", "eggy.len"),
        ("agentopt.strategies", "fast", "acme.fast"),
    ]


def test_a_path_entry_that_is_a_file_hands_the_scan_back(tmp_path: Path) -> None:
    archive = tmp_path / "bundle.zip"
    archive.write_bytes(b"PK\x05\x06" + b"\x00" * 18)
    assert scan_entry_points("agentopt.", [str(archive)]) is None
