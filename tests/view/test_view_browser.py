"""`agentopt view` in a real browser (issue 36): headless Debian Chromium driven by Playwright
(the system browser, nothing downloaded), one browser for the module. A page per test — runs,
a run, compare of three runs, an optimize job, a job updating live while it runs — each loaded
at 390×844 and 1280×800 with the no-horizontal-overflow check, and every request the pages
make checked to stay on the server's own origin.

The world: a matrix run of three models over twelve tasks against the fake OpenAI server
(three ordinary runs + a matrix), and an optimize job of the scripted rule-following agent.
Set AGENTOPT_VIEW_SHOTS=DIR to keep the screenshots.
"""

from __future__ import annotations

import json
import os
import shutil
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agentopt.cli.app import app
from agentopt.cli.view_server import make_server
from agentopt.contracts.matrix import load_matrix
from agentopt.contracts.optimize_job import load_job
from agentopt.evaluators.stats import paired_bootstrap_ci
from agentopt.models.providers.mock import register_mock, unregister_mock
from tests.fake_openai import FakeOpenAI, RecordedRequest, Reply, error, text
from tests.optimize.conftest import (
    make_project,
    optimize,
    phrase_judge,
    rule_agent,
    two_phrase_rows,
)
from tests.workflows.fake_agent_server import last_user

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
sync_api = pytest.importorskip("playwright.sync_api")
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed (CI installs it)"),
]
FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SIZES = ((390, 844), (1280, 800))
TASKS = 12


def right(model: str, i: int) -> str:
    """fake-a: every task but the multiples of 4 (0.75); fake-b: all (1.0); fake-c: the agent
    fails on multiples of 3, of the others it misses 4, 5 and 8 (0.625)."""
    if model == "fake-c" and i % 3 == 0:
        return "error"
    if model == "fake-b" or (i % 4 and not (model == "fake-c" and i == 5)):
        return "right"
    return "wrong"


def answer(req: RecordedRequest) -> Reply | None:
    body = req.body or {}
    i = int(last_user(req).split()[-1])
    how = right(str(body.get("model")), i)
    if how == "error":
        return error(400, "the agent refused", code="bad_request")
    return text(f"item {i}" if how == "right" else "no idea")


@dataclass
class World:
    base: str
    project: Path
    runs: list[str]
    """The matrix's runs: fake-a, fake-b, fake-c."""
    matrix: str
    job: str
    shots: Path
    servers: list[Any] = field(default_factory=list)


def serve(state: Path) -> tuple[Any, str]:
    server = make_server(state, 0, paired_ci=paired_bootstrap_ci)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


