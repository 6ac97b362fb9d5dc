"""Registry integrity: every read checks the sha256; canonical hashing of JSON and JSONL;
reverting to an existing version's content reuses it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentopt.core.errors import InputError
from agentopt.core.files.evaluator_yaml import EvaluatorSpec, RubricDefinition
from agentopt.core.files.rubric import RubricDimension
from agentopt.registry import Registry, content_sha256

ROWS = [{"name": "t1", "query": "hi", "ground_truth": "hello"}, {"name": "t2", "query": "bye"}]
JSONL = "".join(json.dumps(r) + "\n" for r in ROWS).encode()


def test_a_registered_file_edited_by_hand_is_refused_naming_it(tmp_path: Path) -> None:
    reg = Registry(tmp_path)
    reg.register_dataset("seed", JSONL)
    path = reg.lookup("datasets", "seed", "1")
    with path.open("a") as fh:
        fh.write(json.dumps({"name": "t3", "query": "extra"}) + "\n")
    with pytest.raises(InputError) as err:
        reg.lookup("datasets", "seed", "1")
    text = str(err.value)
    assert "seed.v1.jsonl" in text and "edited by hand" in text
    assert "agentopt eval update" in (err.value.hint or "")
    assert reg.lookup("datasets", "seed", "1", verify=False) == path
    assert reg.edited_versions("datasets", "seed") == [("1", path)]


def test_an_edited_evaluator_yaml_is_refused(tmp_path: Path) -> None:
    reg = Registry(tmp_path)
    spec = EvaluatorSpec(
        name="q",
        type="rubric",
        threshold=0.5,
        definition=RubricDefinition(
            dimensions=[RubricDimension(id="tone", description="d", weight=5)]
        ),
    )
    reg.register_evaluator("q", spec)
    path = reg.lookup("evaluators", "q")
    path.write_text(path.read_text().replace("weight: 5", "weight: 9"))
    with pytest.raises(InputError, match=r"q\.v1\.yaml"):
        reg.read_evaluator("q")
    path.write_text("not: [valid")  # unparseable is edited too, never a crash
    with pytest.raises(InputError, match="edited by hand"):
        reg.read_evaluator("q")


def test_layout_changes_are_not_new_versions(tmp_path: Path) -> None:
    reg = Registry(tmp_path)
    assert reg.register_dataset("seed", JSONL) == ("1", True)
    spaced = (
        b"\n"
        + "".join(
            json.dumps(r, indent=None, separators=(" , ", " : ")) + "\n\n" for r in ROWS
        ).encode()
    )
    assert reg.register_dataset("seed", spaced) == ("1", False)
    reordered = "".join(json.dumps(dict(reversed(r.items()))) + "\n" for r in ROWS).encode()
    assert reg.register_dataset("seed", reordered) == ("1", False)
    swapped = "".join(json.dumps(r) + "\n" for r in reversed(ROWS)).encode()
    assert reg.register_dataset("seed", swapped) == ("2", True)  # line order is content
    doc = {"schemaVersion": "1.11.0", "items": [{"prompt": "p"}]}
    assert reg.register_dataset("m365", json.dumps(doc).encode(), ext="json") == ("1", True)
    again = json.dumps(doc, indent=4).encode()
    assert reg.register_dataset("m365", again, ext="json") == ("1", False)


def test_versions_registered_before_canonical_hashing_still_verify(tmp_path: Path) -> None:
    reg = Registry(tmp_path)
    reg.register_dataset("old", JSONL)
    index_path = tmp_path / ".azure/.foundry/registry.json"
    index = json.loads(index_path.read_text())
    entry = index["datasets"]["old"]["versions"]["1"]
    del entry["hashing"]
    entry["sha256"] = content_sha256(JSONL)  # what older agentopt recorded: the bytes
    index_path.write_text(json.dumps(index))
    assert reg.verify() == []
    assert reg.register_dataset("old", JSONL) == ("1", False)
    reg.lookup("datasets", "old").write_bytes(JSONL + b"\n")  # bytes schemes see every byte
    assert [p.file for p in reg.verify()] == [str(reg.root / "datasets/old.v1.jsonl")]


def test_registering_a_damaged_versions_own_content_restores_it(tmp_path: Path) -> None:
    reg = Registry(tmp_path)
    reg.register_dataset("seed", JSONL)
    other = JSONL + json.dumps({"name": "t3", "query": "x"}).encode() + b"\n"
    reg.register_dataset("seed", other)
    path = reg.lookup("datasets", "seed", "1")
    path.write_bytes(b'{"name": "tampered", "query": "?"}\n')
    assert reg.register_dataset("seed", JSONL) == ("1", False)
    assert reg.restored == [path] and path.read_bytes() == JSONL
    assert reg.verify() == []
