"""Evals of azure.eval.yaml files run by `agentopt eval run` (and azd's `eval run start`)
against the fake OpenAI server: every runnable eval of every file is scored; `--fail-on`
exits as azd's gate does; `run output export` round-trips; optimize plans and finishes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from agentopt.contracts import load_results
from agentopt.core.errors import ConfigError
from agentopt.core.files.azure_eval_load import load_azure_eval
from agentopt.reports.run_output import rows_from_csv
from agentopt.workflows.azure_eval.suite import pick_eval
from tests.azd_eval.world import World, agentopt, serving

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
EVERY_KEY = FIXTURES / "azd_eval" / "every-key"
REAL = FIXTURES / "real"
ADHOC = ("--agent-model", "gpt-4.1-mini", "--instructions", "You triage support tickets.")


def project(src: Path, tmp_path: Path) -> Path:
    root = tmp_path / src.name
    shutil.copytree(src, root)
    (root / ".git").mkdir()
    return root


def results_of(root: Path) -> dict:  # type: ignore[type-arg]
    [path] = sorted((root / ".agentopt" / "runs").glob("*/results.json"))[-1:]
    return json.loads(path.read_text(encoding="utf-8"))


RUNNABLE = [
    # (fixture, where the command runs, config, eval, extra flags, rows scored)
    (EVERY_KEY, ".", None, "billing-regression", (), 3),
    (EVERY_KEY, ".", None, "model-baseline", (), 2),
    (EVERY_KEY, ".", None, "graded-answers", (), 2),
    (EVERY_KEY, ".", "evals/azure.eval.yaml", "billing-simulated", (), 2),  # 1 seed × 2
    (REAL / "azd-eval-readme", ".", "evals/azure.eval.yaml", None, ADHOC, 10),
    (REAL / "azd-eval-inline", ".", "azure.yaml", "support-agent-regression-eval", ADHOC, 2),
    (REAL / "azd-eval-learn" / "dataset", ".", "evals/azure.eval.yaml", None, ADHOC, 10),
]


@pytest.mark.parametrize(
    ("src", "where", "config", "eval_name", "extra", "rows"),
    RUNNABLE,
    ids=lambda v: v.name if isinstance(v, Path) else None,
)
def test_every_runnable_eval_is_scored_locally(
    tmp_path: Path,
    src: Path,
    where: str,
    config: str | None,
    eval_name: str | None,
    extra: tuple[str, ...],
    rows: int,
) -> None:
    root = project(src, tmp_path)
    args = ["eval", "run", "start", *extra]
    args += ["--config", config] if config else []
    args += ["--eval", eval_name] if eval_name else []
    with serving(World()) as env:
        code, out = agentopt(root / where, env, *args, "--fail-on", "any-failure")
    assert code == 0, out
    assert "Evaluation gate (any-failure): all" in out
    results = results_of(root / where)
    assert results["summary"]["runs"] == rows
    assert results["summary"]["passed"] == rows
    for task in results["tasks"]:
        assert task["evaluators"] and all(e["status"] == "pass" for e in task["evaluators"])


def test_evals_read_through_azure_yaml_without_config(tmp_path: Path) -> None:
    """No eval.yaml in the folder: azure.yaml's azure.ai.eval service names the file."""
    root = project(EVERY_KEY, tmp_path)
    with serving(World()) as env:
        code, out = agentopt(root, env, "eval", "run")
        assert code == 2 and "declares 7 evals" in out and "--eval NAME" in out
        code, out = agentopt(root, env, "eval", "run", "--eval", "graded-answers")
    assert code == 0, out
    assert "Eval graded-answers of evals/azure.eval.yaml" in out
    assert results_of(root)["run"]["config"]["eval_name"] == "graded-answers"


def test_the_picker_asks_among_the_evals() -> None:
    file, _ = load_azure_eval(EVERY_KEY / "evals" / "azure.eval.yaml")
    asked: list[list[str]] = []

    def choose(names: list[str]) -> str:
        asked.append(names)
        return "model-baseline"

    assert pick_eval(file, None, choose).name == "model-baseline"
    assert asked[0][0] == "billing-regression" and len(asked[0]) == 7
    with pytest.raises(ConfigError):
        pick_eval(file, None, None)