def no_keys(mp: pytest.MonkeyPatch) -> None:
    for var in list(os.environ):
        if var.endswith(("_API_KEY", "_ENDPOINT")) or var == "OPENAI_BASE_URL":
            mp.delenv(var, raising=False)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    root = tmp_path_factory.mktemp("view")
    project = root / "project"
    project.mkdir()
    rows = [
        {"name": f"t{i:02d}", "query": f"item {i}", "ground_truth": f"item {i}",
         "category": "edge" if i % 4 == 0 else "core", "tags": ["smoke"] if i % 2 else []}
        for i in range(TASKS)
    ]  # fmt: skip
    (project / "tasks.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    with pytest.MonkeyPatch.context() as mp, FakeOpenAI() as srv:
        no_keys(mp)
        srv.handler = answer
        models = [a for m in ("fake-a", "fake-b", "fake-c")
                  for a in ("--agent-model", f"compat:{m}@{srv.base_url}")]  # fmt: skip
        result = CliRunner().invoke(
            app,
            ["-C", str(project), "--no-prompt", "eval", "run", "--prompts-file", "tasks.jsonl",
             *models, "--evaluator", "ExactMatch", "--max-errors", "100", "--name", "support"],
        )  # fmt: skip
        assert result.exit_code == 0, result.output
    (matrix_dir,) = (project / ".agentopt" / "matrices").iterdir()
    record = load_matrix(matrix_dir / "matrix.json")
    # An optimize job of the scripted rule-following agent, shown beside the runs.
    register_mock("view_agent", rule_agent)
    register_mock("view_judge", phrase_judge)
    try:
        opt = make_project(
            root / "opt",
            two_phrase_rows("train", 6),
            validation=two_phrase_rows("val", 6),
            test=two_phrase_rows("test", 4),
            model="mock:view_agent",
            options={"eval_model": "mock:view_judge"},
        )
        outcome = optimize(opt, max_candidates=2, seed=3)
    finally:
        unregister_mock("view_agent")
        unregister_mock("view_judge")
    job_id = outcome.job.id
    shutil.copytree(opt / ".agentopt" / "optimize", project / ".agentopt" / "optimize")
    server, base = serve(project / ".agentopt")
    shots = Path(os.environ.get("AGENTOPT_VIEW_SHOTS") or root / "shots")
    shots.mkdir(parents=True, exist_ok=True)
    yield World(base, project, [r.run_id for r in record.runs], record.id, job_id, shots,
                [server])  # fmt: skip
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def browser(world: World) -> Iterator[Any]:
    """Started after the world is built: Playwright's sync API runs an event loop on this
    thread, where agentopt's own `asyncio.run` could then not start."""
    with sync_api.sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
        yield b
        b.close()


class Page:
    """A browser tab on the view that records every request and console error."""

    def __init__(self, browser: Any, base: str, size: tuple[int, int]) -> None:
        self.base = base
        self.context = browser.new_context(viewport={"width": size[0], "height": size[1]})
        self.page = self.context.new_page()
        self.requests: list[str] = []
        self.errors: list[str] = []
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))

    def open(self, path: str) -> Any:
        self.page.goto(self.base + path)
        self.page.wait_for_load_state("load")
        return self.page

    def check(self, shots: Path, name: str) -> None:
        """No horizontal overflow, no script error, nothing fetched from elsewhere."""
        width = self.page.viewport_size["width"]
        self.page.screenshot(path=str(shots / f"{name}-{width}.png"), full_page=True)
        scroll, client = self.page.evaluate(
            "[document.documentElement.scrollWidth, document.documentElement.clientWidth]"
        )
        assert scroll <= client, f"{name} overflows at {width} px: {scroll} > {client}"
        assert self.errors == [], self.errors
        elsewhere = [u for u in self.requests if not u.startswith(self.base + "/")]
        assert elsewhere == [], elsewhere

    def close(self) -> None:
        self.context.close()


def visible_rows(page: Any, selector: str) -> int:
    found = f"document.querySelectorAll({json.dumps(selector)})"
    return int(page.evaluate(f"Array.from({found}).filter(r => !r.hidden).length"))


@pytest.mark.parametrize("size", SIZES, ids=["390", "1280"])
def test_runs_page_sorts_filters_charts_and_picks_runs_to_compare(
    browser: Any, world: World, size: tuple[int, int]
) -> None:
    tab = Page(browser, world.base, size)
    page = tab.open("/")
    assert visible_rows(page, "#runs-table tbody tr") == 3
    scores = page.locator("#runs-table tbody td[data-label=Score]").all_inner_texts()
    assert sorted(s.split()[0] for s in scores) == ["0.625", "0.750", "1.000"]
    # Sort by score: with the keyboard on the header's button at 1280 px; with the "Sort by"
    # select at 390 px, where rows are cards and the header is hidden.
    if size[0] > 700:
        page.locator("#runs-table th[data-key=score] button").focus()
        page.keyboard.press("Enter")
    else:
        page.select_option("select[data-sort-for=runs-table]", "score:asc")
    scores = page.locator("#runs-table tbody td[data-label=Score]").all_inner_texts()
    assert [s.split()[0] for s in scores] == ["0.625", "0.750", "1.000"]
    if size[0] > 700:
        page.keyboard.press("Enter")
    else:
        page.select_option("select[data-sort-for=runs-table]", "score:desc")
    scores = page.locator("#runs-table tbody td[data-label=Score]").all_inner_texts()
    assert [s.split()[0] for s in scores] == ["1.000", "0.750", "0.625"]
    page.fill("[data-filter-for=runs-table] input[data-filter=search]", "fake-b")
    assert visible_rows(page, "#runs-table tbody tr") == 1
    page.fill("[data-filter-for=runs-table] input[data-filter=search]", "")
    # The suite's score over time: one point per run.
    assert page.locator("svg.chart circle.pt").count() == 3
    assert page.locator("#jobs-table a", has_text=world.job).count() == 1
    assert page.locator("#matrices-table a", has_text=world.matrix).count() == 1
    tab.check(world.shots, "runs")
    button = page.locator("#compare-picked")
    assert button.is_disabled()
    for box in page.locator("input.pick").all():
        box.check()
    assert not button.is_disabled() and "3" in button.inner_text()
    button.click()
    page.wait_for_url("**/compare?**")
    assert page.locator("table#compare thead th.run-col").count() == 3
    tab.close()


