"""One small project that makes agentopt write every record it saves: two `eval run`s (one with
`--repeat 2`) and one `optimize` job, on scripted `mock:` models, run through the CLI.

It uses only interfaces that did not move (the CLI app, `register_mock`, `ChatRequest`), so the
same scenario runs on the version that wrote `tests/fixtures/records-e2ad180/` (commit e2ad180,
before the records were typed) and on this one:

    python tests/contracts/records_scenario.py OUT_DIR     # with that version on PYTHONPATH

`test_records_compat.py` runs it again and compares what it writes with those files.
Everything is sequential (concurrency 1, one proposal at a time) so the order of journal lines
is the same on every run.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path
from typing import Any

import yaml
from typer.testing import CliRunner

from agentopt.cli.app import app
from agentopt.core.errors import ModelCallError
from agentopt.models.providers.mock import register_mock, unregister_mock
from agentopt.models.types import ChatRequest, Message, ToolCall

PROJECT_NAME = "shop"
_QUOTED = re.compile(r"'([A-Za-z][A-Za-z0-9 ]{0,40})'")
_RESPONSE = re.compile(r"<response-([0-9a-f]{12})>\n(.*?)\n</response-\1>", re.S)
_CRITERION = re.compile(r"- name: (.+)\n  check: (.+)")

TASKS: list[dict[str, Any]] = [
    {
        "name": "refund-window",
        "query": "Can I return my shoes?",
        "category": "policy",
        "tags": ["smoke"],
        "criteria": [{"name": "window", "instruction": "Mentions the 'refund window'"}],
    },
    {
        "name": "order-status",
        "query": "Where is order A1?",
        "ground_truth": "Order A1 has shipped.",
        "criteria": [{"name": "shipped", "instruction": "Says the order has 'shipped'"}],
    },
    {
        "name": "thread",
        "turns": [
            {"query": "Hello there", "criteria": [{"name": "greets", "instruction": "Says 'Hi'"}]},
            {
                "query": "And how long is shipping?",
                "ground_truth": "Shipping takes 3 days.",
                "criteria": [{"name": "days", "instruction": "Gives '3 days'"}],
            },
        ],
    },
    {
        "name": "agent-down",
        "query": "Please fail now",
        "criteria": [{"name": "any", "instruction": "Answers 'anything'"}],
    },
    {
        "name": "judge-confused",
        "query": "Confuse the judge",
        "ground_truth": "Confuse the judge",
        "criteria": [{"name": "any", "instruction": "Answers 'anything'"}],
    },
    {
        "name": "wobbly",
        "query": "Flip a coin",
        "ground_truth": "heads",
        "criteria": [{"name": "heads", "instruction": "Says 'heads'"}],
    },
]

VALIDATION: list[dict[str, Any]] = [
    {
        "name": f"val-refund-{i}",
        "query": f"Can I return item {i}?",
        "criteria": [{"name": "window", "instruction": "Mentions the 'refund window'"}],
    }
    for i in range(3)
]
TEST: list[dict[str, Any]] = [
    {
        "name": "test-refund",
        "query": "Can I return a gift?",
        "criteria": [{"name": "window", "instruction": "Mentions the 'refund window'"}],
    }
]

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "lookup_order",
            "description": "Find an order by its id.",
            "parameters": {
                "type": "object",
                "properties": {"order_id": {"type": "string"}},
                "required": ["order_id"],
            },
        },
    }
]


def _system(req: ChatRequest) -> str:
    return next((m.content or "" for m in req.messages if m.role == "system"), "")


def _last_user(req: ChatRequest) -> str:
    return next((m.content or "" for m in reversed(req.messages) if m.role == "user"), "")


class Agent:
    """The scripted agent: answers by keyword, calls a tool for orders, fails on request,
    alternates on the coin flip, and repeats every quoted phrase of its instructions (so the
    optimizer's rule proposer can improve it)."""

    def __init__(self) -> None:
        self.flips = 0

    def __call__(self, req: ChatRequest) -> Message | str:
        user = _last_user(req)
        rules = "".join(f" {p}." for p in _QUOTED.findall(_system(req)))
        if "fail" in user:
            raise ModelCallError("the agent's model refused", kind="bad_request", provider="mock")
        if "order" in user:
            if not any(m.role == "tool" for m in req.messages):
                call = {"id": "call_1", "type": "function"}
                call["function"] = {"name": "lookup_order", "arguments": '{"order_id": "A1"}'}
                return Message(role="assistant", tool_calls=[ToolCall.model_validate(call)])
            return "Order A1 has shipped." + rules
        if "coin" in user:
            self.flips += 1
            return ("heads" if self.flips % 2 else "tails") + rules
        if "shipping" in user:
            return "Shipping takes 3 days." + rules
        if "Hello" in user:
            return "Hi, how can I help?" + rules
        if "Confuse" in user:
            return "Confuse the judge"
        return "Refunds within 30 days." + rules


def judge(req: ChatRequest) -> str:
    """Task adherence: a criterion passes when its quoted phrase is in the response; the
    'Confuse the judge' answer gets replies that are not verdicts (judgeParseFailed)."""
    text = "\n".join(m.content or "" for m in req.messages)
    match = _RESPONSE.search(text)
    response = match.group(2) if match else ""
    if "Confuse the judge" in response:
        return "I would rather not say."
    verdicts = []
    for name, check in _CRITERION.findall(text):
        quoted = _QUOTED.search(check)
        phrase = quoted.group(1) if quoted else check
        ok = phrase.lower() in response.lower()
        verdicts.append({"name": name.strip(), "passed": ok, "reason": f"looked for '{phrase}'"})
    return json.dumps({"verdicts": verdicts})


def make_project(root: Path) -> Path:
    """The agent project: baseline config with a mocked tool, a dataset, eval.yaml."""
    project = root / PROJECT_NAME
    base = project / ".agent_configs" / "baseline"
    base.mkdir(parents=True)
    (base / "instructions.md").write_text("You are the shop's assistant.\n", encoding="utf-8")
    (base / "tools.json").write_text(json.dumps(TOOLS, indent=2), encoding="utf-8")
    mocks = {"lookup_order": [{"return": {"order_id": "A1", "status": "shipped"}}]}
    (base / "tool_mocks.json").write_text(json.dumps(mocks), encoding="utf-8")
    meta = {"model": "mock:fx_agent", "instruction_file": "instructions.md"}
    meta["tools_file"] = "tools.json"
    (base / "metadata.yaml").write_text(yaml.safe_dump(meta), encoding="utf-8")
    data = project / "data"
    data.mkdir()
    for name, rows in (("tasks", TASKS), ("validation", VALIDATION), ("test", TEST)):
        lines = [json.dumps(row) for row in rows]
        (data / f"{name}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    config = {
        "name": "shop-suite",
        "agent": {"name": "shop", "config": ".agent_configs/baseline/metadata.yaml"},
        "dataset": {"local_uri": "data/tasks.jsonl"},
        "validation_dataset": {"local_uri": "data/validation.jsonl"},
        "test_dataset": {"local_uri": "data/test.jsonl"},
        "evaluators": ["builtin.task_adherence", "builtin.exact_match"],
        "options": {
            "eval_model": "mock:fx_judge",
            "max_concurrent_agent_runs": 1,
            "judge_concurrency": 1,
        },
    }
    (project / "eval.yaml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return project


def _cli(project: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["-C", str(project), "--no-prompt", *args])
    return result.exit_code, result.output


def run_scenario(root: Path) -> Path:
    """Build the project under `root` and run it; returns the project folder."""
    project = make_project(root)
    register_mock("fx_agent", Agent())
    register_mock("fx_judge", judge)
    try:
        for extra in (["--repeat", "2"], []):
            code, out = _cli(project, "eval", "run", "--max-errors", "100", *extra)
            assert code == 0, out
        code, out = _cli(
            project, "optimize", "--max-candidates", "1", "--max-stalls", "2",
            "--parallel-proposals", "1", "--targets", "instructions", "--seed", "1",
        )  # fmt: skip
        # The scenario's evaluations fail on purpose (missing inputs, a failing agent turn):
        # since issue 14 a job whose decision rests on failed evaluations exits 3.
        assert code == 3, out
    finally:
        unregister_mock("fx_agent")
        unregister_mock("fx_judge")
    return project


def saved_files(project: Path) -> dict[str, Path]:
    """The record files the scenario wrote, by a stable name (each run by its repeat count)."""
    jobs = sorted((project / ".agentopt" / "optimize").iterdir())
    out: dict[str, Path] = {}
    for run in (project / ".agentopt" / "runs").iterdir():
        repeat = json.loads((run / "run.json").read_text(encoding="utf-8"))["repeat"]
        for name in ("run.json", "journal.jsonl", "results.json"):
            out[f"run-repeat{repeat}-{name}"] = run / name
    for name in ("job.json", "journal.jsonl"):
        out[f"optimize-{name}"] = jobs[0] / name
    return out


if __name__ == "__main__":
    target = Path(sys.argv[1])
    work = target / "_work"
    shutil.rmtree(work, ignore_errors=True)
    made = run_scenario(work)
    for stable, path in saved_files(made).items():
        shutil.copy(path, target / stable)
    shutil.rmtree(work)
