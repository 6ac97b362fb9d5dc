"""The same flows through LiteLLM's proxy (`litellm[proxy]`, a throwaway venv that `make test`
installs) routing to the real llama.cpp server: what many teams put in front of their models.
The proxy forwards `response_format` and `tools` and keeps the backend's words in its errors,
so agentopt must select the same modes through it as against the server alone."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fake_openai import FakeOpenAI
from tests.servers.flows import (
    JUDGES,
    agentopt,
    check_judged_run,
    check_tool_run,
    example_project,
    run_tool_agent,
)
from tests.servers.harness import LITELLM_KEY, MODEL, Server, recording_relay

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]


@pytest.fixture
def relay(litellm: Server, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAI]:
    monkeypatch.setenv("LITELLM_MASTER_KEY", LITELLM_KEY)
    relay = recording_relay(litellm.base_url)
    yield relay
    relay.stop()


def test_eval_run_with_llm_judges_through_litellm(relay: FakeOpenAI, tmp_path: Path) -> None:
    project = example_project(
        tmp_path, relay.base_url, evaluators=JUDGES, api_key_env="LITELLM_MASTER_KEY"
    )
    # One task: the llama.cpp test judges two; through the proxy the modes are what is new.
    code, out = agentopt(project, "eval", "run", "--limit", "1", "--max-errors", "100")
    assert code == 0, out
    data = check_judged_run(project, relay, tasks=1)
    modes = data["run"]["model_capabilities"][f"llama:{MODEL}"]
    assert modes["structured_output"] == "json_schema_strict"
    assert relay.chat_requests[0].headers["authorization"] == f"Bearer {LITELLM_KEY}"
    assert LITELLM_KEY not in out


def test_a_tool_using_agent_through_litellm(relay: FakeOpenAI, tmp_path: Path) -> None:
    project, code, out = run_tool_agent(tmp_path, relay.base_url, api_key_env="LITELLM_MASTER_KEY")
    assert code == 0, out
    check_tool_run(project, relay, out)
