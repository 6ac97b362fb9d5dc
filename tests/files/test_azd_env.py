"""The azd environment: .env parsing, which environment, identity and endpoint precedence."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentopt.core.files.azd_env import (
    azd_env_name,
    deployed_identity,
    load_azd_environment,
    parse_dotenv,
    resolve_project_endpoint,
    service_env_prefix,
)


def test_parse_dotenv_quotes_comments_and_export() -> None:
    text = (
        "# written by azd\n"
        'AZURE_ENV_NAME="dev"\n'
        "export PLAIN=value # trailing comment\n"
        "SINGLE='raw $x \\n'\n"
        'ESCAPED="a\\nb \\"q\\""\n'
        'MULTI="line1\nline2"\n'
        "EMPTY=\n"
        "HASH=abc#def\n"
        "not a line\n"
    )
    assert parse_dotenv(text) == {
        "AZURE_ENV_NAME": "dev",
        "PLAIN": "value",
        "SINGLE": "raw $x \\n",
        "ESCAPED": 'a\nb "q"',
        "MULTI": "line1\nline2",
        "EMPTY": "",
        "HASH": "abc#def",
    }


@pytest.mark.parametrize(
    ("service", "prefix"),
    [("support-agent", "AGENT_SUPPORT_AGENT_"), ("my agent", "AGENT_MY_AGENT_"), ("x", "AGENT_X_")],
)
def test_service_prefix(service: str, prefix: str) -> None:
    assert service_env_prefix(service) == prefix


def _azd(root: Path, default: str | None, envs: dict[str, str]) -> None:
    (root / ".azure").mkdir()
    if default:
        (root / ".azure/config.json").write_text(
            f'{{"version": 1, "defaultEnvironment": "{default}"}}'
        )
    for name, text in envs.items():
        (root / ".azure" / name).mkdir()
        (root / ".azure" / name / ".env").write_text(text, encoding="utf-8")


def test_env_name_from_variable_then_config(tmp_path: Path) -> None:
    _azd(tmp_path, "dev", {"dev": "A=1\n", "prod": "A=2\n"})
    assert azd_env_name(tmp_path, {}) == "dev"
    assert azd_env_name(tmp_path, {"AZURE_ENV_NAME": "prod"}) == "prod"
    assert load_azd_environment(tmp_path, {"AZURE_ENV_NAME": "prod"}).get("A") == "2"
    assert load_azd_environment(tmp_path, {}).get("A") == "1"
    assert azd_env_name(tmp_path / "nowhere", {}) is None


def test_identity_process_env_wins_over_env_file(tmp_path: Path) -> None:
    _azd(
        tmp_path,
        "dev",
        {"dev": 'AGENT_SUPPORT_AGENT_NAME="support-agent"\nAGENT_SUPPORT_AGENT_VERSION="3"\n'},
    )
    env = load_azd_environment(tmp_path, {})
    assert deployed_identity("support-agent", env) == ("support-agent", "3")
    env = load_azd_environment(tmp_path, {"AGENT_SUPPORT_AGENT_VERSION": "7"})
    assert deployed_identity("support-agent", env) == ("support-agent", "7")
    assert deployed_identity("other", env) == (None, None)


def test_endpoint_precedence(tmp_path: Path) -> None:
    _azd(tmp_path, "dev", {"dev": "AZURE_AI_PROJECT_ENDPOINT=https://old\n"})
    env = load_azd_environment(tmp_path, {"FOUNDRY_PROJECT_ENDPOINT": "https://new"})
    assert resolve_project_endpoint("https://flag", env) == ("https://flag", [])
    assert resolve_project_endpoint(None, env) == ("https://new", [])
    endpoint, [warning] = resolve_project_endpoint(None, load_azd_environment(tmp_path, {}))
    assert endpoint == "https://old"
    assert warning.location == "AZURE_AI_PROJECT_ENDPOINT" and "deprecated" in warning.message
    assert "FOUNDRY_PROJECT_ENDPOINT" in warning.message
    assert resolve_project_endpoint(None, load_azd_environment(tmp_path / "x", {})) == (None, [])
