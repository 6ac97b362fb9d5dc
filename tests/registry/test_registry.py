"""The local registry: versions by content hash, immutable files, an index that survives a
crash at any point."""

from __future__ import annotations

import json
import multiprocessing
from pathlib import Path

import pytest

from agentopt.core.errors import ConfigError, InputError
from agentopt.core.files.evaluator_yaml import EvaluatorSpec, RubricDefinition, load_evaluator_yaml
from agentopt.core.files.rubric import RubricDimension
from agentopt.registry import (
    Registry,
    dataset_copy_path,
    dataset_sha256,
    default_dataset_name,
    default_evaluator_name,
    rubric_copy_path,
)

V1 = b'{"name": "t1", "query": "hi"}\n'
V2 = b'{"name": "t1", "query": "hello"}\n'


def _rubric(weight: int = 5) -> EvaluatorSpec:
    return EvaluatorSpec(
        name="placeholder",
        type="rubric",
        description="Quality.",
        threshold=0.5,
        definition=RubricDefinition(
            dimensions=[RubricDimension(id="tone", description="Polite.", weight=weight)]
        ),
    )


def test_dataset_versions_only_when_content_changes(tmp_path: Path) -> None:
    reg = Registry(tmp_path)
    assert reg.latest("datasets", "seed") is None
    assert reg.register_dataset("seed", V1, {"kind": "generated"}) == ("1", True)
    assert reg.register_dataset("seed", V1, {"kind": "edited"}) == ("1", False)
    version, changed = reg.register_dataset("seed", V2, {"kind": "edited"})
    assert (version, changed) == ("2", True)
    assert reg.versions("datasets", "seed") == ["1", "2"]
    assert reg.latest("datasets", "seed") == "2"
    assert reg.next_version("datasets", "seed") == "3"
    path = reg.lookup("datasets", "seed", "1")
    assert path == tmp_path / ".azure/.foundry/datasets/seed.v1.jsonl"
    assert path.read_bytes() == V1
    assert reg.lookup("datasets", "seed").read_bytes() == V2
    index = json.loads((tmp_path / ".azure/.foundry/registry.json").read_text())
    entry = index["datasets"]["seed"]["versions"]["2"]
    assert entry["sha256"] == dataset_sha256(V2, "jsonl") and entry["hashing"] == "canonical-1"
    assert entry["source"] == {"kind": "edited"}
    assert entry["created_at"].endswith("Z")
    assert reg.verify() == []


def test_going_back_to_old_content_reuses_that_version(tmp_path: Path) -> None:
    reg = Registry(tmp_path)
    reg.register_dataset("seed", V1)
    reg.register_dataset("seed", V2)
    assert reg.register_dataset("seed", V1) == ("1", False)  # every version is compared
    assert reg.versions("datasets", "seed") == ["1", "2"]


def test_evaluator_hash_ignores_name_version_time_and_description(tmp_path: Path) -> None:
    reg = Registry(tmp_path)
    assert reg.register_evaluator("agent-quality", _rubric(), {"kind": "generated"}) == ("1", True)
    spec = reg.read_evaluator("agent-quality")
    assert (spec.name, spec.version, spec.source) == ("agent-quality", "1", {"kind": "generated"})
    assert spec.created_at is not None
    # The same rubric again, even with another description: unchanged.
    same = _rubric().model_copy(update={"description": "Reworded."})
    assert reg.register_evaluator("agent-quality", same) == ("1", False)
    # A weight edit: new version; YAML text input works too.
    from agentopt.core.files.evaluator_yaml import dump_evaluator_yaml

    assert reg.register_evaluator("agent-quality", dump_evaluator_yaml(_rubric(7))) == ("2", True)
    v2 = load_evaluator_yaml(reg.lookup("evaluators", "agent-quality", "2"))
    assert isinstance(v2.definition, RubricDefinition)
    assert v2.definition.dimensions[0].weight == 7
    assert reg.verify() == []


def test_crash_between_file_and_index_is_recovered(tmp_path: Path) -> None:
    reg = Registry(tmp_path)
    reg.register_dataset("seed", V1)
    # Simulate a crash: the version file was written (atomically), the index was not.
    orphan = tmp_path / ".azure/.foundry/datasets/seed.v2.jsonl"
    orphan.write_bytes(V2)
    index_before = (tmp_path / ".azure/.foundry/registry.json").read_text()
    reopened = Registry(tmp_path)
    assert reopened.versions("datasets", "seed") == ["1", "2"]
    assert reopened.entry("datasets", "seed", "2").source == {"kind": "recovered"}
    # Reading never rewrites the index...
    assert (tmp_path / ".azure/.foundry/registry.json").read_text() == index_before
    # ...re-registering the same content finds the adopted version and records it,
    assert reopened.register_dataset("seed", V2) == ("2", False)
    assert "seed.v2.jsonl" in (tmp_path / ".azure/.foundry/registry.json").read_text()
    # and new content never overwrites the immutable file.
    assert reopened.register_dataset("seed", b'{"query": "x"}\n') == ("3", True)
    assert orphan.read_bytes() == V2
    assert reopened.verify() == []


