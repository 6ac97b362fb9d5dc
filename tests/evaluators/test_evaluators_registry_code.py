"""Names, aliases and plugins; evaluator YAML types; user code evaluators (M365 folder style and
`module:callable`)."""

from __future__ import annotations

import asyncio
import json
import textwrap

import pytest
import yaml

from agentopt.evaluators import build_evaluator, canonical_name, m365_score_key, registered
from agentopt.evaluators.registry import unregister
from agentopt.plugins import (
    ConfigError,
    EvalResult,
    EvalSample,
    EvaluatorBase,
    register_evaluator,
)

SAMPLE = EvalSample(
    query="Draft a reply.", response="Lorem ipsum, see you at 10.", ground_truth="x"
)


@pytest.mark.parametrize(
    ("written", "canonical", "m365"),
    [
        ("Relevance", "builtin.relevance", "relevance"),
        ("RELEVANCE", "builtin.relevance", "relevance"),
        ("builtin.Relevance", "builtin.relevance", "relevance"),
        ("exactmatch", "builtin.exact_match", "exactMatch"),
        ("PartialMatch", "builtin.partial_match", "partialMatch"),
        ("citations", "builtin.citations", "citations"),
        ("groundedness", "builtin.groundedness", "groundedness"),
        ("Similarity", "builtin.similarity", "similarity"),
        ("Coherence", "builtin.coherence", "coherence"),
        ("task_adherence", "builtin.task_adherence", "builtin.task_adherence"),
        ("my_custom", "my_custom", "my_custom"),
    ],
)
def test_names_are_case_insensitive_and_canonical(written, canonical, m365):
    assert canonical_name(written) == canonical
    assert m365_score_key(written) == m365


def test_the_catalogue_is_complete():
    names = {info.name for info in registered()}
    assert names >= {
        "builtin.task_adherence",
        "builtin.intent_resolution",
        "builtin.relevance",
        "builtin.coherence",
        "builtin.fluency",
        "builtin.groundedness",
        "builtin.similarity",
        "builtin.tool_call_accuracy",
        "builtin.semantic_similarity",
        "builtin.exact_match",
        "builtin.partial_match",
        "builtin.regex_match",
        "builtin.citations",
        "builtin.json_schema",
        "builtin.latency",
        "builtin.token_budget",
    }


def test_unknown_name_lists_valid_names_with_a_did_you_mean(harness):
    with pytest.raises(ConfigError) as err:
        harness.build("Relevence")
    text = str(err.value)
    assert "unknown evaluator 'Relevence'" in text
    assert "did you mean 'Relevance'?" in text
    assert "builtin.exact_match" in text and "ExactMatch" in text
    assert "custom-evaluators/Relevence/Relevence.py" in text


def test_a_plugin_registers_through_the_same_path(harness):
    @register_evaluator("acme.shouting", aliases=["Shouting"], description="All caps.")
    class Shouting(EvaluatorBase):
        name = "acme.shouting"

        async def evaluate(self, sample: EvalSample) -> EvalResult:
            loud = sample.response.isupper()
            return EvalResult(
                evaluator=self.name,
                status="pass" if loud else "fail",
                score=float(loud),
                normalized=float(loud),
            )

    try:
        assert harness.run("shouting", EvalSample(response="HEY")).status == "pass"
        assert harness.run("acme.shouting", EvalSample(response="hey")).status == "fail"
        assert "acme.shouting" in {i.name for i in registered()}
    finally:
        unregister("acme.shouting")
    with pytest.raises(ConfigError):
        harness.build("Shouting")


# --- M365 custom-evaluators/<name>/<name>.py ---------------------------------------------------
FORBIDDEN_TERMS = textwrap.dedent(
    '''
    """A code-only M365 custom evaluator, written as the M365 docs show."""


    class ForbiddenTermsEvaluator:
        def __init__(self, *, model_config=None, threshold, options=None):
            self.threshold = threshold
            self.terms = (options or {}).get("terms", [])
            self.case_sensitive = (options or {}).get("case_sensitive", False)

        def __call__(self, *, prompt="", expected_response="", response="", context="", **_):
            if "CRASH" in response:
                raise RuntimeError("cannot read this response")
            if "NOPE" in response:
                return {"error": "refused to evaluate"}
            text = response if self.case_sensitive else response.lower()
            found = [t for t in self.terms if (t if self.case_sensitive else t.lower()) in text]
            return {"score": 0 if found else 1, "reason": f"found: {found}", "found": found}


    class Helper:  # not the evaluator: only the first top-level class counts
        pass
    '''
)