@pytest.mark.parametrize("size", SIZES, ids=["390", "1280"])
def test_run_page_filters_and_opens_a_task(
    browser: Any, world: World, size: tuple[int, int]
) -> None:
    tab = Page(browser, world.base, size)
    page = tab.open(f"/runs/{world.runs[2]}")  # fake-c: passes, fails and agent errors
    assert visible_rows(page, "#tasks tbody.task") == TASKS
    controls = "[data-filter-for=tasks]"
    page.select_option(f"{controls} select[data-filter=status]", "error")
    assert visible_rows(page, "#tasks tbody.task") == 4  # t00 t03 t06 t09
    page.select_option(f"{controls} select[data-filter=status]", "")
    page.select_option(f"{controls} select[data-filter=errors]", label="agentRequestFailed")
    assert visible_rows(page, "#tasks tbody.task") == 4
    page.select_option(f"{controls} select[data-filter=errors]", "")
    page.select_option(f"{controls} select[data-filter=verdicts]", "exact_match:fail")
    assert visible_rows(page, "#tasks tbody.task") == 3  # t04 t05 t08
    page.select_option(f"{controls} select[data-filter=verdicts]", "")
    page.select_option(f"{controls} select[data-filter=cat]", "edge")
    assert visible_rows(page, "#tasks tbody.task") == 3
    page.select_option(f"{controls} select[data-filter=cat]", "")
    page.select_option(f"{controls} select[data-filter=tags]", "smoke")
    assert visible_rows(page, "#tasks tbody.task") == 6
    page.select_option(f"{controls} select[data-filter=tags]", "")
    page.fill(f"{controls} input[data-filter=search]", "t04")
    assert visible_rows(page, "#tasks tbody.task") == 1
    # Open the task from the keyboard: its answer, the verdict with its reason, ground truth.
    row = page.locator("#task-4 tr.main")
    row.focus()
    page.keyboard.press("Enter")
    detail = page.locator("#task-4-detail")
    assert detail.is_visible() and row.get_attribute("aria-expanded") == "true"
    words = " ".join(detail.inner_text().lower().split())
    assert "agent no idea" in words and "ground truth item 4" in words
    assert "exact_match fail" in words and "does not match the expected response" in words
    tab.check(world.shots, "run")
    tab.close()


@pytest.mark.parametrize("size", SIZES, ids=["390", "1280"])
def test_compare_three_runs_by_the_one_outcome_order(
    browser: Any, world: World, size: tuple[int, int]
) -> None:
    a, b, c = world.runs
    tab = Page(browser, world.base, size)
    page = tab.open(f"/compare?run={b}&run={a}&run={c}")  # b is the reference
    assert page.locator("table#compare thead th.run-col").count() == 3
    assert visible_rows(page, "#compare tbody tr") == TASKS
    # Against b (all pass): a is worse on t00 t04 t08; c fails t04 t05 t08, errs t00 t03 t06 t09.
    page.check("#only-worse")
    assert visible_rows(page, "#compare tbody tr") == 7
    worse = page.locator("#compare tbody tr:not([hidden]) th b").all_inner_texts()
    assert worse == ["t00", "t03", "t04", "t05", "t06", "t08", "t09"]
    page.uncheck("#only-worse")
    page.check("#only-changed")
    assert visible_rows(page, "#compare tbody tr") == 7
    page.uncheck("#only-changed")
    cell = page.locator("#compare tbody tr", has=page.locator("th b", has_text="t04")).locator("td")
    assert cell.nth(1).locator(".chg").inner_text() == "worse"
    assert cell.nth(1).locator(".badge").inner_text() == "fail"
    cell.nth(1).locator("summary").click()
    assert "no idea" in cell.nth(1).locator("pre").inner_text()
    heads = page.locator("thead th.run-col").all_inner_texts()
    assert "reference" in heads[0] and "paired 95% CI" in heads[1]
    assert "beyond noise" in heads[2] or "within noise" in heads[2]
    tab.check(world.shots, "compare")
    tab.close()


