"""Progress while a slow model judges or reflects (issue 35 item 3): `eval run` and `optimize`
print, while one slow call is under way, lines that say what is in flight and how fast the
model makes tokens — never a silent minute on a CPU model.

Through the CLI against OpenAI-compatible servers on loopback whose judge (or reflection
model) streams its reply one word at a time (`tests/fake_openai.trickle`). The heartbeat
interval is shortened so a few-second call shows it; what the lines say is what a user sees
after 15 s of a slow call.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentopt.cli.app import app
from agentopt.core import heartbeat
from tests.fake_openai import FakeOpenAI, RecordedRequest, Reply, text, trickle
from tests.optimize.conftest import _QUOTED, make_project, phrase_verdicts, task

WORD_GAP_S = 0.1
"""Seconds between two streamed words: 30 words make a call of about 3 s."""
SLOW_WORDS = " ".join(f"word{i}" for i in range(30))


@pytest.fixture(autouse=True)
def short_heartbeat(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(heartbeat, "HEARTBEAT_S", 0.4)


def lines_with(out: str, *words: str) -> list[str]:
    return [line for line in out.splitlines() if all(w in line for w in words)]


def test_eval_run_shows_judging_and_tokens_per_second_while_a_slow_judge_streams(
    project: Path,
) -> None:
    (project / "tasks.jsonl").write_text(json.dumps({"name": "t0", "query": "hello"}) + "\n")
    verdict = json.dumps({"reason": f"On topic: {SLOW_WORDS}.", "score": 5})
    with FakeOpenAI(schemas="any") as agent, FakeOpenAI(schemas="any") as judge:
        judge.handler = lambda req: trickle(verdict, WORD_GAP_S)
        result = CliRunner().invoke(app, [
            "-C", str(project), "--no-prompt", "eval", "run", "--prompts-file", "tasks.jsonl",
            "--agent-model", f"compat:agent@{agent.base_url}",
            "--eval-model", f"compat:judge@{judge.base_url}", "--evaluator", "Relevance",
        ])  # fmt: skip
        assert judge.chat_requests[0].body.get("stream") is True  # the judge's words trickle in
    assert result.exit_code == 0, result.output
    slow = lines_with(result.output, "still running", "judging 1", "tok/s")
    assert slow, result.output
    # "… 0/1 done, still running · judging 1 · 23 tokens at 9.8 tok/s  pass 0 · …"
    assert "0/1 done" in slow[0] and " tokens at " in slow[0]
    assert "1/1 done" in result.output  # and the verdict came


def test_optimize_shows_reflection_and_tokens_per_second_while_a_slow_model_streams(
    tmp_path: Path,
) -> None:
    phrase = "refund window"
    rows = [task(f"t{i}", phrase) for i in range(9)]

    def answer(req: RecordedRequest) -> Reply:
        messages = req.body["messages"]
        prompt = "\n".join(m.get("content") or "" for m in messages)
        if req.body["model"] == "judge":
            return text(phrase_verdicts(prompt))
        if req.body["model"] == "reflect":
            new = f"Answer briefly. Always mention '{phrase}'."
            return trickle(json.dumps({"instructions": new, "rationale": SLOW_WORDS}), WORD_GAP_S)
        system = messages[0]["content"] if messages[0]["role"] == "system" else ""
        return text("Answer." + "".join(f" {p}." for p in _QUOTED.findall(system)))

    with FakeOpenAI(schemas="any") as srv:
        srv.handler = answer
        project = make_project(
            tmp_path,
            rows,
            model=f"compat:agent@{srv.base_url}",
            options={
                "eval_model": f"compat:judge@{srv.base_url}",
                "optimization_model": f"compat:reflect@{srv.base_url}",
            },
        )
        result = CliRunner().invoke(app, [
            "-C", str(project), "--no-prompt", "optimize", "--targets", "instructions",
            "--max-candidates", "1", "--parallel-proposals", "1", "--seed", "1",
        ])  # fmt: skip
        reflections = [r for r in srv.chat_requests if r.body["model"] == "reflect"]
    assert result.exit_code in (0, 1), result.output
    assert reflections and reflections[0].body.get("stream") is True
    slow = lines_with(result.output, "reflecting with compat:reflect", "still working", "tok/s")
    # "… proposal 1: reflecting with compat:reflect@… (instructions:reflect from baseline)
    #  · 21 tokens at 9.9 tok/s (still working; nothing new for 0s)"
    assert slow, result.output
    assert "instructions:reflect" in slow[0] and " tokens at " in slow[0]
