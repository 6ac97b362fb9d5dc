"""Seed-dataset generation: count, category spread, validation, de-duplication, top-ups, the
stop message, and reproducibility — through a real call layer and a scripted `mock:` model."""

from __future__ import annotations

import asyncio
import json
import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from agentopt.datasets import load_dataset
from agentopt.models.call import CallLayer, CallSettings
from agentopt.workflows.generate.dataset import (
    DEFAULT_CATEGORIES,
    DatasetSpec,
    GeneratedDataset,
    GenerationShortfall,
    generate_dataset,
    parse_categories,
    spread,
)
from agentopt.workflows.generate.dedupe import Deduper
from agentopt.workflows.generate.prompts import AgentContext
from tests.workflows.generate_mock import ScriptedGenerator, generator_fixture  # noqa: F401

AGENT = AgentContext(instruction="A support agent for an online store that handles refunds.")


def _generate(
    project: Path, gen: ScriptedGenerator, spec: DatasetSpec, *, cache: bool = False
) -> GeneratedDataset:
    async def main() -> GeneratedDataset:
        settings = CallSettings(cache_enabled=cache, max_attempts=1)
        async with CallLayer(project, settings) as layer:
            return await generate_dataset(layer, gen.model, AGENT, spec)

    return asyncio.run(main())


def test_count_is_reached_and_spread_over_the_default_categories(
    project: Path, generator: Callable[..., ScriptedGenerator]
) -> None:
    gen = generator()
    out = _generate(project, gen, DatasetSpec(count=15))
    assert len(out.tasks) == 15
    assert out.category_counts() == {
        "core": 3,
        "edge": 3,
        "out_of_scope": 3,
        "ambiguous": 2,
        "adversarial": 2,
        "multi_step": 2,
    }
    assert len({t.name for t in out.tasks}) == 15
    for task in out.tasks:
        assert 2 <= len(task.criteria) <= 4
        assert all(c.name == c.name.lower() and " " not in c.name for c in task.criteria)
    # One call per category: the structured-output schema pins the category list.
    assert gen.calls("generated_tasks") == 6
    schema = gen.requests[0].response_format["json_schema"]  # type: ignore[index]
    assert schema["strict"] is True
    item = schema["schema"]["properties"]["tasks"]["items"]
    assert item["properties"]["category"]["enum"] == list(DEFAULT_CATEGORIES)


def test_output_loads_with_the_dataset_loader(
    project: Path, generator: Callable[..., ScriptedGenerator]
) -> None:
    out = _generate(project, generator(), DatasetSpec(count=8, multi_turn=2))
    path = project / "tasks.jsonl"
    path.write_text(out.jsonl(), encoding="utf-8")
    loaded = load_dataset(path)
    assert [t.name for t in loaded.tasks] == [t.name for t in out.tasks]
    assert loaded.warnings == []
    threads = [t for t in loaded.tasks if t.is_multi_turn]
    assert len(threads) == 2 and all(len(t.turns) == 2 for t in threads)
    assert loaded.tasks[0].ground_truth is not None  # optional ground truth kept when given


def test_custom_categories_and_multi_turn_counts(
    project: Path, generator: Callable[..., ScriptedGenerator]
) -> None:
    spec = DatasetSpec(count=7, categories=["billing", "returns"], multi_turn=3)
    out = _generate(project, generator(), spec)
    singles = Counter(t.category for t in out.tasks if not t.is_multi_turn)
    threads = Counter(t.category for t in out.tasks if t.is_multi_turn)
    assert singles == {"billing": 2, "returns": 2}
    assert threads == {"billing": 2, "returns": 1}


def test_invalid_and_duplicate_tasks_are_dropped_and_topped_up(
    project: Path, generator: Callable[..., ScriptedGenerator]
) -> None:
    # Every 3rd task has one criterion, every 4th repeats a query exactly, every 5th is a
    # shouted rephrasing of one (same words): all must go, and top-ups must fill the gap.
    gen = generator(invalid_every=3, duplicate_every=4, near_duplicate_every=5)
    out = _generate(project, gen, DatasetSpec(count=12, categories=["core"], batch_size=6))
    assert len(out.tasks) == 12
    stats = out.stats
    assert stats.invalid > 0 and stats.duplicates > 0
    assert stats.rounds > 1 and gen.calls("generated_tasks") == stats.calls
    assert any("criteria" in r for r in stats.reasons)
    queries = [t.query for t in out.tasks]
    normalized = {re.sub(r"\W+", " ", q.lower()).replace(" please", "").strip() for q in queries}
    assert len(normalized) == 12  # no exact or near duplicate slipped through
    # A top-up request lists the accepted tasks so the generator can avoid them.
    later = gen.requests[-1].messages[-1].content or ""
    assert "top-up request" in later and out.tasks[0].query in later


