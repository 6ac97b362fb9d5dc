"""Every number agrees everywhere (issue 34): one run with every outcome class and one
optimize job with screened-out, Pareto and winning candidates; every output is parsed — the
terminal (live progress and summary), results.json, HTML, JUnit, CSV, Markdown, the M365
output, `eval list` / `eval show`, the `view` pages, `optimize` and `optimize list / status /
show`, the job's HTML report and `cache stats` — and must say the same counts. The criteria's
words are checked in the terminal, `eval show --task`, the HTML report and `view`.

The run talks to two real OpenAI-compatible servers on loopback (tests/consistency/scenario.py);
the optimize job uses the scripted `mock:` agent and judge of the optimizer tests.
"""

from __future__ import annotations

import csv
import json
import re
import shutil
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agentopt.cli.app import app
from agentopt.cli.view_server import Pages
from agentopt.contracts import load_job, load_results
from tests.consistency.scenario import (
    CRITERIA,
    EXPECTED,
    EXPECTED_CALLS,
    EXPECTED_SKIPPED,
    TASKS,
    agent,
    judge,
    run_args,
    write_project,
)
from tests.fake_openai import FakeOpenAI
from tests.optimize.conftest import Models, make_project, two_phrase_rows

CLASSES = ("pass", "fail", "partial", "error")
TALLY = re.compile(r"pass (\d+) · fail (\d+) · partial (\d+) · error (\d+)")


def cli(project: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["-C", str(project), "--no-prompt", *args])
    return result.exit_code, result.output


def flat(text: str) -> str:
    """Whitespace collapsed: a line rich wrapped at the terminal width reads whole."""
    return " ".join(text.split())


def tally(text: str) -> dict[str, int]:
    """The last `pass N · fail N · partial N · error N` of a text."""
    found = TALLY.findall(flat(text))
    assert found, text
    return dict(zip(CLASSES, map(int, found[-1]), strict=True))


def view(state: Path, path: str) -> str:
    """A page of `agentopt view`, as its server answers GET `path`."""
    status, _, body = Pages(state).get(path, {})
    assert status == 200, body
    return body


def html_cards(html: str) -> dict[str, str]:
    cards = re.findall(r'<div class="v">([^<]*)</div><div class="l">([^<]*)</div>', html)
    return {label: value for value, label in cards}


@pytest.fixture
def run(project: Path) -> dict[str, Any]:
    """The run, played once, with every output written."""
    write_project(project)
    outputs = ("r.html", "r.xml", "r.csv", "r.md", "r.json")
    # Servers of the user's own (llama.cpp-like: any schema), so a run costs nothing.
    with FakeOpenAI(schemas="any") as agent_srv, FakeOpenAI(schemas="any") as judge_srv:
        agent_srv.handler, judge_srv.handler = agent, judge
        code, out = cli(
            project, "eval", "run", *run_args(agent_srv, judge_srv),
            *(arg for o in outputs for arg in ("--output", o)),
        )  # fmt: skip
        assert code == 0, out
        # The same run again: every answered call comes from the cache now.
        again_code, again = cli(project, "eval", "run", *run_args(agent_srv, judge_srv))
        assert again_code == 0, again
        servers = {"agent": agent_srv.base_url, "judge": judge_srv.base_url}
    runs = sorted((project / ".agentopt" / "runs").iterdir())
    return {"out": out, "again": again, "runs": runs, "servers": servers}


