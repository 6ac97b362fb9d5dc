"""An in-process agent on the embedded model runs one task at a time: the model serves one
request at a time, and tasks queued behind it timed out inside their turn timeout."""

from __future__ import annotations

from pathlib import Path

from agentopt.core.files.agent_definition import AgentDefinition
from agentopt.models import CallLayer, CallSettings
from agentopt.workflows.run.embedded import plays_on_the_embedded_model
from agentopt.workflows.run.eval_run import prepare_run
from agentopt.workflows.run.inputs import RunOptions


def test_only_in_process_agents_on_the_embedded_model_count(project: Path) -> None:
    layer = CallLayer(project, CallSettings())
    local = AgentDefinition(name="a", model="local:smollm2-135m", instructions="Be brief.")
    assert plays_on_the_embedded_model(local, layer)
    assert not plays_on_the_embedded_model(local.model_copy(update={"model": "mock:echo"}), layer)
    remote = local.model_copy(update={"target": "endpoint", "endpoint": "http://127.0.0.1:9"})
    assert not plays_on_the_embedded_model(remote, layer)  # its model runs elsewhere
    assert not plays_on_the_embedded_model(AgentDefinition(name="h", kind="hosted"), layer)


def test_eval_run_gives_the_embedded_agent_one_slot_unless_asked(project: Path) -> None:
    def slots(**flags: object) -> int:
        opts = RunOptions(
            prompts=["hi"], evaluators=["ExactMatch"], agent_model="local:smollm2-135m", **flags
        )
        return prepare_run(opts, project, None).settings.concurrency["agent"]

    assert slots() == 1
    assert slots(concurrency=3) == 3  # the user's number wins
    mock = RunOptions(prompts=["hi"], evaluators=["ExactMatch"], agent_model="mock:echo")
    assert prepare_run(mock, project, None).settings.concurrency["agent"] > 1