def test_clear_stop_reason_when_the_generator_runs_out_of_ideas(
    project: Path, generator: Callable[..., ScriptedGenerator]
) -> None:
    gen = generator(max_distinct=4)
    with pytest.raises(GenerationShortfall) as info:
        _generate(
            project, gen, DatasetSpec(count=10, categories=["core"], max_rounds=3, batch_size=10)
        )
    message = info.value.message
    assert "only 4 distinct valid tasks of the 10 asked for after 3 rounds" in message
    assert "repeated earlier tasks" in message and "still missing: core 6" in message
    assert info.value.exit_code == 3 and "--max-samples" in (info.value.hint or "")
    assert gen.calls("generated_tasks") == 3


def test_same_seed_same_file_and_the_cache_makes_a_rerun_free(
    project: Path, generator: Callable[..., ScriptedGenerator]
) -> None:
    gen = generator(invalid_every=4)
    first = _generate(project, gen, DatasetSpec(count=9, seed=7), cache=True)
    calls = len(gen.requests)
    again = _generate(project, gen, DatasetSpec(count=9, seed=7), cache=True)
    assert again.jsonl() == first.jsonl()
    assert len(gen.requests) == calls  # every request was a cache hit
    other = _generate(project, gen, DatasetSpec(count=9, seed=8), cache=True)
    assert other.jsonl() != first.jsonl()
    requests = [json.dumps(r.model_dump(), sort_keys=True) for r in gen.requests[:calls]]
    assert len(set(requests)) == calls  # no two calls of one run are the same request


def test_bad_counts_and_categories_are_config_errors(
    project: Path, generator: Callable[..., ScriptedGenerator]
) -> None:
    from agentopt.core.errors import ConfigError

    with pytest.raises(ConfigError, match="multi-turn"):
        _generate(project, generator(), DatasetSpec(count=2, multi_turn=3))
    with pytest.raises(ConfigError, match="--categories"):
        parse_categories(" , ")
    with pytest.raises(ConfigError, match="9lives"):
        parse_categories("core,9lives")
    assert parse_categories("Core, out-of-scope ,core") == ["core", "out_of_scope"]
    assert spread(2, ["a", "b", "c"]) == {"a": 1, "b": 1, "c": 0}


def test_near_duplicates_by_word_overlap() -> None:
    d = Deduper()
    d.add("How do I reset my password?", "reset")
    assert d.check("how can I reset my password") == "reset"
    assert d.check("HOW DO I RESET MY PASSWORD!!") == "reset"
    assert d.check("How do I change my shipping address?") is None


def test_multi_turn_tasks_of_a_conversation_level_suite_are_simulated_user_tasks(
    project: Path, generator: Callable[..., ScriptedGenerator]
) -> None:
    gen = generator()
    out = _generate(project, gen, DatasetSpec(count=6, multi_turn=2, simulated=True))
    assert gen.calls("generated_conversations") == 2 and gen.calls("generated_threads") == 0
    simulated = [t for t in out.tasks if t.goal]
    assert len(simulated) == 2
    for task in simulated:
        assert not task.is_multi_turn  # the simulated user writes the turns after the first
        assert task.persona and task.stop_when and task.query.startswith("I need to send")
        assert len(task.criteria) == 2
    prompt = gen.requests[-1].messages[-1].content or ""
    assert "A simulated user will play each scenario" in prompt
    path = project / "tasks.jsonl"
    path.write_text(out.jsonl(), encoding="utf-8")
    loaded = load_dataset(path)
    assert [t.goal for t in loaded.tasks] == [t.goal for t in out.tasks]
    assert loaded.warnings == []
