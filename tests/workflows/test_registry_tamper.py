"""The tampering scenario of issue 16, through the CLI: a registered version edited by hand
stops `eval run`; `eval update` registers the edit; reverting reuses the first version."""

from __future__ import annotations

import json
from pathlib import Path

from agentopt.core.files.eval_yaml_load import load_eval_config
from agentopt.registry import Registry
from tests.workflows.generate_mock import generator_fixture  # noqa: F401
from tests.workflows.test_update import _cli, _dataset, suite  # noqa: F401

NAME = "shop-eval-seed"


def _pinned(project: Path) -> str | None:
    config, _ = load_eval_config(project / "eval.yaml")
    assert config.dataset is not None
    return config.dataset.version


def test_tampering_is_noticed_registered_and_reverting_reuses_v1(suite: Path) -> None:  # noqa: F811
    registry = Registry(suite)
    registered = registry.lookup("datasets", NAME, "1")
    original = registered.read_bytes()
    with registered.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps({"name": "sneaky", "query": "Is this tracked?"}) + "\n")

    code, out = _cli(suite, "run", "--agent-model", "mock:echo", "--dry-run")
    assert code == 2, out
    assert f"{NAME}.v1.jsonl" in out and "edited by hand" in out
    assert "agentopt eval update" in " ".join(out.split())

    code, out = _cli(suite, "update")
    assert code == 0, out
    assert f"✓ Dataset {NAME} → version 2" in out
    assert "edited by hand" in out and "backup:" in out
    assert registry.versions("datasets", NAME) == ["1", "2"]
    assert _pinned(suite) == "2"
    v2 = registry.lookup("datasets", NAME, "2").read_bytes()
    assert b"sneaky" in v2 and _dataset(suite).read_bytes() == v2  # the copy follows the pin
    backups = list(_dataset(suite).parent.glob("*.bak.*"))
    assert [b.read_bytes() for b in backups] == [original]  # nothing lost
    assert registered.read_bytes() != original  # and nothing restored silently
    code, out = _cli(suite, "run", "--agent-model", "mock:echo", "--dry-run")
    assert code == 0, out  # the pinned version is intact

    _dataset(suite).write_bytes(original)  # revert the working copy to the first content
    code, out = _cli(suite, "update")
    assert code == 0, out
    assert f"✓ Dataset {NAME} → version 1" in out
    assert _pinned(suite) == "1"
    assert registry.versions("datasets", NAME) == ["1", "2"]  # no version 3
    assert not (registry.root / "datasets" / f"{NAME}.v3.jsonl").exists()
    assert registered.read_bytes() == original  # rewritten with exactly its recorded content
    assert "holds its registered content again" in out
    assert registry.verify() == []


def test_a_registry_only_suite_takes_the_edited_file_as_the_edit(suite: Path) -> None:  # noqa: F811
    """eval.yaml names the dataset by name and version only (no working copy)."""
    path = suite / "eval.yaml"
    text = path.read_text().replace(
        "  local_uri: datasets/shop-eval-seed/shop-eval-seed.jsonl\n", ""
    )
    path.write_text(text, encoding="utf-8")
    registered = Registry(suite).lookup("datasets", NAME, "1")
    with registered.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps({"name": "more", "query": "One more?"}) + "\n")
    code, out = _cli(suite, "run", "--agent-model", "mock:echo", "--dry-run")
    assert code == 2 and "edited by hand" in out
    code, out = _cli(suite, "update", "--dataset-only")
    assert code == 0, out
    assert f"✓ Dataset {NAME} → version 2" in out and _pinned(suite) == "2"
    code, out = _cli(suite, "run", "--agent-model", "mock:echo", "--dry-run")
    assert code == 0, out