def test_one_run_says_the_same_counts_in_every_view(project: Path, run: dict[str, Any]) -> None:
    first = run["runs"][0]
    results = load_results(first / "results.json")
    s = results.summary
    expected = {"pass": s.passed, "fail": s.failed, "partial": s.partial, "error": s.errors}
    assert expected == EXPECTED  # the scenario did produce every class
    assert Counter(t.status for t in results.tasks) == Counter(EXPECTED)  # per-task records
    assert {k: v for k, v in s.errors_by_kind.items() if k != "turnSkipped"} == EXPECTED_CALLS
    calls = sum(EXPECTED_CALLS.values())
    assert (s.counts.failed_calls, s.counts.skipped_turns) == (calls, EXPECTED_SKIPPED)
    assert (s.counts.agent_errors, s.counts.evaluator_errors) == (2, 2)
    runs_line = f"{s.passed}/{len(TASKS)} task runs"

    # Terminal: the last live progress line, then the summary, count the same classes.
    out = run["out"]
    live = [line for line in out.splitlines() if " done " in line]
    assert tally(live[-1]) == expected and f"failed calls {calls}" in live[-1]
    summary = out[out.index("Pass rate") :]
    assert tally(summary) == expected and runs_line in summary
    assert f"Errors: {calls} failed calls (agent 2, evaluator 2)" in flat(out)
    assert "1 turn skipped after a failed turn" in flat(out)

    # results.json written by --output (.json over a JSONL dataset: the same document).
    copy = load_results(project / "r.json")
    assert copy.summary.counts == s.counts

    # HTML: the cards and the task chart, and one row per task with its status.
    html = (project / "r.html").read_text()
    cards = html_cards(html)
    assert cards[f"pass rate · {runs_line}"] == "28.6%"
    assert cards["fail / partial / error"] == f"{s.failed} / {s.partial} / {s.errors}"
    assert cards[
        f"errors: failed calls · agent 2 · evaluator 2 · {EXPECTED_SKIPPED} turn skipped"
    ] == str(calls)
    assert tally(re.findall(r'class="counts">([^<]*)', html)[-1]) == expected
    assert Counter(re.findall(r'<tbody class="task"[^>]*data-status="(\w+)"', html)) == Counter(
        EXPECTED
    )

    # JUnit: failures are the fail class, errors the partial and error classes.
    suite = ET.parse(project / "r.xml").getroot().find("testsuite")
    assert suite is not None
    assert suite.get("tests") == str(len(TASKS))
    assert suite.get("failures") == str(s.failed)
    assert suite.get("errors") == str(s.partial + s.errors)
    props = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert [int(props[f"runs_{k}"]) for k in ("passed", "failed", "partial", "error")] == [
        expected[c] for c in CLASSES
    ]
    assert props["runs_failed_calls"] == str(calls)

    # CSV: one row per task, its status.
    with (project / "r.csv").open(newline="", encoding="utf-8") as fh:
        assert Counter(row["status"] for row in csv.DictReader(fh)) == Counter(EXPECTED)

    # Markdown: the summary row.
    md = (project / "r.md").read_text()
    head = next(line for line in md.splitlines() if line.startswith("| Score"))
    row = md.splitlines()[md.splitlines().index(head) + 2]
    cells = dict(zip(head.strip("|").split("|"), row.strip("|").split("|"), strict=True))
    cells = {k.strip(): v.strip() for k, v in cells.items()}
    assert [cells[k] for k in ("Task runs", "Pass", "Fail", "Partial", "Error")] == [
        str(len(TASKS)), *(str(expected[c]) for c in CLASSES)
    ]  # fmt: skip
    assert cells["Errors (failed calls)"] == str(calls)

    # eval list and eval show (the latest run is the cached rerun: same counts).
    code, listed = cli(project, "eval", "list")
    assert code == 0, listed
    rows = [line for line in listed.splitlines() if line.startswith(first.name)]
    assert rows and rows[0].split()[-2:] == ["28.6%", str(calls)]
    code, shown = cli(project, "eval", "show", first.name)
    assert code == 0 and tally(shown) == expected and runs_line in shown
    again = load_results(run["runs"][1] / "results.json").summary
    assert again.counts == s.counts and tally(run["again"]) == expected

    # view: the run list's row and the run's page (the HTML report of the record).
    state = project / ".agentopt"
    index = view(state, "/")
    view_row = re.search(rf'<tr data-search="{first.name} .*?</tr>', index)
    assert view_row is not None
    cells_ = dict(re.findall(r'<td data-label="([^"]+)"[^>]*>(.*?)</td>', view_row.group(0)))
    assert cells_["Score"].startswith(f"<b>{s.score:.3f}</b>")
    assert (cells_["Pass rate"], cells_["Errors"]) == ("28.6%", str(calls))
    page = view(state, f"/runs/{first.name}")
    assert page is not None and html_cards(page) == html_cards(render_of(first))


def render_of(run_dir: Path) -> str:
    from agentopt.reports.html import render_html

    return render_html(load_results(run_dir / "results.json"))


def test_models_are_shown_resolved_and_a_local_server_costs_nothing(
    project: Path, run: dict[str, Any]
) -> None:
    results = load_results(run["runs"][0] / "results.json")
    agent_id = f"compat:gpt-4.1-mini@{run['servers']['agent']}"
    judge_id = f"compat:judge@{run['servers']['judge']}"
    assert (results.run.models.agent, results.run.models.judge) == (agent_id, judge_id)
    assert f"agent adhoc-agent ({agent_id})" in flat(run["out"])
    assert f"judge {judge_id}" in flat(run["out"])
    # gpt-4.1-mini has a list price, but this one runs on a server of the user's own.
    assert results.summary.cost_usd == 0 and results.summary.usage["agent"].cost_usd == 0


def test_cache_stats_add_up(project: Path, run: dict[str, Any]) -> None:
    code, out = cli(project, "cache", "stats")
    assert code == 0, out
    hits = int(re.search(r"(\d+) hits on these entries", flat(out)).group(1))  # type: ignore[union-attr]
    rows = [line for line in out.splitlines() if line.startswith("│ compat")]
    per_model = sum(int(cells.split("│")[5]) for cells in rows)
    assert rows and hits == per_model
    # The rerun's summary counted the same hits the cache file did.
    spent = sum(load_results(r / "results.json").summary.cache_hits for r in run["runs"])
    assert hits == spent > 0


