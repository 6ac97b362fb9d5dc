"""The deterministic evaluators, table-driven: what a user sees for each input."""

from __future__ import annotations

import json

import pytest

from agentopt.contracts.transcript import Citation
from agentopt.core.errors import ConfigError
from agentopt.evaluators import EvalSample

S = EvalSample


# --- exact_match -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("options", "response", "expected", "status"),
    [
        ({}, "Paris", "Paris", "pass"),
        ({}, "  paris \n", "PARIS", "pass"),
        ({"case_sensitive": True}, "paris", "Paris", "fail"),
        ({"case_sensitive": True}, " Paris ", "Paris", "pass"),
        ({}, "Paris.", "Paris", "fail"),
        ({}, "", "Paris", "fail"),
        ({}, "Straße", "STRASSE", "pass"),  # casefold, not lower()
        ({}, "café ☕", "CAFÉ ☕", "pass"),
        ({"mode": "contains"}, "The capital is Paris.", "paris", "pass"),
        ({"mode": "contains"}, "The capital is Lyon.", "paris", "fail"),
        ({"mode": "contains", "case_sensitive": True}, "the capital is paris", "Paris", "fail"),
    ],
)
def test_exact_match(harness, options, response, expected, status):
    r = harness.run(
        {"name": "ExactMatch", "options": options}, S(response=response, ground_truth=expected)
    )
    assert r.evaluator == "builtin.exact_match"
    assert r.status == status
    assert r.score == (1.0 if status == "pass" else 0.0)
    assert r.details["match"] is (status == "pass")


@pytest.mark.parametrize("name", ["ExactMatch", "PartialMatch", "builtin.semantic_similarity"])
@pytest.mark.parametrize("ground_truth", [None, "", "   "])
def test_missing_ground_truth_is_an_error_not_a_score(harness, name, ground_truth):
    r = harness.run(
        {"name": name, "options": {"model": "mock:bow"}} if "semantic" in name else name,
        S(query="q", response="anything", ground_truth=ground_truth),
    )
    assert r.status == "error"
    assert r.error.code == "missingInput"
    assert r.score is None and r.normalized is None
    assert "ground truth" in r.error.message


# --- partial_match -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("options", "response", "expected", "score", "status"),
    [
        ({}, "the cat sat on the mat", "a cat sat on a mat", 1.0, "pass"),
        ({}, "Cat, sat!", "cat sat", 1.0, "pass"),
        ({}, "cat sat down", "cat sat", 0.8, "pass"),
        ({}, "cat", "cat sat mat", 0.5, "pass"),
        ({}, "dog", "cat", 0.0, "fail"),
        ({}, "", "cat", 0.0, "fail"),
        ({"case_sensitive": True}, "Cat sat", "cat sat", 0.5, "pass"),
        ({"case_sensitive": True}, "The cat", "cat", 1.0, "pass"),  # articles dropped anyway
        ({}, "cat cat", "cat", 2 / 3, "pass"),  # multiset: the extra "cat" costs precision
        ({}, "¿Dónde está?", "dónde está", 1.0, "pass"),  # unicode punctuation, accents kept
        ({"threshold": 0.9}, "cat sat down", "cat sat", 0.8, "fail"),
    ],
)
def test_partial_match(harness, options, response, expected, score, status):
    r = harness.run(
        {"name": "partialmatch", "options": options}, S(response=response, ground_truth=expected)
    )
    assert r.evaluator == "builtin.partial_match"
    assert r.score == pytest.approx(score, abs=1e-6)
    assert r.status == status
    assert r.reason == f"Match score: {score:.3f}"


def test_partial_match_default_threshold_is_half(harness):
    r = harness.run("PartialMatch", S(response="cat", ground_truth="cat sat mat dog"))
    assert r.threshold == 0.5 and r.score == pytest.approx(0.4) and r.status == "fail"


