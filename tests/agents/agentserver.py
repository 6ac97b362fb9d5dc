"""The real hosted-agent server packages (azure-ai-agentserver-responses / -invocations /
-optimization from PyPI) live in their own venv, as a hosted agent's dependencies live in its
project `.venv` (`make agentserver-venv`). These helpers find it and set up an agent folder the
way `azd ai agent run` would start it: `<folder>/.venv/bin/python main.py`."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parent / "fixtures"
ENV = "AGENTOPT_AGENTSERVER_PYTHON"
DEFAULT = Path.home() / ".cache" / "agentopt" / "agentserver-venv" / "bin" / "python"
MODULES = "azure.ai.agentserver.responses, azure.ai.agentserver.invocations, " + (
    "azure.ai.agentserver.optimization"
)


def agentserver_python() -> Path:
    """The venv's interpreter; under `make test` (AGENTOPT_REQUIRE_LOCAL=1) a missing venv
    fails the test instead of skipping it."""
    path = Path(os.environ.get(ENV) or DEFAULT)
    ok = path.is_file() and (
        subprocess.run([str(path), "-c", f"import {MODULES}"], capture_output=True).returncode == 0
    )
    if not ok:
        message = f"no agentserver venv at {path}: run `make agentserver-venv`"
        if os.environ.get("AGENTOPT_REQUIRE_LOCAL") == "1":
            pytest.fail(message)
        pytest.skip(message)
    return path


def install_agent(folder: Path, protocol: str, python: Path) -> Path:
    """Our tiny agent on `protocol` as the folder's main.py, and the venv as its `.venv`."""
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(FIXTURES / f"agentserver_{protocol}_agent.py", folder / "main.py")
    shutil.copy(FIXTURES / "agentserver_common.py", folder / "agentserver_common.py")
    os.symlink(python.parent.parent, folder / ".venv", target_is_directory=True)
    return folder