@pytest.fixture
def forbidden_terms(harness):
    folder = harness.project_dir / "custom-evaluators" / "forbidden_terms"
    folder.mkdir(parents=True)
    (folder / "forbidden_terms.py").write_text(FORBIDDEN_TERMS)
    return folder


def test_m365_code_evaluator_with_options(harness, forbidden_terms):
    spec = {
        "name": "forbidden_terms",
        "options": {"threshold": 1, "options": {"terms": ["lorem", "ipsum"]}},
    }
    r = harness.run(spec, SAMPLE)
    assert r.evaluator == "forbidden_terms"
    assert r.status == "fail" and r.score == 0 and r.threshold == 1
    assert r.details["found"] == ["lorem", "ipsum"]
    ok = harness.run(spec, SAMPLE.model_copy(update={"response": "See you at 10."}))
    assert ok.status == "pass" and ok.normalized == 1.0
    # default threshold for code evaluators is 1
    default = harness.run(
        {"name": "forbidden_terms", "options": {"options": {"terms": ["x"]}}}, SAMPLE
    )
    assert default.threshold == 1


def test_m365_code_evaluator_exception_and_error_become_error_results(harness, forbidden_terms):
    crashed = harness.run("forbidden_terms", SAMPLE.model_copy(update={"response": "CRASH"}))
    assert crashed.status == "error" and crashed.score is None
    assert crashed.error.code == "evaluatorCrashed"
    assert "forbidden_terms" in crashed.error.message and "RuntimeError" in crashed.error.message
    refused = harness.run("forbidden_terms", SAMPLE.model_copy(update={"response": "NOPE"}))
    assert refused.status == "error" and refused.error.code == "evaluatorFailed"
    assert "refused to evaluate" in refused.error.message


def test_m365_code_evaluator_syntax_error_names_the_file(harness):
    folder = harness.project_dir / "custom-evaluators" / "broken"
    folder.mkdir(parents=True)
    (folder / "broken.py").write_text("class Broken:\n    def __call__(self:\n")
    with pytest.raises(ConfigError) as err:
        harness.build("broken")
    assert "custom-evaluators/broken/broken.py" in str(err.value) and "line" in str(err.value)


# --- evaluator YAML: code / prompt / builtin-config -------------------------------------------
def write_yaml(project, name, body):
    folder = project / ".azure" / ".foundry" / "evaluators"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.v1.yaml").write_text(yaml.safe_dump({"name": name, "version": "1", **body}))


CHECKS = textwrap.dedent(
    """
    def short_enough(*, response, options, **kwargs):
        limit = options.get("max_words", 5)
        n = len(response.split())
        return {"score": 1 if n <= limit else 0, "reason": f"{n} words"}


    async def graded(*, response, ground_truth):
        return 4 if ground_truth in response else 2


    def strict_signature(response):
        return True


    def bad_return(**kwargs):
        return "great"
    """
)


@pytest.fixture
def checks_module(harness):
    (harness.project_dir / "my_checks.py").write_text(CHECKS)


def test_code_entry_point_function(harness, checks_module):
    write_yaml(
        harness.project_dir,
        "brevity",
        {
            "type": "code",
            "definition": {"entry_point": "my_checks:short_enough", "options": {"max_words": 3}},
        },
    )
    r = harness.run("brevity", SAMPLE)
    assert r.evaluator == "brevity" and r.status == "fail" and r.reason == "6 words"
    r = harness.run({"name": "brevity", "options": {"max_words": 10}}, SAMPLE)
    assert r.status == "pass"


def test_code_entry_point_async_and_1_to_5_convention(harness, checks_module):
    write_yaml(
        harness.project_dir,
        "graded",
        {"type": "code", "threshold": 3, "definition": {"entry_point": "my_checks:graded"}},
    )
    r = harness.run("graded", SAMPLE.model_copy(update={"ground_truth": "Lorem"}))
    assert (r.score, r.status, r.normalized) == (4, "pass", 0.75)


