"""The provenance test, call layer (issue 39 item 1): the settings that shape every model call —
pool sizes, call/attempt/stall timeouts, the run deadline, cache reads, the cost cap, the
answer cap, the Foundry project endpoint and the provider addresses — are in the table
`eval run --dry-run` and `optimize --dry-run` print, from the place the precedence says, and
the call layer a run builds uses exactly the values the table shows."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentopt.cli.app import app
from agentopt.models.resolve import project_endpoint as endpoint_of
from agentopt.models.settings import CallSettings
from agentopt.workflows.optimize.options import OptimizeOptions
from agentopt.workflows.optimize.prepare import prepare_optimize
from agentopt.workflows.run.eval_run import prepare_run
from agentopt.workflows.run.inputs import RunOptions
from tests.workflows.test_resolve_suite import env, eval_yaml_project, settings_of

__all__ = ["env"]  # the fixture, shared

ENDPOINT = "https://acct.services.ai.azure.com/api/projects/flagged"
FLAGGED = "https://acct.services.ai.azure.com/api/projects/by-flag"
FILE_ENDPOINT = "https://acct.services.ai.azure.com/api/projects/from-env-file"
LAB = "http://127.0.0.1:9/lab/v1"
FILE_OPTIONS = f"""  max_concurrent_agent_runs: 3
  judge_concurrency: 5
  max_cost: 2.5
  call_timeout_seconds: 30
  attempt_timeout_seconds: 12
  stall_timeout_seconds: 20
  max_answer_bytes: 4096
  providers:
    lab:
      type: compat
      base_url: {LAB}