def test_leftover_temp_files_and_unparseable_orphans_are_ignored(tmp_path: Path) -> None:
    reg = Registry(tmp_path)
    reg.register_evaluator("q", _rubric())
    folder = tmp_path / ".azure/.foundry/evaluators"
    (folder / ".q.v2.yaml.abc123.tmp").write_text("half", encoding="utf-8")
    (folder / "q.v2.yaml").write_text("name: [broken", encoding="utf-8")
    assert Registry(tmp_path).versions("evaluators", "q") == ["1"]
    # the broken file keeps its number: the next version skips it
    assert reg.register_evaluator("q", _rubric(9)) == ("3", True)


def test_verify_reports_edited_and_missing_files(tmp_path: Path) -> None:
    reg = Registry(tmp_path)
    reg.register_dataset("seed", V1)
    reg.register_dataset("other", V2)
    reg.lookup("datasets", "seed").write_bytes(V2)
    reg.lookup("datasets", "other").unlink()
    found = sorted((Path(p.file).name, p.message) for p in reg.verify())
    assert found == [
        ("other.v1.jsonl", 'missing: registry.json lists it as version 1 of dataset "other"'),
        (
            "seed.v1.jsonl",
            'edited by hand after it was registered as version 1 of dataset "seed": its '
            "content no longer matches the sha256 recorded in registry.json",
        ),
    ]


def test_lookup_errors_list_what_exists(tmp_path: Path) -> None:
    reg = Registry(tmp_path)
    reg.register_dataset("seed", V1)
    with pytest.raises(ConfigError, match=r'no version "9" of seed \(versions: 1\)'):
        reg.lookup("datasets", "seed", "9")
    with pytest.raises(
        ConfigError, match=r'no registered dataset named "nope" \(registered: seed\)'
    ):
        reg.lookup("datasets", "nope")


def test_bad_names_and_empty_content_are_refused(tmp_path: Path) -> None:
    reg = Registry(tmp_path)
    with pytest.raises(InputError, match="registry name"):
        reg.register_dataset("../escape", V1)
    with pytest.raises(InputError, match="empty dataset"):
        reg.register_dataset("seed", b"  \n")


def test_remote_is_recorded(tmp_path: Path) -> None:
    reg = Registry(tmp_path)
    reg.register_dataset("seed", V1)
    reg.set_remote("datasets", "seed", "1", {"endpoint": "https://x", "version": "4"})
    assert Registry(tmp_path).entry("datasets", "seed", "1").remote == {
        "endpoint": "https://x",
        "version": "4",
    }


def test_corrupt_index_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / ".azure/.foundry").mkdir(parents=True)
    (tmp_path / ".azure/.foundry/registry.json").write_text("{oops", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"registry\.json:line 1, column 2: invalid JSON"):
        Registry(tmp_path).latest("datasets", "seed")


def _register_many(args: tuple[str, int]) -> list[str]:
    root, worker = args
    reg = Registry(Path(root))
    return [
        reg.register_dataset("seed", f'{{"query": "w{worker} i{i}"}}\n'.encode())[0]
        for i in range(5)
    ]


def test_concurrent_writers_never_share_a_version(tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(3) as pool:
        results = pool.map(_register_many, [(str(tmp_path), w) for w in range(3)])
    versions = [v for r in results for v in r]
    assert sorted(versions, key=int) == [str(i) for i in range(1, 16)]
    assert Registry(tmp_path).verify() == []


def test_default_names_and_copy_paths(tmp_path: Path) -> None:
    assert default_dataset_name("support-agent") == "support-agent-eval-seed"
    assert default_evaluator_name("Support Agent") == "Support-Agent-quality"
    assert dataset_copy_path(tmp_path, "s") == tmp_path / "datasets/s/s.jsonl"
    assert rubric_copy_path(tmp_path, "q") == tmp_path / "evaluators/q/rubric_dimensions.json"


def test_register_rubric_keeps_description_and_threshold(tmp_path: Path) -> None:
    reg = Registry(tmp_path)
    reg.register_evaluator("q", _rubric().model_copy(update={"threshold": 0.7}))
    dims = [RubricDimension(id="tone", description="Polite.", weight=5)]
    assert reg.register_rubric("q", dims, {"kind": "edited"}) == ("1", False)
    dims[0] = RubricDimension(id="tone", description="Polite.", weight=2)
    assert reg.register_rubric("q", dims, {"kind": "edited"}) == ("2", True)
    spec = reg.read_evaluator("q")
    assert (spec.description, spec.threshold, spec.source) == ("Quality.", 0.7, {"kind": "edited"})
    assert reg.register_rubric("new", dims) == ("1", True)
    assert reg.read_evaluator("new").threshold == 0.5
