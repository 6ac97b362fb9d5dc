"""The pieces of the Ray executor that need no cluster (and import no Ray): what crosses to a
worker, how paths move to the worker's copy of the project, errors sent back, the executor
settings and their errors."""

from __future__ import annotations

import dataclasses
import importlib.util
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentopt.cli.app import app
from agentopt.contracts.task import Dataset, Task, Turn
from agentopt.core.errors import BudgetExceeded, ConfigError, ModelCallError
from agentopt.core.files.agent_definition import AgentDefinition, McpServer
from agentopt.evaluators.base import EvaluatorUse
from agentopt.models.settings import CallSettings, ProviderConfig
from agentopt.workflows.cluster.wire import RaisedError, UnitReply, UnitSpec, env_names
from agentopt.workflows.executor import ExecutorSettings
from agentopt.workflows.run.engine import EngineSpec
from agentopt.workflows.run.simulated_user import Simulation

DRIVER = Path("/srv/driver/project")


def spec(**agent: object) -> EngineSpec:
    task = Task(name="t1", turns=[Turn(query="q")])
    definition = AgentDefinition(
        name="a",
        folder=DRIVER / "agent",
        tools_module=str(DRIVER / "agent" / "tools.py"),
        mcp_servers=[McpServer(name="m", command="python", args=[str(DRIVER / "mcp.py"), "-v"])],
        **agent,  # type: ignore[arg-type]
    )
    return EngineSpec(
        project_dir=DRIVER,
        dataset=Dataset(tasks=[task] * 3, source="tasks.jsonl", document={"big": "doc"}),
        tasks=[task] * 3,
        agent=definition,
        evaluators=[
            EvaluatorUse(name="rubric", local_uri=str(DRIVER / "rubric_dimensions.json")),
            EvaluatorUse(name="elsewhere", local_uri="/opt/shared/check.py"),
        ],
        judge_model="gpt-4.1-mini",
        candidate_id="c1",
    )


def test_the_spec_travels_without_tasks_and_its_paths_move_to_the_workers_copy() -> None:
    wire = UnitSpec.model_validate_json(UnitSpec.of(spec()).model_dump_json())
    assert wire.dataset.tasks == [] and wire.dataset.document is None
    moved = wire.engine_spec(Path("/ray/session/working_dir"))
    root = "/ray/session/working_dir"
    assert moved.project_dir == Path(root)
    assert moved.agent.folder == Path(f"{root}/agent")
    assert moved.agent.tools_module == f"{root}/agent/tools.py"
    assert moved.agent.mcp_servers[0].args == [f"{root}/mcp.py", "-v"]
    assert [u.local_uri for u in moved.evaluators] == [
        f"{root}/rubric_dimensions.json",
        "/opt/shared/check.py",  # outside the project: left as it is
    ]
    assert moved.candidate_id == "c1" and moved.judge_model == "gpt-4.1-mini"


def test_simulated_users_travel_with_the_spec() -> None:
    """A worker plays a persona task as the driver would: same simulator, level, turns, seed."""
    sim = Simulation(model="compat:sim", level="conversation", default_turns=3, seed=7)
    driver = dataclasses.replace(spec(), simulation=sim)
    wire = UnitSpec.model_validate_json(UnitSpec.of(driver).model_dump_json())
    assert wire.engine_spec(DRIVER).simulation == sim


def test_a_hosted_agent_gets_a_free_port_on_a_worker() -> None:
    moved = UnitSpec.of(spec(target="hosted", port=8088)).engine_spec(DRIVER)
    assert moved.agent.port == 0
    assert UnitSpec.of(spec(port=8088)).engine_spec(DRIVER).agent.port == 8088


def test_a_systemic_error_comes_back_as_the_same_kind() -> None:
    err = BudgetExceeded("cost budget reached", hint="raise --max-cost")
    reply = UnitReply.model_validate_json(UnitReply(raised=RaisedError.of(err)).model_dump_json())
    with pytest.raises(BudgetExceeded) as raised:
        reply.unit()
    assert raised.value.hint == "raise --max-cost"
    other = RaisedError.of(ModelCallError("boom", kind="server")).error()
    assert other.exit_code == 3 and other.message == "boom"


def test_env_names_are_the_set_model_variables_and_named_keys(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-x")
    monkeypatch.setenv("LAB_KEY", "k")
    monkeypatch.delenv("AZURE_OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("HEADER_TOKEN", "t")
    settings = CallSettings(
        providers={"lab": ProviderConfig(type="compat", base_url="http://x", api_key_env="LAB_KEY")}
    )
    agent = AgentDefinition(name="a", headers_from_env={"X-Key": "HEADER_TOKEN"})
    names = env_names(settings, agent)
    assert {"OPENAI_API_KEY", "LAB_KEY", "HEADER_TOKEN"} <= set(names)
    assert "AZURE_OPENAI_API_KEY" not in names
    assert "sk-x" not in " ".join(names)


def test_executor_settings_flag_over_config_and_clear_errors(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert ExecutorSettings.of(None, None, None).kind == "local"
    assert ExecutorSettings.of("local", "ray", None).kind == "local"
    with pytest.raises(ConfigError, match="unknown executor 'dask'"):
        ExecutorSettings.of("dask", None, None)
    with pytest.raises(ConfigError, match="--ray-address needs --executor ray"):
        ExecutorSettings.of(None, None, "127.0.0.1:6379")
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "ray" else real(name, *a)
    )
    with pytest.raises(ConfigError, match="needs Ray") as err:
        ExecutorSettings.of(None, "ray", None)
    assert "agentopt[ray]" in str(err.value)


def test_cli_rejects_an_unknown_executor_before_creating_a_run(project: Path) -> None:
    (project / "tasks.jsonl").write_text('{"name": "t", "query": "q"}\n')
    result = CliRunner().invoke(
        app,
        ["-C", str(project), "--no-prompt", "eval", "run", "--prompts-file", "tasks.jsonl",
         "--agent-model", "compat:x@http://127.0.0.1:9/v1", "--executor", "spark"],
    )  # fmt: skip
    assert result.exit_code == 2, result.output
    assert "unknown executor 'spark'" in result.output and "local, ray" in result.output
    assert not (project / ".agentopt" / "runs").exists()
