"""`eval generate` end to end over real HTTP: the generator is a local OpenAI-compatible server
(`tests/fake_openai.py`) that answers from each request's structured-output schema and prompt,
like a remote model would. The written suite must then pass `eval validate` and be accepted by
`eval run` as it is."""

from __future__ import annotations

import json
import re
import threading
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agentopt.cli.app import app
from agentopt.core.files.eval_yaml_load import load_eval_config
from agentopt.core.files.rubric import load_rubric
from agentopt.datasets import load_dataset
from agentopt.registry import Registry
from tests.fake_openai import FakeOpenAI, RecordedRequest, Reply, text
from tests.workflows.fake_agent_server import judge_reply, last_user

INSTRUCTION = "A support agent for an online shoe store: refunds, shipping and order status."
AZURE_YAML = """\
name: shoes
services:
  support-agent:
    host: azure.ai.agent
    kind: prompt
    model: gpt-4.1-mini
    instructions: You are the support agent of an online shoe store. Refunds within 30 days.
"""
GOOD, BAD = "GOOD-ANSWER", "BAD-ANSWER"
SUBJECTS = (
    "running shoes", "leather boots", "kids sandals", "hiking trainers", "wool slippers",
    "tennis sneakers", "rain wellies", "dance pumps", "golf spikes", "ski boots",
    "beach flipflops", "work clogs", "football cleats", "yoga socks", "winter mukluks",
)  # fmt: skip
PROBLEMS = ("arrived damaged", "never shipped", "wrong size", "double charged", "late refund")
RUBRIC = [
    {"id": "Policy Accuracy", "description": "States the store's refund window.", "weight": 9},
    {"id": "order_status", "description": "Gives the order's real status.", "weight": 5},
    {"id": "tone", "description": "Polite and calm.", "weight": 3},
    {"id": "next_steps", "description": "Says what the customer does next.", "weight": 4},
]


class ShoeStoreModel:
    """Answers generation, rubric, self-check and judge requests, and plays the agent.

    Every task gets its own subject and problem, so no two are near-duplicates — except the
    one deliberate duplicate (the first core batch repeats its first query) and the one
    deliberate invalid task (the first edge batch has a task with a single criterion).
    """

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.next_subject = 0
        self.kinds: list[str] = []
        self.agent_systems: set[str] = set()

    def __call__(self, req: RecordedRequest) -> Reply | None:
        body = req.body or {}
        kind = ((body.get("response_format") or {}).get("json_schema") or {}).get("name", "")
        with self.lock:
            self.kinds.append(kind or f"agent:{body.get('model')}")
        prompt = last_user(req)
        if kind == "generated_tasks":
            return text(json.dumps({"tasks": self.tasks(prompt)}), usage=(500, 400))
        if kind == "rubric_dimensions":
            return text(json.dumps({"dimensions": RUBRIC}), usage=(400, 150))
        if kind == "answer_pair":
            good = f"{GOOD} Refunds are accepted within 30 days of delivery; I have started one."
            return text(json.dumps({"good": good, "bad": f"{BAD} Not my problem."}))
        if kind == "rubric":
            return text(json.dumps({"dimensions": self.scores(prompt)}), usage=(300, 60))
        if kind == "task_adherence":
            names = re.findall(r"^- name: (\w+)", prompt, flags=re.M)
            verdicts = [{"name": n, "passed": True, "reason": "done"} for n in names]
            return text(json.dumps({"verdicts": verdicts}), usage=(300, 60))
        if kind:
            return judge_reply(req)
        with self.lock:
            self.agent_systems.update(
                m.get("content") or "" for m in body.get("messages", []) if m["role"] == "system"
            )
        return text("Your refund for order 1042 is on its way; expect it within 5 days.")

    def tasks(self, prompt: str) -> list[dict[str, Any]]:
        category = _match(r'of the category "(\w+)"', prompt)
        count = int(_match(r"Write (\d+) test task", prompt))
        top_up = "top-up request" in prompt
        out = []
        for _ in range(count):
            with self.lock:
                n, self.next_subject = self.next_subject, self.next_subject + 1
            subject, problem = SUBJECTS[n % len(SUBJECTS)], PROBLEMS[n % len(PROBLEMS)]
            out.append(
                {
                    "name": f"{category} {subject}",
                    "query": f"My {subject} order #{1000 + n} {problem}, what now?",
                    "ground_truth": f"Offer a refund or replacement for the {subject}.",
                    "category": category,
                    "criteria": [
                        {"name": "offers_fix", "instruction": f"Offers a fix for the {problem}."},
                        {"name": "asks_order", "instruction": "Confirms the order number."},
                    ],
                }
            )
        if category == "core" and not top_up:  # one exact duplicate
            out[-1]["query"] = out[0]["query"]
        if category == "edge" and not top_up:  # one invalid task: a single criterion
            out[-1]["criteria"] = out[-1]["criteria"][:1]
        return out

    def scores(self, prompt: str) -> list[dict[str, Any]]:
        response = prompt.split("The agent's response:")[-1]
        score = 5 if GOOD in response else 1 if BAD in response else 4
        ids = re.findall(r"^- id: (\w+)", prompt, flags=re.M)
        return [{"id": i, "applicable": True, "score": score, "reason": "ok"} for i in ids]


