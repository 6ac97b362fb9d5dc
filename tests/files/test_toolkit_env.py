"""The Agents Toolkit's env files (`--env NAME`): which files, in which order, what wins."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentopt.core.errors import ConfigError, InputError
from agentopt.core.files.toolkit_env import env_names, load_toolkit_env


def test_the_user_file_overrides_and_the_process_wins(tmp_path: Path) -> None:
    (tmp_path / "env").mkdir()
    (tmp_path / "env" / ".env.dev").write_text(
        "AZURE_AI_OPENAI_ENDPOINT=https://a.openai.azure.com  # inline note\nA=1\nB=2\n"
    )
    (tmp_path / "env" / ".env.dev.user").write_text("B=from-user\nAZURE_AI_API_KEY='k'\n")
    env = load_toolkit_env(tmp_path, "dev")
    assert [p.name for p in env.files] == [".env.dev", ".env.dev.user"]
    assert env.values["B"] == "from-user"
    added = env.layered({"A": "from-process", "AZURE_OPENAI_API_KEY": "mine"})
    assert "A" not in added and added["B"] == "from-user"
    assert added["AZURE_OPENAI_ENDPOINT"] == "https://a.openai.azure.com"
    assert "AZURE_OPENAI_API_KEY" not in added  # the process has agentopt's own name set


def test_dot_env_name_in_the_project_folder_when_env_has_none(tmp_path: Path) -> None:
    (tmp_path / ".env.local").write_text("X=1\n")
    (tmp_path / ".env.local.user").write_text("X=2\n")
    assert load_toolkit_env(tmp_path, "local").values == {"X": "2"}
    assert env_names(tmp_path) == ["local"]


@pytest.mark.parametrize("name", ["../etc/passwd", "dev.user", "", " dev"])
def test_a_name_that_is_not_an_environment_is_refused(tmp_path: Path, name: str) -> None:
    with pytest.raises(ConfigError) as err:
        load_toolkit_env(tmp_path, name)
    assert "--env" in str(err.value)


def test_an_unreadable_env_file_is_an_input_error_naming_it(tmp_path: Path) -> None:
    (tmp_path / "env").mkdir()
    (tmp_path / "env" / ".env.dev").write_bytes(b"A=\xff\xfe\x00bad\n")
    with pytest.raises(InputError) as err:
        load_toolkit_env(tmp_path, "dev")
    assert ".env.dev" in str(err.value) and err.value.exit_code == 2