def test_code_entry_point_signature_and_bad_return(harness, checks_module):
    write_yaml(
        harness.project_dir,
        "strict",
        {"type": "code", "definition": {"entry_point": "my_checks:strict_signature"}},
    )
    write_yaml(
        harness.project_dir,
        "bad",
        {"type": "code", "definition": {"entry_point": "my_checks:bad_return"}},
    )
    assert harness.run("strict", SAMPLE).status == "pass"
    bad = harness.run("bad", SAMPLE)
    assert (
        bad.status == "error"
        and bad.error.code == "invalidEvaluatorResult"
        and "'bad'" in bad.error.message
    )


def test_code_entry_point_that_cannot_load(harness):
    write_yaml(
        harness.project_dir, "ghost", {"type": "code", "definition": {"entry_point": "nope_mod:fn"}}
    )
    with pytest.raises(ConfigError, match="nope_mod:fn"):
        harness.build("ghost")


def test_builtin_config_pins_options_under_its_own_name(harness):
    write_yaml(
        harness.project_dir,
        "mentions-refund",
        {
            "type": "builtin-config",
            "definition": {
                "evaluator": "builtin.regex_match",
                "initialization_parameters": {"patterns": ["(?i)refund"]},
            },
        },
    )
    r = harness.run("mentions-refund", EvalSample(response="Your refund is ready"))
    assert r.evaluator == "mentions-refund" and r.status == "pass"
    assert r.details["builtin"] == "builtin.regex_match"


def test_prompt_type_evaluator(harness, judge):
    write_yaml(
        harness.project_dir,
        "politeness",
        {
            "type": "prompt",
            "threshold": 0.5,
            "definition": {
                "prompt": (
                    "Rate how polite this reply is.\nUser said: {{ query }}\n"
                    "Reply: {{ response }}\nReference: {{ ground_truth }}"
                ),
                "score_range": {"min": 0, "max": 10},
            },
        },
    )
    j = judge('{"reason": "x", "score": 11}', json.dumps({"reason": "Quite polite.", "score": 7}))
    r = harness.run(
        "politeness", EvalSample(query="hi", response="Hello there!"), judge_model=j.model
    )
    assert j.calls == 2  # 11 is outside 0..10: re-asked
    assert (r.score, r.normalized, r.threshold, r.status) == (7, 0.7, 5, "pass")
    prompt = j.prompt(0)
    assert "Reference: (not provided)" in prompt
    assert "<response-" in prompt and "Hello there!" in prompt
    assert '"score": <integer from 0 to 10>' in prompt


def test_local_uri_to_python_file(harness):
    (harness.project_dir / "checks.py").write_text(FORBIDDEN_TERMS)
    r = harness.run(
        {
            "name": "terms",
            "local_uri": "checks.py",
            "initialization_parameters": {"terms": ["lorem"]},
        },
        SAMPLE,
    )
    assert r.evaluator == "terms" and r.status == "fail"


def test_code_result_details_survive_json(harness, forbidden_terms):
    r = harness.run("forbidden_terms", SAMPLE)
    json.loads(r.model_dump_json())


ASYNC_DATACLASS = textwrap.dedent(
    """
    from dataclasses import dataclass


    @dataclass
    class LengthCheck:
        threshold: float
        model_config: object = None
        options: dict | None = None

        async def __call__(self, *, response="", **_):
            return {"score": len(response), "reason": "chars", "passed": len(response) < 10}
    """
)


def test_async_dataclass_evaluator(harness):
    folder = harness.project_dir / "custom-evaluators" / "length_check"
    folder.mkdir(parents=True)
    (folder / "length_check.py").write_text(ASYNC_DATACLASS)
    r = harness.run("length_check", EvalSample(response="short"))
    assert (r.score, r.status, r.normalized) == (5, "pass", 1.0)  # its own `passed` wins


def test_same_module_name_in_two_projects_does_not_shadow(tmp_path):
    results = []
    for i, body in enumerate(
        ["def check(**_):\n    return 1\n", "def check(**_):\n    return 0\n"]
    ):
        project = tmp_path / f"p{i}"
        (project / ".azure" / ".foundry" / "evaluators").mkdir(parents=True)
        (project / "checks.py").write_text(body)
        write_yaml(project, "c", {"type": "code", "definition": {"entry_point": "checks:check"}})
        ev = build_evaluator("c", project_dir=project)
        results.append(asyncio.run(ev.evaluate(EvalSample(response="r"))).status)
    assert results == ["pass", "fail"]


def test_non_numeric_threshold_is_a_config_error(harness):
    with pytest.raises(ConfigError, match="threshold"):
        harness.run({"name": "PartialMatch", "options": {"threshold": "high"}}, SAMPLE)
