"""`eval show --compare`: per-task and per-evaluator deltas between two runs."""

from __future__ import annotations

import io
import re
from collections.abc import Callable

import pytest
from report_fixtures import ev, task
from rich.console import Console

from agentopt.reports import RunResults, compare_runs, render_comparison

REL, COH = "builtin.relevance", "builtin.coherence"


@pytest.fixture
def pair(build: Callable[..., RunResults]) -> tuple[RunResults, RunResults]:
    base = build(
        [
            task("steady", 0, "pass", [ev(REL, "pass", 4), ev(COH, "pass", 4)]),
            task("regressed", 1, "pass", [ev(REL, "pass", 5), ev(COH, "pass", 5)]),
            task("improved", 2, "fail", [ev(REL, "fail", 2), ev(COH, "pass", 3)]),
            task("dropped", 3, "pass", [ev(REL, "pass", 4), ev(COH, "pass", 4)]),
            task("lower-score", 4, "pass", [ev(REL, "pass", 5), ev(COH, "pass", 5)]),
        ]
    )
    current = build(
        [
            task("steady", 0, "pass", [ev(REL, "pass", 4), ev(COH, "pass", 4)]),
            task("regressed", 1, "fail", [ev(REL, "fail", 1), ev(COH, "pass", 4)]),
            task("improved", 2, "pass", [ev(REL, "pass", 5), ev(COH, "pass", 5)]),
            task("lower-score", 3, "pass", [ev(REL, "pass", 4), ev(COH, "pass", 4)]),
            task("brand-new", 4, "error", [], error={"code": "agentRequestFailed", "message": "x"}),
        ]
    )
    current.run.id = "20261130-080000-bbbbbb"
    return base, current


def test_task_deltas(pair: tuple[RunResults, RunResults]) -> None:
    base, current = pair
    comp = compare_runs(base, current)
    by_name = {t.name: t for t in comp.tasks}
    assert set(by_name) == {"steady", "regressed", "improved", "lower-score"}
    assert by_name["regressed"].delta == pytest.approx(0.375 - 1.0)
    assert by_name["regressed"].regressed and by_name["regressed"].status_changed
    assert by_name["improved"].delta == pytest.approx(1.0 - 0.375)
    assert not by_name["improved"].regressed
    assert by_name["lower-score"].regressed and not by_name["lower-score"].status_changed
    assert not by_name["steady"].changed
    assert comp.tasks[0].name == "regressed"  # worst change first
    assert [t.name for t in comp.regressions] == ["regressed", "lower-score"]
    assert [t.name for t in comp.improvements] == ["improved"]
    assert comp.only_in_base == ["dropped"]
    assert comp.only_in_current == ["brand-new"]


def test_run_and_evaluator_deltas(pair: tuple[RunResults, RunResults]) -> None:
    base, current = pair
    comp = compare_runs(base, current)
    assert comp.score_delta == pytest.approx(current.summary.score - base.summary.score)
    assert comp.pass_rate_delta == pytest.approx(3 / 5 - 4 / 5)
    rel = next(e for e in comp.evaluators if e.name == REL)
    assert rel.base_mean == pytest.approx((0.75 + 1 + 0.25 + 0.75 + 1) / 5)
    assert rel.current_mean == pytest.approx((0.75 + 0 + 1 + 0.75) / 4)
    assert rel.mean_delta == pytest.approx(rel.current_mean - rel.base_mean)
    assert rel.pass_rate_delta == pytest.approx(3 / 4 - 4 / 5)
    assert comp.same_dataset


def test_evaluator_present_in_one_run_only(build: Callable[..., RunResults]) -> None:
    base = build([task("a", 0, "pass", [ev(REL, "pass", 4)])])
    current = build([task("a", 0, "pass", [ev(REL, "pass", 4), ev(COH, "pass", 5)])])
    comp = compare_runs(base, current)
    coh = next(e for e in comp.evaluators if e.name == COH)
    assert coh.base_mean is None and coh.current_mean == 1.0 and coh.mean_delta is None


def test_different_dataset_is_flagged_and_rendered(pair: tuple[RunResults, RunResults]) -> None:
    base, current = pair
    current.run.dataset.sha256 = "cd" * 32
    comp = compare_runs(base, current)
    assert not comp.same_dataset
    console = Console(width=100, record=True, file=io.StringIO(), color_system=None)
    render_comparison(comp, console)
    text = console.export_text()
    assert "20261130-080000-bbbbbb vs 20261129-221500-a1b2c3" in text
    assert "different dataset contents" in text
    assert "Changed tasks (2 worse, 1 better, 0 changed)" in text
    row = next(line for line in text.splitlines() if line.startswith("regressed"))
    assert "pass → fail" in row and "-0.625" in row
    assert "1 of 4 shared tasks unchanged" in text
    assert "Only in 20261129-221500-a1b2c3: dropped" in text
    assert "Only in 20261130-080000-bbbbbb: brand-new" in text
    assert "-20.0 pts" in text  # pass rate 80% → 60%


RED, GREEN = "#800000", "#008000"  # rich's inline HTML colours for "red" and "green"