# --- regex_match -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("options", "sample", "status"),
    [
        ({"patterns": ["(?i)refund"]}, S(response="Your REFUND is on its way"), "pass"),
        ({"patterns": ["refund", "30 days"]}, S(response="refund within 14 days"), "fail"),
        (
            {"patterns": ["refund", "30 days"], "mode": "any"},
            S(response="refund within 14 days"),
            "pass",
        ),
        ({"patterns": "^\\d+$"}, S(response="42"), "pass"),
        # placeholder values are escaped: "$4.99 (USD)" must match literally…
        (
            {"patterns": ["costs {{ground_truth}}"]},
            S(response="It costs $4.99 (USD).", ground_truth="$4.99 (USD)"),
            "pass",
        ),
        # …and "." in the value must not match any character
        (
            {"patterns": ["^{{ ground_truth }}$"]},
            S(response="4x99", ground_truth="4.99"),
            "fail",
        ),
        (
            {"patterns": ["{{query}}"]},
            S(query="a+b?", response="you asked a+b? fine"),
            "pass",
        ),
    ],
)
def test_regex_match(harness, options, sample, status):
    r = harness.run({"name": "builtin.regex_match", "options": options}, sample)
    assert r.status == status, r.reason


def test_regex_placeholder_without_value_is_missing_input(harness):
    r = harness.run(
        {"name": "builtin.regex_match", "options": {"patterns": ["{{ground_truth}}"]}},
        S(response="x"),
    )
    assert r.status == "error" and r.error.code == "missingInput"


@pytest.mark.parametrize(
    "options",
    [{}, {"patterns": []}, {"patterns": ["(unclosed"]}, {"patterns": ["x"], "mode": "most"}],
)
def test_regex_bad_options_are_config_errors(harness, options):
    with pytest.raises(ConfigError) as err:
        harness.build({"name": "builtin.regex_match", "options": options})
    assert "builtin.regex_match" in str(err.value)


# --- citations ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("fmt", "response", "count"),
    [
        (None, "See 【1†source】 and 【2†source】.", 2),
        (None, "See 【1†source】, again 【1†source】 and 【4:0†doc.pdf】.", 2),
        (None, "Bracket [1] is not the default format.", 0),
        ("bracket", "Facts [1], more [2][3] and [1] again.", 3),
        ("bracket", "List [1, 2] and [2].", 2),
        ("bracket", "A link [1](https://a.example) is markdown, not a bracket.", 0),
        ("markdown", "[docs](https://a.example/x) and [same](https://a.example/x).", 1),
        ("markdown", "[a](https://a.example) [b](https://b.example) ![img](https://c.png)", 2),
        ("mixed", "【1†s】 [1] [2] [site](https://a.example)", 3),
        # Copilot's numbered markdown links (schema 1.8): counted once per number
        (
            "markdown",
            "Per [1](https://c.example/a.docx#page=2) and [1](https://c.example/a.docx#p3)",
            1,
        ),
        ("markdown", "[1](https://c.example/a#x), [2](https://c.example/a#y)", 2),
        ("mixed", "【1†doc】 and [1](https://c.example/a#x)", 1),
        ("MIXED", "", 0),
    ],
)
def test_citations_formats_and_dedupe(harness, fmt, response, count):
    options = {"citation_format": fmt} if fmt else {}
    r = harness.run({"name": "Citations", "options": options}, S(response=response))
    assert r.details["count"] == count
    assert r.score == count
    assert r.status == ("pass" if count >= 1 else "fail")
    assert r.normalized == min(count, 1)


def test_citations_report_the_detected_format(harness):
    markdown = S(response="See [1](https://c.example/doc#frag).")
    r = harness.run({"name": "Citations", "options": {"citation_format": "mixed"}}, markdown)
    assert r.details["format"] == "markdown"
    assert r.details["citations"] == [{"index": 1, "source": "https://c.example/doc#frag"}]
    both = S(response="【1†doc】 and [2](https://c.example/doc#frag)")
    r = harness.run({"name": "Citations", "options": {"citation_format": "mixed"}}, both)
    assert r.details["format"] == "mixed" and r.details["count"] == 2


def test_citations_counts_agent_citations_and_threshold(harness):
    sample = S(
        response="Per 【1†source】.",
        citations=[Citation(index=1), Citation(url="https://x.example", title="X")],
    )
    r = harness.run({"name": "Citations", "options": {"threshold": 3}}, sample)
    assert r.details["count"] == 2  # index 1 once, plus the URL
    assert r.status == "fail" and r.normalized == pytest.approx(2 / 3)
    assert {"index": 2, "source": "https://x.example", "text": "X"} in r.details["citations"]


