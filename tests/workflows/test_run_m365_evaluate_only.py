"""`eval run --evaluate-only` as runevals does it, on upstream's own
`scenarios-with-mixed-errors.json`: what the document captured is an input, never replaced.

The fake judge replays the verdicts the document recorded (the captured 1–5 scores, and a
refused request where an evaluator had errored), so every status agentopt computes can be
compared with the captured one; it also counts what it was asked, so a failed or skipped turn
that reached a judge would show."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from agentopt.cli.app import app
from tests.conftest import M365_FIXTURES
from tests.fake_openai import FakeOpenAI, RecordedRequest, Reply, error, text
from tests.m365_output_check import validate_output

runner = CliRunner()
MIXED = M365_FIXTURES / "schema" / "v1" / "examples" / "valid" / "scenarios-with-mixed-errors.json"
RESPONSE_HEADING = "The agent's response:"


def cli(project: Path, *args: str) -> tuple[int, str]:
    result = runner.invoke(app, ["-C", str(project), "--no-prompt", "eval", "run", *args])
    return result.exit_code, result.output


def turns_of(item: dict[str, Any]) -> list[dict[str, Any]]:
    turns: list[dict[str, Any]] = item.get("turns", [item])
    return turns


class ReplayJudge:
    """Answers each judge request with the verdict the document captured for that answer."""

    def __init__(self, document: dict[str, Any]) -> None:
        self.verdicts: dict[tuple[str, str], dict[str, Any]] = {}
        for item in document["items"]:
            for turn in turns_of(item):
                for key, entry in (turn.get("scores") or {}).items():
                    self.verdicts[(turn["response"], key)] = entry
        self.judged: list[tuple[str, str]] = []

    def __call__(self, req: RecordedRequest) -> Reply:
        user = req.body["messages"][-1]["content"]
        kind = "relevance" if "RELEVANCE" in user.split("\n", 1)[0] else "coherence"
        answered = user.rsplit(RESPONSE_HEADING, 1)[1]
        # the longest captured answer inside the response block (a shorter one may be part of it)
        response = max((r for r, k in self.verdicts if k == kind and r and r in answered), key=len)
        self.judged.append((response, kind))
        entry = self.verdicts[(response, kind)]
        if entry["result"] == "error":
            return error(400, "the content filter blocked this request", code="content_filter")
        return text(json.dumps({"reason": "replayed", "score": int(entry["score"])}))


def test_mixed_errors_keep_every_captured_status_and_judge_no_failed_turn(project: Path) -> None:
    shutil.copy(MIXED, project / "evals.json")
    document = json.loads(MIXED.read_text())
    judge = ReplayJudge(document)
    with FakeOpenAI(schemas="any") as srv:
        srv.handler = judge
        code, out = cli(
            project, "--evaluate-only", "--prompts-file", "evals.json",
            "--eval-model", f"compat:judge@{srv.base_url}", "--output", "filled.json",
            "--max-errors", "100",
        )  # fmt: skip
        requests = len(srv.chat_requests)
    assert code == 0, out
    filled = json.loads((project / "filled.json").read_text())
    validate_output(filled)

    for source, output in zip(document["items"], filled["items"], strict=True):
        if "turns" in source:
            assert output["summary"] == source["summary"]
        else:
            assert output["status"] == source["status"], source["extensions"]["scenario"]
        for before, after in zip(turns_of(source), turns_of(output), strict=True):
            assert after["status"] == before["status"], before["prompt"]
            assert after.get("error", {}).get("code") == before.get("error", {}).get("code")
            assert set(after["scores"]) == set(before["scores"])
            if before["status"] == "error":  # the captured failure, word for word
                assert after["error"] == before["error"] and after["response"] == ""

    # Judged: every evaluator of every answered turn, once; never a failed or skipped turn.
    answered = [t for item in document["items"] for t in turns_of(item) if t["status"] != "error"]
    expected = [(t["response"], kind) for t in answered for kind in ("relevance", "coherence")]
    assert requests == len(judge.judged) == 18  # 9 answered turns × 2
    assert sorted(judge.judged) == sorted(expected)
    [run] = (project / ".agentopt" / "runs").iterdir()
    usage = json.loads((run / "results.json").read_text())["summary"]["usage"]
    assert usage["agent"]["calls"] == 0  # nothing was asked of an agent
    assert usage["judge"]["calls"] == 18 - 4  # the 4 the judge refused are errors, not calls


def test_a_turn_after_a_captured_failure_needs_no_response(project: Path) -> None:
    """A thread captured up to its failure: the turns after it have no record of their own
    and are skipped, naming the captured failure; nothing is refused and nothing judged."""
    document = {
        "schemaVersion": "1.10.0",
        "items": [
            {
                "turns": [
                    {
                        "prompt": "first",
                        "response": "",
                        "status": "error",
                        "error": {"code": "agentTimeout", "message": "timed out after 300 s"},
                    },
                    {"prompt": "second"},
                ]
            }
        ],
    }
    (project / "evals.json").write_text(json.dumps(document))
    with FakeOpenAI(schemas="any") as srv:
        code, out = cli(
            project, "--evaluate-only", "--prompts-file", "evals.json",
            "--eval-model", f"compat:judge@{srv.base_url}", "--output", "filled.json",
            "--max-errors", "5",
        )  # fmt: skip
        assert srv.chat_requests == []
    assert code == 0, out
    filled = json.loads((project / "filled.json").read_text())
    validate_output(filled)
    first, second = filled["items"][0]["turns"]
    assert first["error"] == {"code": "agentTimeout", "message": "timed out after 300 s"}
    assert second["status"] == "error" and second["error"]["code"] == "turnSkipped"
    assert filled["items"][0]["summary"]["overall_status"] == "error"
