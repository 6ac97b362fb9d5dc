"""`agentopt optimize --remote` and its subcommands through the CLI, against the fake Foundry
project (V2Preview `agent_optimization_jobs`): each command's requests, asserted on the fake's
log, and the local files azd would write."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agentopt.cli.app import app
from agentopt.contracts.optimize_job import load_job
from tests.foundry.azcli import files_containing, install_az
from tests.foundry.conftest import TASKS, write_azd_project
from tests.foundry.fake_project import FakeFoundry

TOKEN = "opt-token-5e8a1d2c"
JOBS_ROUTE = r"^/agent_optimization_jobs$"
INSTRUCTIONS = "You help shoppers of an online shoe store."
runner = CliRunner()


def cli(project: Path, *args: str) -> tuple[int, str]:
    result = runner.invoke(app, ["-C", str(project), "--no-prompt", *args])
    return result.exit_code, result.output


@pytest.fixture
def az(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    install_az(tmp_path_factory.mktemp("azbin"), TOKEN, monkeypatch)


def write_opt_project(root: Path, endpoint: str, *, evaluators: list[Any] | None = None) -> Path:
    """An azd project with a baseline (skills, tools) and an optimization suite."""
    write_azd_project(
        root,
        endpoint,
        evaluators=evaluators
        or [
            "builtin.task_adherence",
            {"name": "shop-quality", "local_uri": "evaluators/shop-quality/rubric_dimensions.json"},
        ],
    )
    base = root / ".agent_configs" / "baseline"
    (base / "skills" / "returns").mkdir(parents=True)
    (base / "metadata.yaml").write_text(
        "model: gpt-4.1-mini\ninstruction_file: instructions.md\ntools_file: tools.json\n"
        "skill_dir: skills\n",
        encoding="utf-8",
    )
    (base / "instructions.md").write_text(INSTRUCTIONS + "\n", encoding="utf-8")
    tool = {
        "type": "function",
        "function": {
            "name": "get_order",
            "description": "Look up an order.",
            "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}},
        },
    }
    (base / "tools.json").write_text(json.dumps([tool]), encoding="utf-8")
    (base / "skills" / "returns" / "SKILL.md").write_text(
        "---\nname: returns\ndescription: How returns work.\n---\nReturns are free for 30 days.\n",
        encoding="utf-8",
    )
    text = (root / "eval.yaml").read_text(encoding="utf-8")
    text = text.replace(
        "agent:\n  name: support\n",
        "agent:\n  name: support\n  config: .agent_configs/baseline/metadata.yaml\n",
    )
    text += (
        "  optimization_model: gpt-5.1\n  optimization_config:\n    model_search_space: [gpt-4.1]\n"
    )
    (root / "eval.yaml").write_text(text, encoding="utf-8")
    return root


def job_dir(project: Path) -> Path:
    (found,) = sorted((project / ".agentopt" / "optimize").iterdir())
    return found


def env_values(project: Path) -> str:
    return (project / ".azure" / "dev" / ".env").read_text(encoding="utf-8")


def test_submit_and_watch_write_a_local_job(project: Path, foundry: FakeFoundry, az: None) -> None:
    write_opt_project(project, foundry.endpoint)
    foundry.fail("GET", r"^/agent_optimization_jobs/[^/]+$", 429, retry_after="0")
    code, out = cli(project, "optimize", "--remote", "--poll-interval", "0")
    assert code == 0, out
    (submit,) = foundry.calls("POST", r"^/agent_optimization_jobs$")
    assert submit.headers["foundry-features"] == "AgentsOptimization=V2Preview"
    assert submit.headers["operation-id"] and submit.query == {"api-version": "v1"}
    inputs = submit.body["inputs"]
    assert inputs["agent"] == {"agent_name": "support-agent", "agent_version": "3"}
    # azd `loadJSONLRawFile`: each line of the local file as it is (`name` kept).
    assert inputs["train_dataset"] == {"type": "inline", "items": TASKS}
    assert inputs["evaluators"] == [
        {"name": "builtin.task_adherence"},
        {"name": "shop-quality", "version": "1"},
    ]
    options = inputs["options"]
    assert options["optimization_model"] == "gpt-5.1" and options["eval_model"] == "gpt-4.1-mini"
    assert "max_candidates" not in options  # unset: azd omits it, the service's default applies
    config = options["optimization_config"]
    assert config["system_prompt"].strip() == INSTRUCTIONS
    assert config["model"] == "gpt-4.1-mini" and config["model_search_space"] == ["gpt-4.1"]
    assert config["skills"] == [
        {
            "name": "returns",
            "description": "How returns work.",
            "body": "Returns are free for 30 days.",
        }
    ]
    assert config["tools"][0]["function"]["name"] == "get_order"

    job = load_job(job_dir(project) / "job.json")  # the local job model reads it
    remote = job.config["remote"]
    assert job.status == "completed" and job.outcome == "improved"
    assert job.candidates[0].id == "baseline"
    best = job.candidate(job.best or "")
    assert best is not None and best.star and best.strategy == "instructions"
    assert best.validation is not None and best.validation.score == pytest.approx(0.82)
    assert best.validation.n == 5 and best.validation.pass_rate == pytest.approx(0.8)
    assert any(c.strategy == "model:gpt-4.1" for c in job.candidates)
    assert f'AGENT_SUPPORT_OPTIMIZATION_JOB_ID="{remote["job_id"]}"' in env_values(project)
    assert f'OPTIMIZE_LAST_OPERATION_ID="{remote["job_id"]}"' in env_values(project)
    assert f"agentopt optimize apply --candidate {best.id}" in out
    assert "Portal: https://ai.azure.com/nextgen/r/" in out

    gets = len(foundry.calls("GET", r"^/agent_optimization_jobs/[^/]+$"))
    code, out = cli(project, "optimize", "status", job.id)
    assert code == 0 and best.id in out
    assert len(foundry.calls("GET", r"^/agent_optimization_jobs/[^/]+$")) == gets + 1
    code, out = cli(project, "optimize", "list")
    assert code == 0 and job.id in out
    assert files_containing(project, TOKEN) == []


def test_no_wait_then_status_watch(project: Path, foundry: FakeFoundry, az: None) -> None:
    write_opt_project(project, foundry.endpoint)
    code, out = cli(project, "optimize", "--remote", "--no-wait")
    assert code == 0, out
    job_id = job_dir(project).name
    assert f"agentopt optimize status {job_id} --watch" in out
    assert not foundry.calls("GET", r"^/agent_optimization_jobs/")
    code, out = cli(project, "optimize", "status", job_id, "--watch", "--poll-interval", "0")
    assert code == 0, out
    assert load_job(job_dir(project) / "job.json").status == "completed"


def test_cancel_a_running_job_and_refuse_a_finished_one(
    project: Path, foundry: FakeFoundry, az: None
) -> None:
    write_opt_project(project, foundry.endpoint)
    foundry.polls_per_state = 1000
    code, out = cli(project, "optimize", "--remote", "--no-wait")
    assert code == 0, out
    job_id = job_dir(project).name
    code, out = cli(project, "optimize", "cancel", job_id)
    assert code == 0, out
    (cancel,) = foundry.calls("POST", r":cancel$")
    remote_id = load_job(job_dir(project) / "job.json").config["remote"]["job_id"]
    assert cancel.path == f"/agent_optimization_jobs/{remote_id}:cancel"
    assert cancel.headers["foundry-features"] == "AgentsOptimization=V2Preview"
    assert load_job(job_dir(project) / "job.json").status == "cancelled"
    code, out = cli(project, "optimize", "cancel", job_id)
    assert code == 2 and "already finished" in out


def test_apply_writes_what_azd_writes(project: Path, foundry: FakeFoundry, az: None) -> None:
    write_opt_project(project, foundry.endpoint)
    assert cli(project, "optimize", "--remote", "--poll-interval", "0")[0] == 0
    job = load_job(job_dir(project) / "job.json")
    best = job.best or ""
    remote_id = job.config["remote"]["job_id"]
    code, out = cli(project, "optimize", "apply", "--candidate", best)
    assert code == 0, out
    base = f"/agent_optimization_jobs/{remote_id}/candidates/{best}"
    assert foundry.calls("GET", rf"^{base}/config$") and foundry.calls("GET", rf"^{base}$")
    (skill,) = foundry.calls("GET", rf"^{base}/files$")
    assert skill.query["path"] == "skills/returns/SKILL.md"
    folder = project / ".agent_configs" / best
    assert "30-day refund window" in (folder / "instructions.md").read_text()
    assert "returns" in (folder / "skills" / "returns" / "SKILL.md").read_text()
    assert json.loads((folder / "tools.json").read_text())[0]["function"]["name"] == "get_order"
    assert "instruction_file: instructions.md" in (folder / "metadata.yaml").read_text()
    azure = (project / "azure.yaml").read_text()
    assert "OPTIMIZATION_LOCAL_DIR: .agent_configs" in azure
    assert f"OPTIMIZATION_CANDIDATE_ID: {best}" in azure
    assert list(project.glob("azure.yaml.bak.*"))  # the user's file was backed up first
    assert f'AGENT_SUPPORT_OPTIMIZATION_CANDIDATE_ID="{best}"' in env_values(project)
    assert "+Always state the 30-day refund window." in out
    code, out = cli(project, "optimize", "show", "--candidate", best)
    assert code == 0 and "30-day refund window" in out


@pytest.mark.parametrize("kind", ["prompt", "hosted"])
def test_deploy_creates_a_version_and_records_it(
    project: Path, foundry: FakeFoundry, az: None, kind: str
) -> None:
    definition: dict[str, Any] = (
        {"kind": "prompt", "model": "gpt-4.1-mini", "instructions": INSTRUCTIONS}
        if kind == "prompt"
        else {
            "kind": "hosted",
            "container_configuration": {"image": "shop.azurecr.io/support:1"},
            "environment_variables": {"LOG_LEVEL": "info"},
            "protocol_versions": [{"protocol": "responses", "version": "v1"}],
        }
    )
    foundry.add_agent("support-agent", definition, version="3")
    write_opt_project(project, foundry.endpoint)
    foundry.polls_per_state = 2
    assert cli(project, "optimize", "--remote", "--poll-interval", "0")[0] == 0
    job = load_job(job_dir(project) / "job.json")
    best = job.best or ""
    code, out = cli(project, "optimize", "deploy", "--candidate", best, "--poll-interval", "0")
    assert code == 0, out
    assert foundry.calls("GET", r"^/agents/support-agent$")
    (created,) = foundry.calls("POST", r"^/agents/support-agent/versions$")
    assert created.body["description"] == f"Optimized: candidate {best}"
    assert created.body["metadata"] == {"optimized_from": best}
    new = created.body["definition"]
    if kind == "prompt":
        assert "30-day refund window" in new["instructions"]
    else:
        config = json.loads(new["environment_variables"]["OPTIMIZATION_CONFIG"])
        assert "30-day refund window" in config["system_prompt"]
        assert new["environment_variables"]["LOG_LEVEL"] == "info"
        assert new["protocol_versions"][0]["version"] == "1.0.0"
    assert len(foundry.calls("GET", r"^/agents/support-agent/versions/4$")) >= 2  # until active
    (promote,) = foundry.calls("POST", r":promote$")
    assert promote.body == {"agent_name": "support-agent", "agent_version": "4"}
    assert "as version 4" in out


def test_a_failed_job_is_exit_3_with_its_error(
    project: Path, foundry: FakeFoundry, az: None
) -> None:
    write_opt_project(project, foundry.endpoint)
    foundry.optimize.fail_jobs = {"code": "EvaluationFailed", "message": "judge quota exhausted"}
    code, out = cli(project, "optimize", "--remote", "--poll-interval", "0")
    assert code == 3, out
    assert "judge quota exhausted" in out
    assert load_job(job_dir(project) / "job.json").status == "failed"


def test_a_submission_cut_short_is_resent_with_the_same_operation_id(
    project: Path, foundry: FakeFoundry, az: None
) -> None:
    write_opt_project(project, foundry.endpoint)
    foundry.fail("POST", JOBS_ROUTE, 429, retry_after="0", times=5)  # all 5 attempts of one command
    code, out = cli(project, "optimize", "--remote", "--no-wait")
    assert code == 3 and "gave up" in out
    job_id = job_dir(project).name
    code, out = cli(project, "optimize", "status", job_id)
    assert code == 2 and "never accepted" in out and f"--resume {job_id}" in out
    code, out = cli(project, "optimize", "--resume", job_id, "--poll-interval", "0")
    assert code == 0, out
    posts = foundry.calls("POST", JOBS_ROUTE)
    assert len({p.headers["operation-id"] for p in posts}) == 1 and len(posts) >= 6
    assert len(foundry.optimize.jobs) == 1
    assert load_job(job_dir(project) / "job.json").status == "completed"


def test_what_foundry_cannot_run_is_refused_before_submitting(
    project: Path, foundry: FakeFoundry, az: None, tmp_path_factory: pytest.TempPathFactory
) -> None:
    write_opt_project(project, foundry.endpoint, evaluators=["builtin.relevance", "ExactMatch"])
    code, out = cli(project, "optimize", "--remote")
    assert code == 2 and "builtin.exact_match" in out.replace("ExactMatch", "builtin.exact_match")
    other = write_opt_project(tmp_path_factory.mktemp("undeployed"), foundry.endpoint)
    env = other / ".azure" / "dev" / ".env"
    env.write_text(env.read_text().replace('AGENT_SUPPORT_NAME="support-agent"\n', ""))
    code, out = cli(other, "optimize", "--remote")
    assert code == 2 and "AGENT_SUPPORT_NAME" in out and "azd deploy" in out
    assert not foundry.calls("POST", r"^/agent_optimization_jobs")
