"""JUnit XML for CI dashboards: one <testsuite>, one <testcase> per task.

A task's outcome maps one to one, so the suite's counts are the run summary's: `fail` →
<failure>; `partial` (an evaluator could not decide) and `error` (the agent failed) → <error>,
the verdict being unknown (a failing verdict beside an evaluator error is in the message).
Characters XML 1.0 cannot hold (control codes in agent output) are dropped, so the file
always parses.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from agentopt.contracts.run_results import RunResults, TaskOutcome
from agentopt.reports.formatting import findings, fmt_score, utc_iso

__all__ = ["junit_outcome", "render_junit"]

_INVALID_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")
MESSAGE_LIMIT = 500


def _clean(text: str) -> str:
    return _INVALID_XML.sub("", text)


def junit_outcome(task: TaskOutcome) -> str:
    """'passed', 'failure' or 'error' — how the task shows up in JUnit."""
    if task.status == "pass":
        return "passed"
    if task.status == "fail":
        return "failure"
    return "error"


def render_junit(results: RunResults) -> str:
    """The JUnit XML document as a string (UTF-8, with XML declaration)."""
    suite_name = results.title
    default_class = results.run.dataset.name or results.run.name or "agentopt"
    outcomes = [junit_outcome(t) for t in results.tasks]
    root = ET.Element("testsuites", name="agentopt")
    suite = ET.SubElement(
        root,
        "testsuite",
        name=_clean(suite_name),
        tests=str(len(results.tasks)),
        failures=str(outcomes.count("failure")),
        errors=str(outcomes.count("error")),
        skipped="0",
        time=f"{results.summary.duration_s:.3f}",
        timestamp=utc_iso(results.run.started_at),
        id=results.run.id,
    )
    props = ET.SubElement(suite, "properties")
    for key, value in (
        ("run_id", results.run.id),
        ("status", str(results.run.status)),
        ("score", fmt_score(results.summary.score)),
        ("pass_rate", f"{results.summary.pass_rate:.4f}"),
        ("dataset_version", results.run.dataset.version or ""),
        ("agent_model", results.run.models.agent or ""),
        ("judge_model", results.run.models.judge or ""),
        # The run's tally (task runs by outcome, failed calls), as every other view shows it.
        *((f"runs_{key}", str(value)) for key, value in _tally(results)),
    ):
        ET.SubElement(props, "property", name=key, value=_clean(str(value)))

    for task, outcome in zip(results.tasks, outcomes, strict=True):
        case = ET.SubElement(
            suite,
            "testcase",
            classname=_clean(task.category or default_class),
            name=_clean(task.name),
            time=f"{task.latency_s:.3f}",
        )
        if outcome != "passed":
            found = findings(task)
            wanted = "fail" if outcome == "failure" else "error"
            primary = [f for f in found if f.kind == wanted] or found
            message = "; ".join(str(f) for f in primary) or f"status {task.status}"
            element = ET.SubElement(
                case,
                outcome,
                message=_clean(message[:MESSAGE_LIMIT]),
                type=task.error.code if task.error else task.status,
            )
            element.text = _clean("\n".join(str(f) for f in found))
        out = ET.SubElement(case, "system-out")
        out.text = _clean(_transcript(task))
    ET.indent(root)
    body = ET.tostring(root, encoding="unicode")
    return f'<?xml version="1.0" encoding="UTF-8"?>\n{body}\n'


def _tally(results: RunResults) -> list[tuple[str, int]]:
    c = results.summary.counts
    return [
        ("passed", c.passed),
        ("failed", c.failed),
        ("partial", c.partial),
        ("error", c.errors),
        ("failed_calls", c.failed_calls),
    ]


def _transcript(task: TaskOutcome) -> str:
    header = f"status: {task.status}  score: {fmt_score(task.score)}"
    if not task.turns:
        return f"{header}\n{task.response}"
    lines = [header]
    for i, turn in enumerate(task.turns, 1):
        lines.append(f"--- turn {i} ({turn.status})\nuser: {turn.query}\nagent: {turn.response}")
    return "\n".join(lines)
