"""Fixtures for `--remote`: the fake Foundry project and an azd project pointing at it."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from azure.core.credentials import AccessToken, AccessTokenInfo

from agentopt.workflows.remote.client import FoundryProject, RetrySettings
from tests.foundry.fake_project import FakeFoundry

TOKEN = "fake-entra-token-7c1e9f"
SUBSCRIPTION = "0b1f6471-1bf0-4dda-aec3-cb9272f09590"
TASKS = [
    {
        "name": "refund_window",
        "query": "How long do I have to return shoes?",
        "ground_truth": "30 days",
    },
    {"name": "shipping", "query": "Do you ship to Canada?", "ground_truth": "Canada"},
    {"name": "hours", "query": "When are you open?", "ground_truth": "9am"},
    {"name": "greeting", "query": "Hello!"},
    {"name": "order_status", "query": "Where is order 12345?", "ground_truth": "shipped"},
]
RUBRIC = [
    {"id": "accuracy", "description": "States store policy correctly.", "weight": 10},
    {
        "id": "general_quality",
        "description": "Other important quality factors.",
        "weight": 5,
        "always_applicable": True,
    },
]


class FakeCredential:
    """A sync Azure token credential with a fixed token (records the scopes asked for)."""

    def __init__(self) -> None:
        self.scopes: list[tuple[str, ...]] = []

    def get_token(self, *scopes: str, **kwargs: Any) -> AccessToken:
        self.scopes.append(scopes)
        return AccessToken(TOKEN, int(time.time()) + 3600)

    def get_token_info(self, *scopes: str, options: Any = None) -> AccessTokenInfo:
        self.scopes.append(scopes)
        return AccessTokenInfo(TOKEN, int(time.time()) + 3600)


@pytest.fixture
def foundry() -> Iterator[FakeFoundry]:
    with FakeFoundry() as server:
        server.add_agent(
            "support-agent",
            {"kind": "prompt", "model": "gpt-4.1-mini", "instructions": "Help shoppers."},
            version="3",
        )
        yield server


@pytest.fixture
def credential() -> FakeCredential:
    return FakeCredential()


@pytest.fixture
def factory(credential: FakeCredential) -> Any:
    """endpoint → FoundryProject with the fake credential and millisecond back-off."""

    def make(endpoint: str) -> FoundryProject:
        return FoundryProject(
            endpoint, credential, retry=RetrySettings(base_delay_s=0.001, max_delay_s=0.01)
        )

    return make


def write_azd_project(root: Path, endpoint: str, *, evaluators: list[Any] | None = None) -> Path:
    """An azd project as `azd init` + `azd deploy` leave it, with an eval suite."""
    (root / "azure.yaml").write_text(
        "name: shop\nservices:\n  support:\n    host: azure.ai.agent\n    project: .\n"
        "    kind: prompt\n    model: gpt-4.1-mini\n"
        "    instructions: You help shoppers of an online shoe store.\n",
        encoding="utf-8",
    )
    env = root / ".azure" / "dev"
    env.mkdir(parents=True)
    (root / ".azure" / "config.json").write_text('{"defaultEnvironment": "dev"}', encoding="utf-8")
    project_id = (
        f"/subscriptions/{SUBSCRIPTION}/resourceGroups/rg-shop/providers/"
        "Microsoft.CognitiveServices/accounts/shop-ai/projects/shop"
    )
    (env / ".env").write_text(
        f'AZURE_ENV_NAME="dev"\nFOUNDRY_PROJECT_ENDPOINT="{endpoint}"\n'
        'AGENT_SUPPORT_NAME="support-agent"\nAGENT_SUPPORT_VERSION="3"\n'
        f'AZURE_AI_PROJECT_ID="{project_id}"\n',
        encoding="utf-8",
    )
    data = root / "datasets" / "shop-eval-seed"
    data.mkdir(parents=True)
    (data / "shop-eval-seed.jsonl").write_text(
        "".join(json.dumps(t) + "\n" for t in TASKS), encoding="utf-8"
    )
    rubric = root / "evaluators" / "shop-quality"
    rubric.mkdir(parents=True)
    (rubric / "rubric_dimensions.json").write_text(json.dumps(RUBRIC), encoding="utf-8")
    chosen = evaluators or [
        "builtin.relevance",
        {"name": "shop-quality", "local_uri": "evaluators/shop-quality/rubric_dimensions.json"},
        {"name": "builtin.regex_match", "initialization_parameters": {"patterns": ["(?i)answers"]}},
    ]
    lines = ["name: shop-smoke", "agent:", "  name: support", "dataset:"]
    lines.append("  local_uri: datasets/shop-eval-seed/shop-eval-seed.jsonl")
    lines.append("evaluators:")
    for ev in chosen:
        lines.append(f"  - {json.dumps(ev)}")
    lines += ["options:", "  eval_model: gpt-4.1-mini"]
    (root / "eval.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root