@pytest.fixture
def partial_to_fail(build: Callable[..., RunResults]) -> tuple[RunResults, RunResults]:
    """t1 partial → fail with a HIGHER score (the errored evaluator left it out before), t2
    fail → partial, t3 error → error (the same, whatever the message)."""
    judge_error = ev(COH, "error", code="judgeParseFailed")
    base = build(
        [
            task("t1", 0, "partial", [ev(REL, "pass", 2), judge_error]),
            task("t2", 1, "fail", [ev(REL, "fail", 2), ev(COH, "pass", 4)]),
            task("t3", 2, "error", [], error={"code": "agentRequestFailed", "message": "x"}),
        ]
    )
    current = build(
        [
            task("t1", 0, "fail", [ev(REL, "fail", 2), ev(COH, "pass", 5)]),
            task("t2", 1, "partial", [ev(REL, "pass", 4), judge_error]),
            task("t3", 2, "error", [], error={"code": "agentTimeout", "message": "y"}),
        ]
    )
    current.run.id = "20261130-080000-bbbbbb"
    return base, current


def test_partial_to_fail_is_worse_even_when_the_score_rose(partial_to_fail) -> None:
    base, current = partial_to_fail
    comp = compare_runs(base, current)
    by_name = {t.name: t for t in comp.tasks}
    assert by_name["t1"].delta is not None and by_name["t1"].delta > 0
    assert by_name["t1"].change == "worse" and by_name["t1"].regressed
    assert by_name["t2"].change == "better" and not by_name["t2"].regressed
    assert by_name["t3"].change == "same" and not by_name["t3"].changed
    assert [t.name for t in comp.tasks] == ["t1", "t3", "t2"]  # worse first


def _coloured_row(html: str, name: str) -> str:
    start = next(i for line in [f"\n{name} "] if (i := html.find(line)) >= 0)
    return html[start + 1 : html.index("\n", start + 1)]


def test_partial_to_fail_is_red_in_terminal_html_and_view(partial_to_fail, tmp_path) -> None:
    from agentopt.cli.view_server import Pages
    from agentopt.reports.compare import write_comparison

    base, current = partial_to_fail
    comp = compare_runs(base, current)
    console = Console(width=120, record=True, file=io.StringIO(), color_system="standard")
    render_comparison(comp, console)
    ansi = console.export_text(styles=True)
    row = next(line for line in ansi.splitlines() if line.startswith("t1"))
    assert "\x1b[31mworse" in row and "\x1b[31mfail" in row  # red
    row = next(line for line in ansi.splitlines() if line.startswith("t2"))
    assert "\x1b[32mbetter" in row and "\x1b[32mpartial" in row  # green
    assert "Changed tasks (1 worse, 1 better, 0 changed)" in ansi

    exported = write_comparison(comp, tmp_path / "cmp.html").read_text()
    state = tmp_path / ".agentopt"
    for results in (base, current):
        folder = state / "runs" / results.run.id
        folder.mkdir(parents=True)
        (folder / "results.json").write_text(results.model_dump_json())
    t1, t2 = _coloured_row(exported, "t1"), _coloured_row(exported, "t2")
    assert f'color: {RED}; text-decoration-color: {RED}">worse' in t1
    assert f'color: {RED}; text-decoration-color: {RED}">fail' in t1
    assert f'color: {GREEN}; text-decoration-color: {GREEN}">better' in t2
    # The view's compare page: the same words, the same colours (its stylesheet maps them).
    status, _, page = Pages(state).get("/compare", {"run": [base.run.id, current.run.id]})
    assert status == 200
    rows = {m[0]: m[1] for m in re.findall(r"<b>(t\d)</b>(.*?)</tr>", page, re.S)}
    assert '<span class="chg worse" data-colour="red">worse</span>' in rows["t1"]
    assert '<span class="chg better" data-colour="green">better</span>' in rows["t2"]


def test_repeated_tasks_change_only_past_their_noise(build: Callable[..., RunResults]) -> None:
    def repeated(name: str, scores: list[float]) -> dict:
        mean = sum(scores) / len(scores)
        std = (sum((s - mean) ** 2 for s in scores) / (len(scores) - 1)) ** 0.5
        reps = [
            {"repeat": i, "status": "pass", "score": s, "evaluators": [ev(REL, "pass", 4)]}
            for i, s in enumerate(scores)
        ]
        return task(name, 0, "pass", [ev(REL, "pass", 4)], repeats=reps, mean=mean, std=std)

    base = build([repeated("noisy", [0.5, 0.9, 0.6]), repeated("steady", [0.70, 0.71, 0.70])])
    current = build([repeated("noisy", [0.6, 0.9, 0.7]), repeated("steady", [0.90, 0.91, 0.90])])
    by_name = {t.name: t for t in compare_runs(base, current).tasks}
    assert by_name["noisy"].delta is not None and by_name["noisy"].change == "same"
    assert by_name["steady"].change == "better"


def test_run_score_change_is_judged_by_the_paired_interval(pair) -> None:
    from agentopt.evaluators.stats import paired_bootstrap_ci

    base, current = pair
    comp = compare_runs(base, current, paired_ci=paired_bootstrap_ci)
    assert comp.score_ci is not None and comp.score_ci[0] < 0 < comp.score_ci[1]
    assert comp.score_change == "same"
    console = Console(width=120, record=True, file=io.StringIO(), color_system=None)
    render_comparison(comp, console)
    assert "within the noise: 95% CI" in console.export_text()
