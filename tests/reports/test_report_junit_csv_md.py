"""JUnit XML for CI, CSV for spreadsheets, Markdown for PR comments."""

from __future__ import annotations

import csv
import io
import xml.etree.ElementTree as ET
from collections.abc import Callable

from report_fixtures import SCRIPT_RESPONSE, ev, task

from agentopt.reports import RunResults, render_csv, render_junit, render_markdown


def _suite(results: RunResults) -> ET.Element:
    root = ET.fromstring(render_junit(results).encode("utf-8"))
    suite = root.find("testsuite")
    assert suite is not None
    return suite


def test_junit_counts_and_outcomes(mixed: RunResults) -> None:
    suite = _suite(mixed)
    cases = {c.get("name"): c for c in suite.iter("testcase")}
    assert suite.get("tests") == "9" and len(cases) == 9
    # The summary's tally, one to one: fail ×3 → failures; partial ×2 (an evaluator could not
    # decide) + error ×1 (the agent failed) → errors.
    s = mixed.summary
    assert suite.get("failures") == str(s.failed) == "3"
    assert suite.get("errors") == str(s.partial + s.errors) == "3"
    assert suite.get("name") == "nightly"
    props = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert [props[f"runs_{k}"] for k in ("passed", "failed", "partial", "error")] == [
        str(s.passed), str(s.failed), str(s.partial), str(s.errors)
    ]  # fmt: skip

    broken = cases["judge-broken"].find("error")  # partial: a failing verdict beside an error
    assert broken is not None and cases["judge-broken"].find("failure") is None
    assert "coherence: error" in broken.get("message", "")
    assert "relevance: Ignores the refund window" in (broken.text or "")  # listed too
    error = cases["agent-down"].find("error")
    assert error is not None and error.get("type") == "agentRequestFailed"
    assert "HTTP 503" in error.get("message", "")
    assert cases["judge-only-errors"].find("error") is not None
    assert cases["refund-policy"].find("failure") is None
    assert cases["refund-policy"].find("error") is None

    assert cases["refund-policy"].get("time") == "1.000"
    assert cases["refund-policy"].get("classname") == "core"
    assert cases["xss-probe"].get("classname") == "adversarial"
    out = cases["xss-probe"].find("system-out")
    assert out is not None and SCRIPT_RESPONSE in (out.text or "")  # text, safely encoded
    thread_out = cases["trip-thread"].find("system-out")
    assert thread_out is not None and "--- turn 2 (fail)" in (thread_out.text or "")


def test_junit_survives_control_characters(build: Callable[..., RunResults]) -> None:
    results = build(
        [task("ctl\x07name", 0, "fail", [ev("builtin.relevance", "fail", 1, reason="bad\x00")],
              response="beep\x1b[31m red \x0b done", category=None)]
    )  # fmt: skip
    suite = _suite(results)
    case = suite.find("testcase")
    assert case is not None and case.get("name") == "ctlname"
    assert case.get("classname") == "support-eval"  # no category → the dataset
    out = case.find("system-out")
    assert out is not None and "beep[31m red  done" in (out.text or "")


def test_csv_round_trips(mixed: RunResults) -> None:
    rows = list(csv.DictReader(io.StringIO(render_csv(mixed))))
    assert len(rows) == 9
    header = list(rows[0])
    assert header[:4] == ["name", "category", "status", "score"]
    assert {"builtin.relevance", "builtin.coherence", "support-quality"} <= set(header)
    by_name = {r["name"]: r for r in rows}
    assert by_name["refund-policy"]["builtin.relevance"] == "1.0000"
    assert by_name["refund-policy"]["builtin.coherence"] == "0.7500"
    assert by_name["agent-down"]["score"] == ""  # no score, not 0
    assert by_name["agent-down"]["error"] == "agentRequestFailed"
    assert by_name["judge-broken"]["builtin.coherence"] == ""  # errored verdict
    assert by_name["trip-thread"]["builtin.relevance"] == "0.5000"  # mean over turns
    assert by_name["flaky-one"]["flaky"] == "true"
    assert by_name["unicode-ünïcødé 東京"]["response"].startswith("こんにちは")
    assert by_name["xss-probe"]["response"] == SCRIPT_RESPONSE
    assert by_name["refund-policy"]["latency_s"] == "1.000"
    assert by_name["refund-policy"]["input_tokens"] == "100"


def test_csv_neutralizes_formulas_and_truncates(build: Callable[..., RunResults]) -> None:
    results = build(
        [
            task('=HYPERLINK("x")', 0, "pass", [], response="=1+2"),
            task("long", 1, "pass", [], response="word " * 500),
        ]
    )
    rows = list(csv.DictReader(io.StringIO(render_csv(results))))
    assert rows[0]["name"] == '\'=HYPERLINK("x")'
    assert rows[0]["response"] == "'=1+2"
    assert len(rows[1]["response"]) == 500 and rows[1]["response"].endswith("…")


def test_markdown_summary(mixed: RunResults) -> None:
    md = render_markdown(mixed)
    assert md.startswith("### agentopt eval — nightly")
    assert "dataset support-eval v3" in md
    assert "| **0.621** (95% CI 0.520–0.810) | 33.3% | 9 | 3 | 3 | 2 | 1 | 3 | $0.0579 |" in md
    assert "| builtin.relevance | 50.0% | 0.536 | 4 | 3 | 1 |" in md
    assert "| builtin.task\\_adherence | 100.0% | 1.000 | 1 | 0 | 0 |" in md
    assert "Ignores the refund window" in md
    assert "Worst tasks" in md and "**Flaky tasks**" in md
    assert "**Errors:** 3 failed calls (agent 1, evaluator 2) — by kind: agentRequestFailed 1" in md


def test_markdown_escapes_untrusted_text(build: Callable[..., RunResults]) -> None:
    reason = "bad | table <script>x</script> ping @octocat\nnext line"
    results = build([task("t|1", 0, "fail", [ev("builtin.relevance", "fail", 1, reason=reason)])])
    md = render_markdown(results)
    row = next(line for line in md.splitlines() if line.startswith("| t"))
    assert row.startswith("| t\\|1 |")
    assert "<script>" not in md and "&lt;script&gt;" in md
    assert "@octocat" not in md
    assert row.count(" | ") == 3  # the pipe in the reason did not add a column
    assert "next line" in row
