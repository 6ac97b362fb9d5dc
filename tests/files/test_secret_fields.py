"""A key pasted by mistake where eval.yaml wants the NAME of an environment variable is refused
without being printed back (issue 14 item 6)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentopt.cli.app import app
from agentopt.core.errors import InputError
from agentopt.core.files import load_eval_config

KEYS = [
    "sk-proj-Zx81kQ2mN4pL7vR9tY3wE6aS",
    "3f9a7c1e5b2d8f4a6c0e9b7d5f3a1c8e",  # an Azure-style hex key
    "gsk live 8H2kd93Kd02",  # not even a name
]


def eval_yaml(project: Path, body: str) -> Path:
    path = project / "eval.yaml"
    path.write_text("name: s\n" + body, encoding="utf-8")
    return path


@pytest.mark.parametrize("key", KEYS)
def test_a_key_in_api_key_env_is_refused_without_echoing_it(tmp_path: Path, key: str) -> None:
    path = eval_yaml(
        tmp_path,
        f"options:\n  providers:\n    lab:\n      type: compat\n"
        f'      base_url: http://127.0.0.1:9/v1\n      api_key_env: "{key}"\n',
    )
    with pytest.raises(InputError) as info:
        load_eval_config(path)
    text = str(info.value)
    assert "options.providers.lab.api_key_env" in text and "name of an environment variable" in text
    assert key not in text and key[:12] not in text


def test_a_secret_in_an_agent_header_is_refused_without_echoing_it(tmp_path: Path) -> None:
    key = KEYS[0]
    path = eval_yaml(tmp_path, f"agent:\n  headers:\n    api-key: {key}\n")
    result = CliRunner().invoke(app, ["eval", "validate", str(path)])
    assert result.exit_code == 2
    output = "".join(result.output.split())
    assert "agent.headers.api-key" in output and key[:10] not in output


@pytest.mark.parametrize("name", ["LAB_API_KEY", "${LAB_TOKEN}", "OPENAI_API_KEY", "labKey"])
def test_variable_names_are_accepted(tmp_path: Path, name: str) -> None:
    path = eval_yaml(
        tmp_path,
        f"options:\n  providers:\n    lab:\n      type: compat\n"
        f'      base_url: http://127.0.0.1:9/v1\n      api_key_env: "{name}"\n',
    )
    config, _ = load_eval_config(path)
    assert config.options.providers["lab"].api_key_env == name.strip("${}")