"""
SHARED = ("agent_concurrency", "judge_concurrency", "call_timeout_s", "attempt_timeout_s",
          "stall_timeout_s", "max_answer_bytes", "max_cost", "project_endpoint",
          "calls_project_endpoint", "openai_base_url", "azure_openai_endpoint")  # fmt: skip
"""Call-layer settings both commands have: they must agree on value and source."""


def _project(root: Path, options: str = "") -> None:
    eval_yaml_project(root, False, None)
    path = root / "eval.yaml"
    path.write_text(path.read_text() + options)


def _line(root: Path, text: str) -> int:
    return next(
        n for n, line in enumerate((root / "eval.yaml").read_text().splitlines(), 1)
        if line.strip().startswith(text)
    )  # fmt: skip


def _dry(root: Path, *args: str, call_timeout: str | None = None) -> dict[str, tuple[str, str]]:
    glob = ["-C", str(root), "--no-prompt"]
    glob += ["--call-timeout", call_timeout] if call_timeout else []
    result = CliRunner().invoke(app, [*glob, *args, "--dry-run"])
    assert result.exit_code == 0, result.output
    return settings_of(result.output)


def test_every_call_setting_is_in_both_tables_with_its_default(
    project: Path, env: pytest.MonkeyPatch
) -> None:
    env.delenv("OPENAI_BASE_URL")
    _project(project)
    run, opt = _dry(project, "eval", "run"), _dry(project, "optimize")
    pools = CallSettings().concurrency
    defaults = {
        "agent_concurrency": str(pools["agent"]),
        "judge_concurrency": str(pools["judge"]),
        "call_timeout_s": str(CallSettings().default_call_timeout_s),
        "attempt_timeout_s": "-",
        "stall_timeout_s": str(CallSettings().stall_timeout_s),
        "max_answer_bytes": "1048576",
        "max_cost": "-",
        "project_endpoint": "-",
        "calls_project_endpoint": "-",
        "openai_base_url": "https://api.openai.com/v1",
        "azure_openai_endpoint": "-",
    }
    for name in SHARED:
        assert run[name] == opt[name] == (defaults[name], "default"), name
    assert run["run_timeout_s"] == ("-", "default")
    assert run["cache_reads"] == ("True", "default")


def test_the_suite_file_sets_them_with_key_and_line(project: Path, env: pytest.MonkeyPatch) -> None:
    _project(project, FILE_OPTIONS)
    run, opt = _dry(project, "eval", "run"), _dry(project, "optimize")
    for name in SHARED:
        assert run[name] == opt[name], name
    expected = {
        "agent_concurrency": ("3", "max_concurrent_agent_runs"),
        "judge_concurrency": ("5", "judge_concurrency"),
        "max_cost": ("2.5", "max_cost"),
        "call_timeout_s": ("30.0", "call_timeout_seconds"),
        "attempt_timeout_s": ("12.0", "attempt_timeout_seconds"),
        "stall_timeout_s": ("20.0", "stall_timeout_seconds"),
        "max_answer_bytes": ("4096", "max_answer_bytes"),
    }
    for name, (value, key) in expected.items():
        where = f"eval.yaml options.{key} (line {_line(project, key + ':')})"
        assert run[name] == (value, where), name
    where = f"eval.yaml options.providers.lab.base_url (line {_line(project, 'base_url:')})"
    assert run["providers.lab"] == opt["providers.lab"] == (LAB, where)
    from_env = ("http://127.0.0.1:9/v1", "environment variable OPENAI_BASE_URL")
    assert run["openai_base_url"] == opt["openai_base_url"] == from_env


def test_flags_win_over_the_suite_file(project: Path, env: pytest.MonkeyPatch) -> None:
    _project(project, FILE_OPTIONS)
    shared = ["--concurrency", "4", "--max-cost", "1.5"]
    run = _dry(project, "eval", "run", *shared, "--judge-concurrency", "6", "--timeout", "90",
               "--no-cache", call_timeout="45")  # fmt: skip
    opt = _dry(project, "optimize", *shared, "-p", ENDPOINT, call_timeout="45")
    for name in ("agent_concurrency", "max_cost", "call_timeout_s"):
        assert run[name] == opt[name], name
    assert run["agent_concurrency"] == ("4", "--concurrency")
    assert run["max_cost"] == ("1.5", "--max-cost")
    assert run["call_timeout_s"] == ("45.0", "--call-timeout")
    assert opt["project_endpoint"] == (ENDPOINT, "--project-endpoint")
    assert opt["calls_project_endpoint"] == (ENDPOINT, "--project-endpoint")
    assert run["judge_concurrency"] == ("6", "--judge-concurrency")
    assert run["run_timeout_s"] == ("90.0", "--timeout")
    assert run["cache_reads"] == ("False", "--no-cache")
    assert opt["judge_concurrency"][1].startswith("eval.yaml options.judge_concurrency")


@pytest.mark.parametrize("in_process", [False, True])
def test_the_project_endpoint_comes_from_the_azd_environment(
    project: Path, env: pytest.MonkeyPatch, in_process: bool
) -> None:
    _project(project)
    with (project / ".azure" / "dev" / ".env").open("a") as out:
        out.write(f'FOUNDRY_PROJECT_ENDPOINT="{FILE_ENDPOINT}"\n')
    source = ".azure/dev/.env FOUNDRY_PROJECT_ENDPOINT"
    if in_process:
        env.setenv("FOUNDRY_PROJECT_ENDPOINT", ENDPOINT)
        source = "environment variable FOUNDRY_PROJECT_ENDPOINT"
    value = ENDPOINT if in_process else FILE_ENDPOINT
    run, opt = _dry(project, "eval", "run"), _dry(project, "optimize")
    assert run["project_endpoint"] == opt["project_endpoint"] == (value, source)
    # The call layer reads the process environment only (models.resolve.project_endpoint).
    calls = (ENDPOINT, source) if in_process else ("-", "default")
    assert run["calls_project_endpoint"] == opt["calls_project_endpoint"] == calls


def test_the_call_layer_uses_what_the_table_shows(project: Path, env: pytest.MonkeyPatch) -> None:
    """Both commands build their `CallSettings` from the resolved suite: a value in the table
    is the value the calls run with (no second merge of flags over the file)."""
    _project(project, FILE_OPTIONS)
    with (project / ".azure" / "dev" / ".env").open("a") as out:
        out.write(f'FOUNDRY_PROJECT_ENDPOINT="{FILE_ENDPOINT}"\n')
    env.setenv("AZURE_AI_PROJECT_ENDPOINT", ENDPOINT)
    run = prepare_run(RunOptions(dry_run=True, timeout=90, no_cache=True, call_timeout=45),
                      project, None)  # fmt: skip
    flagged = OptimizeOptions(dry_run=True, concurrency=4, project_endpoint=FLAGGED)
    job = prepare_optimize(flagged, project, None)
    both = ((run.settings, run.inputs.suite), (job.call_settings, job.inputs.suite))
    for settings, suite in both:
        assert settings.concurrency["agent"] == suite["agent_concurrency"]
        assert settings.concurrency["judge"] == suite["judge_concurrency"] == 5
        assert settings.max_cost_usd == suite["max_cost"] == 2.5
        assert settings.attempt_timeout_s == suite["attempt_timeout_s"] == 12
        assert settings.stall_timeout_s == suite["stall_timeout_s"] == 20
        assert settings.max_answer_bytes == suite["max_answer_bytes"] == 4096
        assert endpoint_of(settings) == suite["calls_project_endpoint"]
    assert run.settings.concurrency["agent"] == 3 and job.call_settings.concurrency["agent"] == 4
    assert run.settings.call_timeout_s == run.inputs.suite["call_timeout_s"] == 45
    assert job.call_settings.call_timeout_s == job.inputs.suite["call_timeout_s"] == 30
    assert run.settings.run_deadline_s == run.inputs.suite["run_timeout_s"] == 90
    assert run.settings.use_cache is run.inputs.suite["cache_reads"] is False
    # The agent's project comes from the azd environment; model calls read the process's.
    assert run.inputs.suite["project_endpoint"] == FILE_ENDPOINT
    assert endpoint_of(run.settings) == ENDPOINT
    assert job.call_settings.project_endpoint == FLAGGED