def test_citations_unknown_format_counts_every_known_format(harness):
    # The M365 schema leaves citation_format open and its own samples use "inline".
    sample = EvalSample(response="See [1] and 【2†doc】 and [guide](https://g.example).")
    r = harness.run({"name": "Citations", "options": {"citation_format": "inline"}}, sample)
    assert r.details["count"] == 3 and r.status == "pass"


def test_citations_non_string_format_is_config_error(harness):
    with pytest.raises(ConfigError, match="citation_format"):
        harness.build({"name": "Citations", "options": {"citation_format": 3}})


# --- json_schema -------------------------------------------------------------------------------
SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "temp": {"type": "number"}},
    "required": ["city", "temp"],
}


@pytest.mark.parametrize(
    ("response", "status", "reason_part"),
    [
        ('{"city": "Oslo", "temp": 3.5}', "pass", "Valid JSON"),
        ('Here you go:\n```json\n{"city": "Oslo", "temp": 3}\n```\nAnything else?', "pass", ""),
        ('```\n{"city": "Oslo", "temp": 3}\n```', "pass", ""),
        ('{"city": "Oslo", "temp": "warm"}', "fail", "$.temp"),
        ('{"city": "Oslo"}', "fail", "'temp' is a required property"),
        ("{'city': 'Oslo'}", "fail", "not JSON"),
        ("", "fail", "empty"),
        ("```json\n{broken\n```", "fail", "fenced block is not JSON"),
    ],
)
def test_json_schema(harness, response, status, reason_part):
    r = harness.run(
        {"name": "builtin.json_schema", "options": {"schema": SCHEMA}}, S(response=response)
    )
    assert r.status == status
    assert reason_part in r.reason


def test_json_schema_from_file_and_invalid_schema(harness):
    (harness.project_dir / "schema.json").write_text(json.dumps(SCHEMA))
    r = harness.run(
        {"name": "builtin.json_schema", "options": {"schema": "schema.json"}},
        S(response='{"city": "x"}'),
    )
    assert r.status == "fail"
    with pytest.raises(ConfigError, match="valid JSON Schema"):
        harness.build({"name": "builtin.json_schema", "options": {"schema": {"type": "nope"}}})


# --- latency / token_budget --------------------------------------------------------------------
@pytest.mark.parametrize(
    ("spec", "sample", "status"),
    [
        ({"name": "builtin.latency", "options": {"max_seconds": 2}}, S(latency_s=1.5), "pass"),
        ({"name": "builtin.latency", "options": {"max_seconds": 2}}, S(latency_s=2.5), "fail"),
        ({"name": "builtin.token_budget", "options": {"max_tokens": 100}}, S(tokens=100), "pass"),
        ({"name": "builtin.token_budget", "options": {"max_tokens": 100}}, S(tokens=101), "fail"),
        ({"name": "builtin.latency", "options": {"max_seconds": 2}}, S(), "error"),
    ],
)
def test_run_metrics(harness, spec, sample, status):
    r = harness.run(spec, sample)
    assert r.status == status
    if status != "error":
        assert r.details["measured"] == (sample.latency_s or sample.tokens)


def test_run_metrics_need_their_limit(harness):
    with pytest.raises(ConfigError, match="max_seconds"):
        harness.build("builtin.latency")


# --- semantic_similarity -----------------------------------------------------------------------
def test_semantic_similarity_with_bag_of_words_embeddings(harness):
    spec = {"name": "builtin.semantic_similarity", "options": {"model": "mock:bow"}}
    same, related, unrelated = harness.run(
        spec,
        [
            S(response="The refund window is 30 days", ground_truth="the REFUND window is 30 days"),
            S(response="the cat sat", ground_truth="a cat sat"),
            S(response="blue whales swim", ground_truth="refund within thirty days"),
        ],
    )
    assert same.score == pytest.approx(1.0) and same.status == "pass"
    assert related.score == pytest.approx(2 / 3, abs=1e-3) and related.status == "fail"
    assert unrelated.score == pytest.approx(0.0) and unrelated.status == "fail"
    assert same.threshold == 0.7


def test_semantic_similarity_unreachable_model_is_an_error(harness):
    r = harness.run(
        {
            "name": "builtin.semantic_similarity",
            "options": {"model": "compat:emb@http://127.0.0.1:9/v1"},
        },
        S(response="a", ground_truth="a"),
    )
    assert r.status == "error" and r.score is None
    assert r.error.code == "embeddingUnavailable"
