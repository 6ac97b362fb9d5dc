"""Property tests: whatever bytes, JSON or YAML a user feeds a loader, the only exception that
escapes is agentopt's own user-facing error (exit 2), never a Python traceback."""

from __future__ import annotations

import contextlib
import json
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentopt.core.errors import AgentoptError
from agentopt.core.files.agent_config import load_agent_config
from agentopt.core.files.azure_yaml import load_azure_yaml
from agentopt.core.files.eval_yaml_load import load_eval_config
from agentopt.core.files.evaluator_yaml import load_evaluator_yaml
from agentopt.core.files.rubric import load_rubric
from agentopt.datasets import load_dataset, validate_dataset

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                [
                    "query",
                    "prompt",
                    "items",
                    "turns",
                    "id",
                    "weight",
                    "name",
                    "dataset",
                    "agent",
                    "evaluators",
                    "schemaVersion",
                    "criteria",
                    "type",
                    "definition",
                    "services",
                    "x",
                ]
            )
            | st.text(max_size=8),
            children,
            max_size=5,
        )
    ),
    max_leaves=12,
)

LOADERS: dict[str, tuple[str, Callable[[Path], Any]]] = {
    "jsonl": ("data.jsonl", lambda p: load_dataset(p, upgrade=False)),
    "json": ("data.json", lambda p: load_dataset(p, upgrade=False)),
    "csv": ("data.csv", lambda p: load_dataset(p, upgrade=False)),
    "validate": ("data.json", lambda p: validate_dataset(p)),
    "eval_yaml": ("eval.yaml", load_eval_config),
    "rubric": ("rubric_dimensions.json", load_rubric),
    "evaluator_yaml": ("quality.v1.yaml", load_evaluator_yaml),
    "azure_yaml": ("azure.yaml", load_azure_yaml),
    "metadata": ("metadata.yaml", load_agent_config),
}


def feed(content: bytes) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        for file_name, loader in LOADERS.values():
            path = Path(tmp) / file_name
            path.write_bytes(content)
            with contextlib.suppress(AgentoptError):
                loader(path)


FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FAST
@given(st.binary(max_size=300))
def test_random_bytes(content: bytes) -> None:
    feed(content)


@FAST
@given(json_values)
def test_random_json(value: Any) -> None:
    feed(json.dumps(value).encode())


@FAST
@given(st.lists(json_values, min_size=1, max_size=4))
def test_random_json_lines(values: list[Any]) -> None:
    feed("\n".join(json.dumps(v) for v in values).encode())


@FAST
@given(json_values)
def test_random_yaml(value: Any) -> None:
    feed(yaml.safe_dump(value, allow_unicode=True).encode())