@pytest.mark.parametrize(
    ("src", "config", "message"),
    [
        (REAL / "azd-eval-learn" / "trace", "evals/azure.eval.yaml", "Application Insights"),
        (
            REAL / "azd-eval-ci-quality-gate",
            "evals/azure.eval.yaml",
            "builtin.task_completion is a Foundry built-in agentopt does not implement",
        ),
    ],
    ids=["learn-trace", "ci-quality-gate"],
)
def test_evals_that_cannot_run_here_exit_2_saying_why(
    tmp_path: Path, src: Path, config: str, message: str
) -> None:
    root = project(src, tmp_path)
    with serving(World()) as env:
        code, out = agentopt(root, env, "eval", "run", "--config", config, *ADHOC)
    assert code == 2
    assert message in " ".join(out.split())


GATE = (EVERY_KEY, "billing-regression")


def gate_run(tmp_path: Path, world: World, *flags: str) -> tuple[int, str, Path]:
    root = project(EVERY_KEY, tmp_path)
    with serving(world) as env:
        code, out = agentopt(root, env, "eval", "run", "--eval", "billing-regression", *flags)
    return code, out, root


@pytest.mark.parametrize(
    ("world", "flags", "code", "line"),
    [
        (World(), ("--fail-on", "pass-rate=1"), 0, "pass rate 100.0% of 3 scored meets"),
        (World(failing={"bank transfer"}), ("--fail-on", "pass-rate=0.6"), 0, "66.7% of 3"),
        (
            World(failing={"bank transfer"}),
            ("--fail-on", "pass-rate=0.8"),
            1,
            "pass rate 66.7% of 3 scored is below the required 80.0%",
        ),
        (World(failing={"bank transfer"}), ("--fail-on", "any-failure"), 1, "1 of 3 samples"),
        (
            World(erroring={"bank transfer"}),
            ("--fail-on", "any-failure"),
            1,
            "1 of 3 samples did not pass (1 errored)",
        ),
        # errored rows left out of the rate, with azd's warning; beyond --max-errors the
        # verdict rests on rows the run could not score: exit 3 (cli.md)
        (World(erroring={"bank transfer"}), ("--fail-on", "pass-rate=0.9"), 3, "left out"),
        (
            World(erroring={"bank transfer"}),
            ("--fail-on", "pass-rate=0.9", "--max-errors", "5"),
            0,
            "1 errored sample left out of the pass rate (2 of 2 scored passed)",
        ),
    ],
    ids=["met", "met-below-1", "breached", "any-failure", "errored-any", "errored-rate", "tol"],
)
def test_fail_on_exits(
    tmp_path: Path, world: World, flags: tuple[str, ...], code: int, line: str
) -> None:
    got, out, _ = gate_run(tmp_path, world, *flags)
    assert got == code, out
    assert line in " ".join(out.split())
    if code == 1:
        assert "ERROR: evaluation quality gate not met." in out


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("all", '--fail-on must be any-failure or pass-rate=<0..1>, got "all"'),
        ("pass-rate=high", '--fail-on pass-rate must be a number, got "high"'),
        ("pass-rate=nan", '--fail-on pass-rate must be a number, got "nan"'),
        ("pass-rate=1.5", "--fail-on pass-rate must be between 0 and 1, got 1.5"),
    ],
)
def test_fail_on_grammar_is_refused_before_anything_is_sent(
    tmp_path: Path, value: str, message: str
) -> None:
    root = project(EVERY_KEY, tmp_path)
    with serving(World()) as env:
        code, out = agentopt(
            root, env, "eval", "run", "--eval", "graded-answers", "--fail-on", value
        )
    assert code == 2 and message in out
    assert not (root / ".agentopt" / "runs").exists()


def test_fail_on_is_refused_with_no_wait(tmp_path: Path) -> None:
    root = project(EVERY_KEY, tmp_path)
    with serving(World()) as env:
        code, out = agentopt(
            root, env, "eval", "run", "--remote", "--no-wait", "--fail-on", "any-failure"
        )
    assert code == 2 and "cannot be used with --no-wait" in " ".join(out.split())