def _match(pattern: str, prompt: str) -> str:
    found = re.search(pattern, prompt)
    assert found, f"{pattern!r} not in the generator prompt"
    return found[1]


def _agentopt(project: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["--no-prompt", "-C", str(project), *args])
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.output


def test_generate_over_http_writes_a_suite_that_validates_and_runs(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = project / "shoes"  # an azd project (its own repository) with a prompt agent
    (project / ".git").mkdir(parents=True)
    (project / "azure.yaml").write_text(AZURE_YAML, encoding="utf-8")
    model = ShoeStoreModel()
    with FakeOpenAI() as srv:
        srv.handler = model
        # A hosted API (the portable schemas; a self-hosted `compat` server gets the bounded
        # ones, tests/workflows/test_generate_schemas.py).
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-e2e")
        monkeypatch.setenv("OPENAI_BASE_URL", srv.base_url)
        code, out = _agentopt(
            project, "eval", "generate", "-g", INSTRUCTION,
            "--eval-model", "openai:gen", "--max-samples", "15",
        )  # fmt: skip
        assert code == 0, out
        # 6 category batches, then one top-up each for core (duplicate) and edge (invalid).
        assert model.kinds.count("generated_tasks") == 8
        assert "Self-check: ✓ good answers outscore poor ones on 2/2 tasks" in out

        name = "support-agent"
        ds_copy = project / "datasets" / f"{name}-eval-seed" / f"{name}-eval-seed.jsonl"
        rubric_copy = project / "evaluators" / f"{name}-quality" / "rubric_dimensions.json"
        code, out = _agentopt(
            project, "eval", "validate", "eval.yaml", str(ds_copy), str(rubric_copy)
        )
        assert code == 0, out
        tasks = load_dataset(ds_copy).tasks
        assert len(tasks) == 15
        assert len({t.query for t in tasks}) == 15
        assert all(2 <= len(t.criteria) <= 4 for t in tasks)
        counts = {c: sum(t.category == c for t in tasks) for c in ("core", "edge", "ambiguous")}
        assert counts == {"core": 3, "edge": 3, "ambiguous": 2}
        dims = load_rubric(rubric_copy)
        assert [d.id for d in dims][:2] == ["policy_accuracy", "order_status"]
        assert dims[-1].id == "general_quality"
        registry = Registry(project)
        assert registry.versions("datasets", f"{name}-eval-seed") == ["1"]
        assert registry.versions("evaluators", f"{name}-quality") == ["1"]
        config, warnings = load_eval_config(project / "eval.yaml")
        assert warnings == [] and config.options.eval_model == "openai:gen"
        assert config.agent is not None and (config.agent.name, config.agent.kind) == (
            "support-agent",
            "prompt",
        )

        before = (project / "eval.yaml").read_bytes()
        asked = len(model.kinds)
        code, out = _agentopt(project, "eval", "run", "--agent-model", "openai:agent")
        assert code == 0, out  # accepted as it is: no bad-input exit (2), no gate
        assert (project / "eval.yaml").read_bytes() == before
        run_calls = model.kinds[asked:]
        assert run_calls.count("agent:agent") == 15
        assert any("online shoe store" in s for s in model.agent_systems)  # azure.yaml's agent
        assert run_calls.count("rubric") == run_calls.count("task_adherence") == 15
    results = json.loads(next((project / ".agentopt" / "runs").glob("*/results.json")).read_text())
    assert len(results["tasks"]) == 15