@pytest.mark.parametrize("size", SIZES, ids=["390", "1280"])
def test_optimize_job_page_shows_candidates_pareto_diffs_and_test_split(
    browser: Any, world: World, size: tuple[int, int]
) -> None:
    job = load_job(world.project / ".agentopt" / "optimize" / world.job / "job.json")
    tab = Page(browser, world.base, size)
    page = tab.open(f"/optimize/{world.job}")
    assert page.locator("#candidates tbody.cand").count() == len(job.candidates)
    assert page.locator("#pareto-cost svg").count() == 1
    assert "Why the search stopped" in page.locator("#stop-reason").inner_text()
    best = job.best
    assert best and best != "baseline"
    row = page.locator(f"#cand-{best} tr.main")
    row.focus()
    page.keyboard.press("Enter")
    detail = page.locator(f"#cand-{best}-detail")
    assert detail.is_visible()
    diff = detail.locator("pre.diff").first.inner_text()
    assert "instructions.md" in diff and "+" in diff
    assert "Screening" in detail.inner_text() and "Validation" in detail.inner_text()
    split = page.locator("#test-split").locator("xpath=..").inner_text()
    assert "test 4" in split and "test0" in split
    tab.check(world.shots, "optimize")
    tab.close()


def test_a_running_job_page_updates_itself(
    browser: Any, world: World, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    no_keys(monkeypatch)
    release = threading.Event()

    def gated(req: Any) -> str:
        release.wait(60)  # the job stays running until the page is open
        return rule_agent(req)

    register_mock("live_agent", gated)
    register_mock("live_judge", phrase_judge)
    project = make_project(tmp_path, two_phrase_rows("train", 4),
                           validation=two_phrase_rows("val", 4), model="mock:live_agent",
                           options={"eval_model": "mock:live_judge"})  # fmt: skip
    done: list[Any] = []
    worker = threading.Thread(
        target=lambda: done.append(optimize(project, max_candidates=1, seed=1)), daemon=True
    )
    worker.start()
    server = None
    try:
        jobs = project / ".agentopt" / "optimize"
        deadline = time.monotonic() + 30
        while not list(jobs.glob("*/job.json")) and time.monotonic() < deadline:
            time.sleep(0.05)
        (job_file,) = jobs.glob("*/job.json")
        server, base = serve(project / ".agentopt")
        for size in SIZES:
            tab = Page(browser, base, size)
            page = tab.open(f"/optimize/{job_file.parent.name}")
            assert page.evaluate("document.body.dataset.live") is not None
            assert "still running" in page.locator("#job-facts").inner_text()
            tab.check(world.shots, "live-running")
            tab.close()
        tab = Page(browser, base, SIZES[1])
        page = tab.open(f"/optimize/{job_file.parent.name}")
        page.evaluate("window.__notReloaded = true")
        release.set()
        worker.join(120)
        assert done, "the optimize job did not finish"
        page.locator("#stop-reason").wait_for(timeout=30_000)
        assert page.evaluate("window.__notReloaded") is True  # swapped in place, not reloaded
        assert page.evaluate("document.body.dataset.live") is None
        assert "finished" in page.locator("#live").inner_text()
        assert page.locator("#candidates tbody.cand").count() == len(done[0].job.candidates)
        tab.check(world.shots, "live-finished")
        tab.close()
    finally:
        release.set()
        worker.join(120)
        unregister_mock("live_agent")
        unregister_mock("live_judge")
        if server is not None:
            server.shutdown()
            server.server_close()
