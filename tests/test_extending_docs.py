"""docs/extending.md's four examples work as written: its code blocks are installed as a package
(a real `.dist-info` with the entry points of its pyproject.toml block, on PYTHONPATH) and
`agentopt eval run` / `agentopt optimize` run on them in a fresh interpreter, which finds them
through the entry points the way it would find any installed plugin."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

from agentopt.contracts import load_job, load_results
from tests.docs.console import blocks

DOC = Path(__file__).parents[1] / "docs" / "extending.md"
BLOCK = re.compile(r"```(\w+) title=(\S+)\n(.*?)```", re.S)


def doc_files() -> dict[str, str]:
    return {name: body for _lang, name, body in BLOCK.findall(DOC.read_text(encoding="utf-8"))}


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The doc's package, installed: its modules plus a dist-info holding its entry points."""
    root = tmp_path_factory.mktemp("site")
    files = doc_files()
    project = tomllib.loads(files.pop("pyproject.toml"))["project"]
    for name, body in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(body, encoding="utf-8")
    info = root / f"acme_agentopt-{project['version']}.dist-info"
    info.mkdir()
    meta = f"Metadata-Version: 2.1\nName: {project['name']}\nVersion: {project['version']}\n"
    (info / "METADATA").write_text(meta, encoding="utf-8")
    groups = project["entry-points"]
    text = "".join(
        f"[{group}]\n" + "".join(f"{k} = {v}\n" for k, v in eps.items()) + "\n"
        for group, eps in groups.items()
    )
    (info / "entry_points.txt").write_text(text, encoding="utf-8")
    return root


def agentopt(site: Path, project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), *sys.path])}
    for key in ("OPENAI_API_KEY", "AZURE_OPENAI_ENDPOINT", "FOUNDRY_PROJECT_ENDPOINT"):
        env.pop(key, None)
    return subprocess.run(
        [sys.executable, "-m", "agentopt", "-C", str(project), "--no-prompt", *args],
        capture_output=True,
        text=True,
        timeout=240,
        env=env,
    )


def write_jsonl(path: Path, rows: list[dict[str, object]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def test_the_doc_has_the_four_examples_and_their_entry_points() -> None:
    files = doc_files()
    groups = tomllib.loads(files["pyproject.toml"])["project"]["entry-points"]
    assert sorted(groups) == [
        "agentopt.evaluators",
        "agentopt.providers",
        "agentopt.strategies",
        "agentopt.targets",
    ]
    modules = {v for eps in groups.values() for v in eps.values()}
    assert {f"{m.replace('.', '/')}.py" for m in modules} <= set(files)


def test_the_target_and_the_evaluator_in_an_eval_run(site: Path, tmp_path: Path) -> None:
    faq = {
        "reset password": "Use the Forgot password link on the sign-in page.",
        "opening hours": "Nine to five.",
    }
    (tmp_path / "faq.json").write_text(json.dumps(faq), encoding="utf-8")
    questions = ["How do I reset my password?", "What are your opening hours?", "A joke?"]
    write_jsonl(
        tmp_path / "tasks.jsonl", [{"name": f"q{i}", "query": q} for i, q in enumerate(questions)]
    )
    config = {
        "agent": {"name": "helpdesk", "target": "faq"},
        "dataset": {"local_uri": "tasks.jsonl"},
        "evaluators": [{"name": "MaxWords", "initialization_parameters": {"max_words": 5}}],
    }
    (tmp_path / "eval.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    proc = agentopt(site, tmp_path, "eval", "run")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    results = load_results(next((tmp_path / ".agentopt" / "runs").glob("*/results.json")))
    assert results.run.agent.target == "faq"
    assert [t.response for t in results.tasks] == [*faq.values(), "I don't know."]
    assert [t.status for t in results.tasks] == ["fail", "pass", "pass"]
    verdict = results.tasks[0].evaluators[0]
    assert verdict.evaluator == "acme.max_words" and "9 words" in verdict.reason


def test_an_unknown_target_lists_the_plugin(site: Path, tmp_path: Path) -> None:
    config = {"agent": {"name": "helpdesk", "target": "fqa"}}
    (tmp_path / "eval.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    proc = agentopt(site, tmp_path, "eval", "run")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    expected = 'expected one of local, hosted, endpoint, command, foundry or faq, found "fqa"'
    assert expected in " ".join((proc.stdout + proc.stderr).split())


def acme_project(tmp_path: Path) -> None:
    """A suite on the doc's provider, scored by its evaluator (4 words at most)."""
    base = tmp_path / ".agent_configs" / "baseline"
    base.mkdir(parents=True)
    (base / "instructions.md").write_text("You are Acme's assistant.\n", encoding="utf-8")
    meta = {"model": "brief:echo", "instruction_file": "instructions.md"}
    (base / "metadata.yaml").write_text(yaml.safe_dump(meta), encoding="utf-8")

    def rows(prefix: str, n: int) -> list[dict[str, object]]:
        return [
            {"name": f"{prefix}{i}", "query": f"please tell me about item number {i} today"}
            for i in range(n)
        ]

    write_jsonl(tmp_path / "data" / "train.jsonl", rows("train", 4))
    write_jsonl(tmp_path / "data" / "val.jsonl", rows("val", 3))
    config = {
        "agent": {"name": "acme", "config": ".agent_configs/baseline/metadata.yaml"},
        "dataset": {"local_uri": "data/train.jsonl"},
        "validation_dataset": {"local_uri": "data/val.jsonl"},
        "evaluators": [{"name": "acme.max_words", "initialization_parameters": {"max_words": 4}}],
        "options": {"eval_model": "brief:judge", "max_concurrent_agent_runs": 1},
    }
    (tmp_path / "eval.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")


@pytest.mark.slow
def test_the_provider_and_the_strategy_in_an_optimize_job(site: Path, tmp_path: Path) -> None:
    acme_project(tmp_path)
    proc = agentopt(
        site, tmp_path, "optimize", "--targets", "instructions", "--max-candidates", "1"
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    job = load_job(next((tmp_path / ".agentopt" / "optimize").glob("*/job.json")))
    assert job.outcome == "improved" and job.best == "cand_01"
    best = job.candidate("cand_01")
    assert best is not None and best.strategy == "brevity"
    assert best.mutation == {"rule": "Answer in at most 4 words."}
    assert job.baseline is not None and job.baseline.validation is not None
    assert best.validation is not None and best.validation.score == 1.0
    assert job.baseline.validation.score is not None and job.baseline.validation.score < 1.0


@pytest.mark.slow
def test_the_trying_it_commands_run_as_shown(site: Path, tmp_path: Path) -> None:
    """The doc's console block (marked as an illustration for tests/docs, which has no plugin
    installed) runs here, command by command, with the plugin installed."""
    [block] = [b for b in blocks(DOC) if b.commands and b.commands[0].is_agentopt]
    acme_project(tmp_path)
    for command in block.commands:
        proc = agentopt(site, tmp_path, *command.argv)
        assert proc.returncode == 0, f"{command.argv}\n{proc.stdout}{proc.stderr}"
    runs = sorted((tmp_path / ".agentopt" / "runs").glob("*/results.json"))
    assert load_results(runs[0]).tasks[0].evaluators[0].evaluator == "acme.max_words"
    job = load_job(next((tmp_path / ".agentopt" / "optimize").glob("*/job.json")))
    assert [c.strategy for c in job.candidates if c.id != "baseline"] == ["brevity"]
