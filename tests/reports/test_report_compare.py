"""`eval show --compare`: per-task and per-evaluator deltas between two runs."""

from __future__ import annotations

import io
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
    assert "Changed tasks (2 worse, 1 better)" in text
    row = next(line for line in text.splitlines() if line.startswith("regressed"))
    assert "pass → fail" in row and "-0.625" in row
    assert "1 of 4 shared tasks unchanged" in text
    assert "Only in 20261129-221500-a1b2c3: dropped" in text
    assert "Only in 20261130-080000-bbbbbb: brand-new" in text
    assert "-20.0 pts" in text  # pass rate 80% → 60%
