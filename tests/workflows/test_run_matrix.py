"""A matrix run (issue 36): 2 models × 2 instructions over 20 tasks against the fake OpenAI
server = 80 agent answers, one report with four columns (terminal, JSON, HTML, JUnit with one
suite per variant), a paired best-variant line, each variant an ordinary run; a rerun is
answered from the shared cache (0 calls)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentopt.cli.app import app
from agentopt.contracts.matrix import load_matrix
from agentopt.contracts.run_results import load_results
from tests.fake_openai import FakeOpenAI, RecordedRequest, Reply, text
from tests.workflows.fake_agent_server import last_user

runner = CliRunner()
TASKS = 20


def right(model: str, system: str, i: int) -> bool:
    """Which variant answers task i correctly: b·strict all, a·strict 3 in 4, b·loose 4 in 5,
    a·loose every other one."""
    if model == "fake-b" and "strict" in system:
        return True
    if model == "fake-a" and "strict" in system:
        return i % 4 != 0
    if model == "fake-b":
        return i % 5 != 0
    return i % 2 == 0


def answer(req: RecordedRequest) -> Reply | None:
    body = req.body or {}
    system = " ".join(
        str(m.get("content")) for m in body.get("messages", []) if m.get("role") == "system"
    )
    i = int(last_user(req).split()[-1])
    return text(f"item {i}" if right(str(body.get("model")), system, i) else "no idea")


@pytest.fixture
def suite(project: Path) -> Path:
    rows = [{"name": f"t{i:02d}", "query": f"item {i}", "ground_truth": f"item {i}"} for i in
            range(TASKS)]  # fmt: skip
    (project / "tasks.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    (project / "strict.md").write_text("Be strict: repeat the item exactly.\n")
    (project / "loose.md").write_text("Be helpful.\n")
    return project


def matrix_run(project: Path, url: str, *extra: str) -> tuple[int, str]:
    result = runner.invoke(
        app,
        ["-C", str(project), "--no-prompt", "eval", "run", "--prompts-file", "tasks.jsonl",
         "--agent-model", f"compat:fake-a@{url}", "--agent-model", f"compat:fake-b@{url}",
         "--instructions", "@strict.md", "--instructions", "@loose.md",
         "--evaluator", "ExactMatch", "--concurrency", "4", *extra],
    )  # fmt: skip
    return result.exit_code, result.output


def test_two_models_by_two_instructions_is_one_report_with_four_columns(suite: Path) -> None:
    with FakeOpenAI() as srv:
        srv.handler = answer
        code, out = matrix_run(
            suite, srv.base_url, "--output", "m.json", "--output", "m.html", "--output", "m.xml"
        )
        assert code == 0, out
        assert srv.count("/chat/completions") == 4 * TASKS  # 80 agent answers, no judge
        [first] = (suite / ".agentopt" / "matrices").iterdir()  # ids sort by the second only
        again, out2 = matrix_run(suite, srv.base_url)
        assert again == 0, out2
        assert srv.count("/chat/completions") == 4 * TASKS  # the rerun: 0 calls

        url = srv.base_url
    heads = ["compat:fake-a · strict", "compat:fake-a · loose", "compat:fake-b · strict",
             "compat:fake-b · loose"]  # fmt: skip
    report = json.loads((suite / "m.json").read_text())
    assert [c["label"] for c in report["columns"]] == heads
    assert len(report["rows"]) == TASKS and all(len(r["cells"]) == 4 for r in report["rows"])
    # One row per task, one cell per variant, as the fake server answered.
    for i, row in enumerate(report["rows"]):
        models = ["fake-a", "fake-a", "fake-b", "fake-b"]
        systems = ["strict", "loose", "strict", "loose"]
        want = ["pass" if right(m, s, i) else "fail" for m, s in zip(models, systems, strict=True)]
        assert [c["status"] for c in row["cells"]] == want, row["task"]
    scores = [c["run"]["score"] for c in report["columns"]]
    assert scores == pytest.approx([0.75, 0.5, 1.0, 0.8])
    best = report["best"]
    assert best["label"] == heads[2] and best["runner_up"] == heads[3]
    assert best["beyond_noise"] is True and best["ci"][0] > 0
    assert f"Best variant: {heads[2]}, +0.200 vs {heads[3]}" in out
    assert "beyond noise" in out

    # Each variant is an ordinary run tagged with the matrix; the matrix names them.
    assert len(list((suite / ".agentopt" / "matrices").iterdir())) == 2
    record = load_matrix(first / "matrix.json")
    assert [r.label for r in record.runs] == heads
    for run in record.runs:
        res = load_results(suite / ".agentopt" / "runs" / run.run_id / "results.json")
        assert res.run.variant is not None and res.run.variant.matrix == record.id
        assert res.summary.score == run.score
        assert res.summary.usage["agent"].calls == TASKS  # its own calls, not the matrix's

    suites = ET.parse(suite / "m.xml").getroot().findall("testsuite")
    assert len(suites) == 4
    assert [s.get("name", "").rsplit("[", 1)[1].rstrip("]") for s in suites] == heads
    assert all(len(s.findall("testcase")) == TASKS for s in suites)
    html = (suite / "m.html").read_text()
    assert html.count('<th scope="col">') == 5 and "Best variant:" in html
    assert "http://" not in html.replace(url, "")


def test_eval_yaml_variants_make_a_matrix(suite: Path) -> None:
    with FakeOpenAI() as srv:
        srv.handler = answer
        (suite / "eval.yaml").write_text(
            "name: smoke\n"
            "agent: {name: helper, kind: prompt, instruction: base, model: compat:fake-a@"
            + srv.base_url + "}\n"
            "dataset: {local_uri: tasks.jsonl}\n"
            "evaluators: [builtin.exact_match]\n"
            "variants:\n"
            "  - {name: a-strict, instruction: {file: strict.md}}\n"
            "  - {name: b-loose, model: compat:fake-b@" + srv.base_url + ",\n"
            "     instruction: {file: loose.md}}\n"
        )  # fmt: skip
        result = runner.invoke(app, ["-C", str(suite), "--no-prompt", "eval", "run"])
        assert result.exit_code == 0, result.output
        assert srv.count("/chat/completions") == 2 * TASKS
    assert "a-strict" in result.output and "b-loose" in result.output
    assert "Best variant: b-loose" in result.output


def test_matrix_refuses_flags_it_cannot_honour(suite: Path) -> None:
    code, out = matrix_run(suite, "http://127.0.0.1:9/v1", "--baseline", "x")
    assert code == 2 and "--baseline does not apply to a matrix run" in out


def test_optimize_starts_from_the_best_variant(tmp_path: Path) -> None:
    import yaml

    from agentopt.models.providers.mock import register_mock, unregister_mock
    from tests.optimize.conftest import make_project, optimize, phrase_judge, rule_agent
    from tests.optimize.conftest import two_phrase_rows as rows

    register_mock("mx_agent", rule_agent)
    register_mock("mx_judge", phrase_judge)
    try:
        project = make_project(
            tmp_path,
            rows("train", 4),
            validation=rows("val", 4),
            model="mock:mx_agent",
            options={"eval_model": "mock:mx_judge"},
        )
        config = yaml.safe_load((project / "eval.yaml").read_text())
        ruled = "Answer. Mention 'refund window'. Mention 'tracking link'."
        config["variants"] = [
            {"name": "plain", "instruction": "Answer briefly."},
            {"name": "ruled", "instruction": ruled},
        ]
        (project / "eval.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
        result = runner.invoke(app, ["-C", str(project), "--no-prompt", "eval", "run"])
        assert result.exit_code == 0, result.output
        assert "Best variant: ruled" in result.output
        outcome = optimize(project, from_matrix="latest", max_candidates=1, seed=1)
    finally:
        unregister_mock("mx_agent")
        unregister_mock("mx_judge")
    base = outcome.job.baseline
    assert base is not None and base.validation is not None
    assert base.validation.score == 1.0  # the ruled variant, not the project's own baseline
    assert outcome.instructions["baseline"] == ruled
