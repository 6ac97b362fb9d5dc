"""The azure.eval.yaml reader on four files: ours, written from the spec with every key, and
the extension's README example, its inline schema example and CI sample, and the learn
article's two blocks (tests/fixtures/real/azd-eval-*, copied byte for byte)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from agentopt.core.errors import ConfigError
from agentopt.core.files.azure_eval import ResponsesSource, TraceSource
from agentopt.core.files.azure_eval_load import azure_eval_problems, load_azure_eval
from agentopt.workflows.azure_eval.suite import load_suite
from agentopt.workflows.validate import AZURE_EVAL, validate_file

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
EVERY_KEY = FIXTURES / "azd_eval" / "every-key"
REAL = FIXTURES / "real"
REAL_FILES = {
    "readme": REAL / "azd-eval-readme" / "evals" / "azure.eval.yaml",
    "inline": REAL / "azd-eval-inline" / "azure.yaml",
    "ci-quality-gate": REAL / "azd-eval-ci-quality-gate" / "evals" / "azure.eval.yaml",
    "learn-trace": REAL / "azd-eval-learn" / "trace" / "evals" / "azure.eval.yaml",
    "learn-dataset": REAL / "azd-eval-learn" / "dataset" / "evals" / "azure.eval.yaml",
}


def copy(src: Path, tmp_path: Path) -> Path:
    root = tmp_path / src.name
    shutil.copytree(src, root)
    (root / ".git").mkdir()
    return root


def test_every_key_is_read_with_its_types_and_paths(tmp_path: Path) -> None:
    root = copy(EVERY_KEY, tmp_path)
    file, warnings = load_azure_eval(root / "azure.yaml")  # through the service's $ref
    assert warnings == []
    assert file.service == "billing-agent-evals"
    assert file.path == (root / "evals" / "azure.eval.yaml").resolve()
    golden, prod, extra, answers = file.datasets
    assert golden.file == root.resolve() / "evals/datasets/billing-golden.jsonl"
    assert golden.tags == {"owner": "qa"}
    assert (prod.file, prod.version) == (None, "4")
    # a $ref'd declaration: its name from the overlay, its path against azure.eval.yaml
    assert extra.name == "extra-cases"
    assert extra.file == root.resolve() / "evals/datasets/extra-cases.jsonl"
    assert answers.file is not None
    quality, politeness, legacy = file.evaluators
    assert [d.id for d in quality.dimensions or []] == ["billing_accuracy", "brevity"]
    assert [(d.id, d.weight) for d in politeness.dimensions or []] == [
        ("courtesy", 3),
        ("no_blame", 7),
    ]
    assert legacy.registered_only and legacy.version == "2"
    evals = {e.name: e for e in file.evals}
    regression = evals["billing-regression"]
    assert regression.max_samples == 50 and regression.evaluation_level == "turn"
    assert regression.target is not None and regression.target.name == "billing-agent"
    similarity = regression.evaluators[1]
    assert similarity.label == "similarity_vs_expected"
    assert similarity.data_mapping["ground_truth"] == "{{item.expected}}"
    traces = evals["billing-traces"].source
    assert isinstance(traces, TraceSource)
    assert (traces.lookback_hours, traces.max_traces, traces.agent_version) == (24, 20, "7")
    assert evals["billing-traces"].id == "eval_0123abcd"
    responses = evals["billing-responses"].source
    assert isinstance(responses, ResponsesSource) and responses.max_turns == 4
    assert evals["model-baseline"].target.type == "model"  # type: ignore[union-attr]
    assert evals["graded-answers"].target is None
    sim = evals["billing-simulated"].simulation
    assert sim is not None and (sim.num_conversations, sim.max_turns) == (2, 6)


@pytest.mark.parametrize("name", sorted(REAL_FILES))
def test_real_files_validate(name: str) -> None:
    path = REAL_FILES[name]
    report = validate_file(path)
    assert report.kind == AZURE_EVAL
    assert report.ok, [str(p) for p in report.problems]
    warnings = [p.message for p in report.problems]
    if name == "learn-dataset":  # the article still spells the dataset path `source:`
        assert len(warnings) == 1 and '"source" is the older name of "file"' in warnings[0]
    else:
        assert warnings == []


def test_inline_service_body_with_refs_and_a_ref_to_a_rubric() -> None:
    file, _ = load_azure_eval(REAL_FILES["inline"])
    assert file.service == "support-agent-evals"
    tone = file.evaluator("tone")
    assert tone is not None and [d.id for d in tone.dimensions or []] == ["polite"]
    brevity = file.evaluator("brevity")
    assert brevity is not None and brevity.dimensions is not None
    assert [e.name for e in file.evals] == [
        "support-agent-regression-eval",
        "support-agent-trace-eval",
    ]


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "azure.eval.yaml"
    path.write_text(text, encoding="utf-8")
    (tmp_path / "golden.jsonl").write_text('{"query": "hi"}\n', encoding="utf-8")
    return path


def test_unknown_keys_are_refused_with_line_and_did_you_mean(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "datasets:\n"
        "  - name: golden\n"
        "    fiel: ./golden.jsonl\n"
        "evals:\n"
        "  - name: e1\n"
        "    dataset: goldn\n"
        "    evaluation_levle: turn\n"
        "    evaluators:\n"
        "      - builtin.relevance\n"
        "    target: {type: robot, name: x}\n",
    )
    problems = [str(p) for p in azure_eval_problems(path)]
    shown = str(path)
    assert (
        f'{shown}:datasets[0].fiel (line 3): unknown key "fiel"; did you mean "file"?' in problems
    )
    assert any(
        p.startswith(f"{shown}:evals[0].evaluation_levle (line 7)")
        and 'did you mean "evaluation_level"' in p
        for p in problems
    )
    assert any("evals[0].evaluators[0] (line 9)" in p and "bare name" in p for p in problems)
    assert any("evals[0].target.type (line 10)" in p and "agent or model" in p for p in problems)
    assert any('no dataset "goldn"' in p and 'did you mean "golden"' in p for p in problems)
    with pytest.raises(ConfigError):
        load_azure_eval(path)


@pytest.mark.parametrize(
    ("body", "found"),
    [
        ("evals:\n  - name: e\n", 'expected "dataset"'),
        (
            "datasets: [{name: g, file: ./golden.jsonl}]\n"
            "evals:\n  - {name: e, dataset: g, source: {type: traces}}\n",
            "never both",
        ),
        (
            "evals:\n  - name: e\n    source: {type: traces, lookback_hours: 2, "
            'start_time: "2026-11-30T00:00:00Z"}\n',
            "over-specified",
        ),
        ("evals:\n  - name: e\n    source: {type: responses, max_traces: 3}\n", "max_traces"),
        ("evaluators:\n  - {name: x, source: ./r.json, definition: {dimensions: []}}\n", "both"),
        (
            "datasets: [{name: g, file: ./golden.jsonl}]\n"
            "evals:\n  - {name: a, dataset: g}\n  - {name: b, dataset: g}\n",
            "identical to evals[0]",
        ),
        ("datasets: [{name: 'bad name', file: ./golden.jsonl}]\n", "letters, digits"),
        ("datasets: [{name: g, file: ./golden.csv}]\n", "expected a .jsonl file"),
    ],
)
def test_the_extensions_rules(tmp_path: Path, body: str, found: str) -> None:
    problems = [str(p) for p in azure_eval_problems(write(tmp_path, body))]
    assert any(found in p for p in problems), problems


def test_bad_yaml_names_file_and_line(tmp_path: Path) -> None:
    path = write(tmp_path, "evals:\n  - name: [unclosed\n")
    [problem] = azure_eval_problems(path)
    assert problem.file == str(path) and problem.location.startswith("line ")


def test_an_eval_becomes_the_suite_eval_run_uses(tmp_path: Path) -> None:
    root = copy(EVERY_KEY, tmp_path)
    config, warnings = load_suite(root / "evals" / "azure.eval.yaml", "billing-regression")
    assert config.name == "billing-regression"
    assert config.agent is not None and config.agent.name == "billing-agent"
    assert config.dataset is not None and config.dataset.local_uri is not None
    assert config.dataset.local_uri.name == "billing-golden.jsonl"
    names = [e.name for e in config.evaluators]
    assert names == [
        "builtin.task_adherence",
        "builtin.similarity",
        "billing-quality",
        "politeness",
    ]
    assert config.options.eval_model == "gpt-4.1-nano"
    assert config.rows is not None and config.rows.cap == 50
    assert config.rows.columns == {"ground_truth": "expected"}
    # rubrics the file declares are registered as versions, like `azd ai eval create` does
    quality = config.evaluators[2]
    assert quality.version == "1" and quality.local_uri is not None
    assert quality.local_uri.is_relative_to(root.resolve() / ".azure" / ".foundry")
    again, _ = load_suite(root / "evals" / "azure.eval.yaml", "billing-regression")
    assert again.evaluators[2].version == "1"  # unchanged content: no new version
    assert any("1–5 scale" in w.message for w in warnings)  # threshold 3 on task_adherence


@pytest.mark.parametrize(
    ("eval_name", "message"),
    [
        ("billing-traces", "Application Insights"),
        ("billing-responses", "stored responses"),
        ("prod-replay", "registered in the Foundry project only"),
        ("billing-regresion", 'did you mean "billing-regression"'),
    ],
)
def test_evals_agentopt_cannot_play_are_refused_clearly(
    tmp_path: Path, eval_name: str, message: str
) -> None:
    root = copy(EVERY_KEY, tmp_path)
    with pytest.raises(ConfigError) as err:
        load_suite(root / "evals" / "azure.eval.yaml", eval_name)
    assert message in str(err.value) + " ".join(str(p) for p in err.value.problems)