def test_criteria_keep_their_words(project: Path, run: dict[str, Any]) -> None:
    first = run["runs"][0]
    words = [c["instruction"] for c in CRITERIA]
    # End-of-run summary: the failed criterion, by its name and its words.
    assert f"cites_window “{words[0]}”" in flat(run["out"])
    # eval show --task: every criterion of the task, with its words.
    code, shown = cli(project, "eval", "show", first.name, "--task", "wrong")
    assert code == 0, shown
    for c in CRITERIA:
        assert f"{c['name']} “{c['instruction']}”" in flat(shown)
    # HTML report and the view's run page.
    state = project / ".agentopt"
    for html in ((project / "r.html").read_text(), view(state, f"/runs/{first.name}")):
        for c in CRITERIA:
            assert f'<b>{c["name"]}</b> <span class="criterion">“{c["instruction"]}”</span>' in html


def test_the_m365_output_counts_what_the_run_counts(project: Path, m365: Path) -> None:
    items = []
    for t in TASKS:
        if "turns" in t:
            items.append({"name": t["name"], "turns": [{"prompt": x["query"]} for x in t["turns"]]})
        else:
            items.append({"prompt": t["query"], "expected_response": "30 days"})
    doc = {"schemaVersion": "1.0.0", "items": items}
    (project / "evals.json").write_text(json.dumps(doc), encoding="utf-8")
    # Servers of the user's own (llama.cpp-like: any schema), so a run costs nothing.
    with FakeOpenAI(schemas="any") as agent_srv, FakeOpenAI(schemas="any") as judge_srv:
        agent_srv.handler, judge_srv.handler = agent, judge
        code, out = cli(
            project, "eval", "run", "--prompts-file", "evals.json",
            "--agent-model", f"compat:a@{agent_srv.base_url}",
            "--eval-model", f"compat:j@{judge_srv.base_url}",
            "--evaluator", "Relevance", "--max-errors", "100", "--output", "filled.json",
        )  # fmt: skip
    assert code == 0, out
    results = load_results(next((project / ".agentopt" / "runs").glob("*/results.json")))
    filled = json.loads((project / "filled.json").read_text())
    statuses = Counter(
        item.get("summary", {}).get("overall_status") if "turns" in item else item["status"]
        for item in filled["items"]
    )
    s = results.summary
    assert statuses == Counter(
        {"pass": s.passed, "fail": s.failed, "partial": s.partial, "error": s.errors}
    )
    assert s.errors >= 2 and s.partial >= 1  # agent errors and judge errors both present
    assert tally(out) == {
        "pass": s.passed,
        "fail": s.failed,
        "partial": s.partial,
        "error": s.errors,
    }


# -- the optimize job ------------------------------------------------------------------------


def _tool(name: str) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {"name": name, "description": f"The {name} tool.", "parameters": {}},
    }


def test_one_optimize_job_says_the_same_counts_in_every_view(
    tmp_path: Path, models: Models
) -> None:
    project = make_project(
        tmp_path,
        two_phrase_rows("train", 6),
        validation=two_phrase_rows("val", 6),
        tools=[_tool("lookup_order"), _tool("unused_tool")],
        tool_mocks={"lookup_order": "ok", "unused_tool": "x"},
    )
    code, out = cli(
        project, "optimize", "--max-candidates", "2", "--seed", "1",
        "--targets", "toolset,instructions",
    )  # fmt: skip
    assert code == 0, out
    job_dir = next((project / ".agentopt" / "optimize").iterdir())
    job = load_job(job_dir / "job.json")
    c = job.counts
    by_id = {x.id: x for x in job.candidates}
    assert by_id["cand_01"].status == "screened_out"  # screened out
    assert by_id["cand_02"].star and by_id["cand_02"].pareto.any  # the winner, on the front
    assert (c.proposed, c.evaluated, c.screened_out, c.pareto) == (2, 1, 1, 1)
    line, stop = c.line(), job.stop_reason
    assert line == "2 proposed: 1 evaluated (1 Pareto), 1 screened out" and stop

    # optimize (final report), status, show: the record's line and its stop phrase.
    assert f"Candidates: {line}" in flat(out) and f"Job {job.id}: {stop}" in flat(out)
    code, status = cli(project, "optimize", "status")
    assert code == 0 and f"Candidates {line};" in flat(status) and f"— {stop}" in flat(status)
    code, shown = cli(project, "optimize", "show", "--candidate", "cand_02")
    assert code == 0 and f"Job: {stop}; candidates {line}" in flat(shown)
    # optimize list: its columns are the same counts.
    code, listed = cli(project, "optimize", "list")
    assert code == 0, listed
    row = flat(next(x for x in listed.splitlines() if x.startswith(job.id)))
    assert row.startswith(f"{job.id} {job.outcome} {c.proposed} {c.evaluated} ")
    assert flat(stop) in flat(listed)
    # The job's HTML report and the view's job list.
    report = (job_dir / "report.html").read_text()
    assert f"<b>candidates</b> {line}" in report and f"<b>stopped</b> {stop}" in report
    state = project / ".agentopt"
    index = view(state, "/")
    assert f'<td data-label="Candidates">{line}</td><td data-label="Stopped">{stop}</td>' in index
    page = view(state, f"/optimize/{job.id}")
    assert f"<span>candidates <b>{line}</b></span>" in page
    assert f"<span>stopped <b>{stop}</b></span>" in page
    shutil.rmtree(job_dir / "candidates")  # the record alone still says the same
    assert load_job(job_dir / "job.json").counts == c
