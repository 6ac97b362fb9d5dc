"""Datasets from traces (spans written by the real opentelemetry-sdk from a small instrumented
agent) and the extension's layout written by `eval init|generate --format azure-eval`, with a
user's comments kept."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from agentopt.core.errors import InputError
from agentopt.core.files.azure_eval_load import load_azure_eval
from agentopt.registry import Registry
from agentopt.workflows.generate.from_traces import mine_traces
from tests.azd_eval.traced_agent import SupportAgent, provider_writing
from tests.azd_eval.world import World, agentopt, serving
from tests.workflows.generate_mock import ScriptedGenerator, generator_fixture  # noqa: F401

KEY = "sk-proj-Zx81mQ4rT6yU2iO9pA3sD5fG7hJ1kL0"


def record(path: Path, fmt: str, turns: list[str], agent: str = "support-agent") -> Path:
    provider, out = provider_writing(path, fmt)
    try:
        bot = SupportAgent(provider, agent)
        for i, text in enumerate(turns):
            bot.ask(text, legacy_events=i % 2 == 1)
    finally:
        provider.shutdown()
        out.close()
    return path


TURNS = [
    "How long do refunds take?",
    "how long do refunds take",  # a near duplicate of the first
    f"My API key {KEY} stopped working, what now?",
    "Can I change my delivery address?",
]


@pytest.mark.parametrize("fmt", ["otlp", "console"])
def test_real_spans_become_tasks_deduplicated_and_masked(tmp_path: Path, fmt: str) -> None:
    traces = record(tmp_path / f"traces.{fmt}.json", fmt, TURNS)
    mined = mine_traces(traces)
    queries = [t["query"] for t in mined.tasks]
    assert queries == [
        "how long do refunds take",
        "My API key *** stopped working, what now?",
        "Can I change my delivery address?",
    ]
    assert KEY in traces.read_text(encoding="utf-8")  # the secret was in the spans
    assert mined.masked == 1 and mined.duplicates >= 1
    assert all(t["metadata"]["agent"] == "support-agent" for t in mined.tasks)
    assert len({t["name"] for t in mined.tasks}) == 3


def test_trace_days_and_max_samples_and_other_agents(tmp_path: Path) -> None:
    folder = tmp_path / "traces"
    folder.mkdir()
    record(folder / "a.json", "otlp", TURNS[:1])
    record(folder / "b.jsonl", "console", ["Where is my parcel?"], agent="billing-agent")
    later = datetime.now(UTC) + timedelta(days=3)
    with pytest.raises(InputError, match="outside the --trace-days window"):
        mine_traces(folder, days=2, now=later)
    assert len(mine_traces(folder, days=7, now=later).tasks) == 2
    only = mine_traces(folder, agent="support-agent")
    assert [t["query"] for t in only.tasks] == ["How long do refunds take?"]
    assert only.other_agents == 1
    capped = mine_traces(folder, max_samples=1)
    assert len(capped.tasks) == 1 and capped.capped == 1


def test_a_malformed_trace_file_names_file_and_line(tmp_path: Path) -> None:
    good = record(tmp_path / "t.json", "otlp", TURNS[:2])
    lines = good.read_text(encoding="utf-8").splitlines()
    bad = tmp_path / "broken.jsonl"
    bad.write_text(lines[0] + "\n" + lines[1][:40] + "\n", encoding="utf-8")
    with pytest.raises(InputError) as err:
        mine_traces(bad)
    [problem] = err.value.problems
    assert problem.file == str(bad) and problem.location == "line 2"
    assert "invalid JSON" in problem.message
    other = tmp_path / "other.json"
    other.write_text('{"hello": 1}\n', encoding="utf-8")
    with pytest.raises(InputError, match="expected OTLP JSON"):
        mine_traces(other)


PROJECT = """\
# Contoso support (hand-written)
name: contoso
services:
  ai-project:
    host: azure.ai.project   # the Foundry project
  support-agent:
    host: azure.ai.agent
    kind: prompt
    model: gpt-4.1-mini
    instructions: You answer Contoso support questions.
"""


def test_init_writes_the_layout_and_generate_fills_it_from_traces(tmp_path: Path) -> None:
    root = tmp_path / "app"
    (root / ".git").mkdir(parents=True)
    (root / "azure.yaml").write_text(PROJECT, encoding="utf-8")
    traces = record(tmp_path / "traces.json", "otlp", TURNS)
    with serving(World()) as env:
        code, out = agentopt(
            root, env, "eval", "init", "--format", "azure-eval", "--eval-model", "gpt-4.1-nano"
        )
        assert code == 0, out
        config = root / "evals" / "azure.eval.yaml"
        azure = (root / "azure.yaml").read_text(encoding="utf-8")
        assert "# the Foundry project" in azure and "$ref: ./evals/azure.eval.yaml" in azure
        assert list(root.glob("azure.yaml.bak.*"))  # backed up before the edit
        file, _ = load_azure_eval(root / "azure.yaml")
        assert [e.name for e in file.evals] == ["support-agent-eval"]
        # the user comments their file; generate must keep it
        text = config.read_text(encoding="utf-8").replace(
            "evals:\n", "# our release gate\nevals:\n"
        )
        config.write_text(text.replace("turn\n", "turn  # per row\n", 1), encoding="utf-8")
        code, out = agentopt(
            root, env, "eval", "generate", "--format", "azure-eval", "--from-traces", str(traces)
        )
        assert code == 0, out
        kept = config.read_text(encoding="utf-8")
        assert "# our release gate" in kept and "turn  # per row" in kept
        rows = (root / "evals" / "datasets" / "support-agent-dataset.jsonl").read_text()
        assert KEY not in rows and "***" in rows
        assert Registry(root).latest("datasets", "support-agent-dataset") == "1"
        code, out = agentopt(root, env, "eval", "run", "--eval", "support-agent-eval")
    assert code == 0, out
    results = json.loads(next((root / ".agentopt" / "runs").glob("*/results.json")).read_text())
    assert results["summary"]["runs"] == 3


def test_generate_from_traces_registers_an_eval_yaml_dataset(
    tmp_path: Path, generator: Callable[..., ScriptedGenerator]
) -> None:
    """The eval.yaml flow: the mined rows are imported and registered like any dataset
    `eval generate --dataset` imports; the rubric is generated as usual."""
    gen = generator()
    root = tmp_path / "app"
    (root / ".git").mkdir(parents=True)
    (root / "azure.yaml").write_text(PROJECT, encoding="utf-8")
    traces = record(tmp_path / "traces.json", "console", TURNS)
    with serving(World()) as env:
        code, out = agentopt(
            root, env, "eval", "generate", "--from-traces", str(traces), "--trace-days", "1",
            "--max-samples", "2", "-g", "Contoso support", "--eval-model", gen.model,
        )  # fmt: skip
    assert code == 0, out
    assert "2 tasks from 6 user turns" in " ".join(out.split())  # 4 asks, 2 also as events
    path = root / "datasets" / "support-agent-traces" / "support-agent-traces.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert [r["query"] for r in rows] == [
        "My API key *** stopped working, what now?",
        "Can I change my delivery address?",
    ]
    registry = Registry(root)
    [name] = registry.names("datasets")
    registered = registry.lookup("datasets", name).read_text(encoding="utf-8")
    assert "Can I change my delivery address?" in registered and KEY not in registered
