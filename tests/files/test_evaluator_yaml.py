"""Registered evaluator YAML (files.md §5.2): every type loads, dumps, and reloads the same."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentopt.core.errors import InputError
from agentopt.core.files.evaluator_yaml import (
    CodeDefinition,
    EvaluatorSpec,
    PromptDefinition,
    RubricDefinition,
    dump_evaluator_yaml,
    evaluator_yaml_problems,
    load_evaluator_yaml,
    parse_evaluator_yaml,
)

RUBRIC_YAML = """\
name: support-agent-quality
version: "1"
type: rubric
description: Quality rubric generated from the agent description.
created_at: 2026-11-29T21:00:00Z
source: {kind: generated, model: gpt-4.1-mini, instruction_sha256: abc}
threshold: 0.5
definition:
  dimensions:
    - {id: refund_accuracy, description: States the 30-day window., weight: 10}
    - {id: general_quality, description: Other factors., weight: 5, always_applicable: true}
"""

PROMPT_YAML = """\
name: politeness
version: 2
type: prompt
definition:
  prompt: |
    Rate the politeness of the response from 1 to 5.
    <response>{{ response }}</response>
    Answer as JSON: {"reason": "...", "score": <int>}
  score_range: {min: 1, max: 5}
"""

CODE_YAML = """\
name: word-count
type: code
threshold: 1
definition:
  entry_point: my_evals.length:score
  options: {max_words: 50}
"""

BUILTIN_YAML = """\
name: mentions-refund
type: builtin-config
definition:
  evaluator: builtin.regex_match
  initialization_parameters: {patterns: ["(?i)refund"]}
"""


def test_rubric_type(tmp_path: Path) -> None:
    path = tmp_path / "support-agent-quality.v1.yaml"
    path.write_text(RUBRIC_YAML, encoding="utf-8")
    spec = load_evaluator_yaml(path)
    assert spec.created_at == "2026-11-29T21:00:00Z"
    assert isinstance(spec.definition, RubricDefinition)
    assert [d.weight for d in spec.definition.dimensions] == [10, 5]
    assert spec.threshold == 0.5 and spec.source["kind"] == "generated"


@pytest.mark.parametrize("text", [RUBRIC_YAML, PROMPT_YAML, CODE_YAML, BUILTIN_YAML])
def test_dump_then_parse_is_identity(text: str) -> None:
    spec = parse_evaluator_yaml(text, "e.yaml")
    again = parse_evaluator_yaml(dump_evaluator_yaml(spec), "e.yaml")
    assert again == spec


def test_prompt_and_code_types() -> None:
    prompt = parse_evaluator_yaml(PROMPT_YAML, "p.yaml")
    assert prompt.version == "2"
    assert isinstance(prompt.definition, PromptDefinition)
    assert "{{ response }}" in prompt.definition.prompt
    assert "|" in dump_evaluator_yaml(prompt)  # multi-line prompt stays a literal block
    code = parse_evaluator_yaml(CODE_YAML, "c.yaml")
    assert isinstance(code.definition, CodeDefinition)
    assert code.definition.entry_point == "my_evals.length:score"


@pytest.mark.parametrize(
    ("text", "location", "message"),
    [
        (RUBRIC_YAML.replace("type: rubric", "type: llm"), "type (line 3)", 'found "llm"'),
        (
            RUBRIC_YAML.replace("weight: 10", "weight: 11"),
            "definition.dimensions[0].weight (line 10)",
            "expected an integer 1–10, found 11",
        ),
        (
            CODE_YAML.replace("my_evals.length:score", "my_evals.length"),
            "definition.entry_point (line 5)",
            '"module:callable"',
        ),
        (
            PROMPT_YAML.replace("{{ response }}", "{{ response }"),
            "definition.prompt (line 5)",
            "invalid jinja2 template",
        ),
        (
            PROMPT_YAML.replace("{min: 1, max: 5}", "{min: 5, max: 1}"),
            "definition.score_range (line 9)",
            "expected min < max",
        ),
        (BUILTIN_YAML.replace("name: mentions-refund\n", ""), "", 'missing "name"'),
        (
            RUBRIC_YAML.replace('version: "1"', 'version: "../1"'),
            "version (line 2)",
            'expected a version like "1" or "1.0"',
        ),
        ("name: x\ntype: code\n", "", 'missing "definition"'),
        ("- just\n- a list\n", "", "expected a mapping"),
        ("name: [unclosed\n", "line 2", "invalid YAML"),
    ],
)
def test_errors_are_located(text: str, location: str, message: str) -> None:
    with pytest.raises(InputError) as info:
        parse_evaluator_yaml(text, "e.yaml")
    assert any(p.location == location and message in p.message for p in info.value.problems), [
        str(p) for p in info.value.problems
    ]


def test_unknown_keys_warn_with_did_you_mean() -> None:
    problems = evaluator_yaml_problems(RUBRIC_YAML.replace("threshold:", "treshold:"), "e.yaml")
    [w] = problems
    assert w.severity == "warning" and w.location == "treshold (line 7)"
    assert 'did you mean "threshold"?' in w.message


def test_spec_model_is_strict() -> None:
    with pytest.raises(ValueError):
        EvaluatorSpec.model_validate({"name": "x", "type": "code", "definition": {}, "bogus": 1})