def test_run_show_gates_a_finished_run(tmp_path: Path) -> None:
    code, out, root = gate_run(tmp_path, World(failing={"bank transfer"}))
    assert code == 0, out  # no gate asked: failing rows still exit 0
    with serving(World()) as env:
        code, out = agentopt(
            root, env, "eval", "run", "show", "--eval", "billing-regression",
            "--fail-on", "pass-rate=0.5",
        )  # fmt: skip
        assert code == 0, out
        code, out = agentopt(root, env, "eval", "run", "show", "--fail-on", "any-failure")
    assert code == 1 and "1 of 3 samples did not pass" in out


def test_run_output_export_round_trips(tmp_path: Path) -> None:
    code, out, root = gate_run(tmp_path, World(failing={"bank transfer"}))
    assert code == 0, out
    with serving(World()) as env:
        args = ("eval", "run", "output")
        assert agentopt(root, env, *args, "list", "--output-file", "rows.json")[0] == 0
        assert agentopt(root, env, *args, "export", "--output-file", "rows.jsonl")[0] == 0
        assert (
            agentopt(root, env, *args, "export", "--format", "csv", "--output-file", "r.csv")[0]
            == 0
        )
        assert (
            agentopt(root, env, *args, "export", "--format", "json", "--output-file", "r.json")[0]
            == 0
        )
        code, shown = agentopt(root, env, *args, "show", "task_3")
    listed = json.loads((root / "rows.json").read_text(encoding="utf-8"))
    lines = (root / "rows.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(line) for line in lines] == listed
    assert [i["status"] for i in listed] == ["passed", "passed", "failed"]
    results = load_results(next((root / ".agentopt" / "runs").glob("*/results.json")))
    assert {i["run_id"] for i in listed} == {results.run.id}
    csv_rows = rows_from_csv((root / "r.csv").read_text(encoding="utf-8"))
    assert len(csv_rows) == len(listed)
    for row, item in zip(csv_rows, listed, strict=True):
        assert row["id"] == item["id"] and row["status"] == item["status"]
        assert row["query"] == item["datasource_item"]["query"]
        assert row["response"] == item["response"]
        for r in item["results"]:
            assert row[f"{r['name']}.passed"] == ("true" if r["passed"] else "false")
            assert float(row[f"{r['name']}.score"]) == r["score"]
            assert row[f"{r['name']}.reason"] == r["reason"]
    document = json.loads((root / "r.json").read_text(encoding="utf-8"))
    assert document["items"] == listed and document["summary"]["failed"] == 1
    assert code == 0 and "Can I pay by bank transfer?" in shown


def test_optimize_from_an_azure_eval(tmp_path: Path) -> None:
    root = project(EVERY_KEY, tmp_path)
    config = ("--config", "evals/azure.eval.yaml", "--eval", "billing-regression")
    with serving(World(failing={"bank transfer"})) as env:
        code, plan = agentopt(root, env, "optimize", *config, "--dry-run")
        assert code == 0, plan
        assert "Optimization plan" in plan and "billing-agent" in plan
        assert not (root / ".agentopt" / "optimize").exists()
        code, out = agentopt(root, env, "optimize", *config, "--max-candidates", "1")
    assert code == 0, out
    [job] = (root / ".agentopt" / "optimize").iterdir()
    record = json.loads((job / "job.json").read_text(encoding="utf-8"))
    assert record["config"]["dataset"]["name"] == "billing-golden"
    assert record["config"]["evaluators"] == [
        "builtin.task_adherence", "builtin.similarity", "billing-quality", "politeness",
    ]  # fmt: skip
    assert record["outcome"] in ("improved", "no_improvement")


def test_optimize_refuses_an_eval_that_invokes_no_agent(tmp_path: Path) -> None:
    root = project(EVERY_KEY, tmp_path)
    with serving(World()) as env:
        code, out = agentopt(
            root, env, "optimize", "--config", "evals/azure.eval.yaml", "--eval", "model-baseline"
        )
    assert code == 2 and "invokes the model gpt-4.1-mini" in " ".join(out.split())
