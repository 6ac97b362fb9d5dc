"""A stand-in for the Azure CLI on PATH, so `DefaultAzureCredential` (restricted to its
AzureCliCredential link by AZURE_TOKEN_CREDENTIALS, as a user may do) gets a token exactly as
it does on a developer machine: by running `az account get-access-token --output json
--resource https://ai.azure.com`. No network, no Azure account."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pytest

SCRIPT = """#!{python}
import json, sys
args = sys.argv[1:]
if args[:2] != ["account", "get-access-token"] or "--resource" not in args:
    print("ERROR: unexpected az call: " + " ".join(args), file=sys.stderr)
    sys.exit(2)
print(json.dumps({{
    "accessToken": {token!r},
    "expiresOn": "2099-01-01 00:00:00.000000",
    "expires_on": 4070908800,
    "subscription": "0b1f6471-1bf0-4dda-aec3-cb9272f09590",
    "tenant": "72f988bf-86f1-41af-91ab-2d7cd011db47",
    "tokenType": "Bearer",
}}))
"""


def install_az(bin_dir: Path, token: str, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """Put a fake `az` first on PATH; returns the environment a subprocess needs too."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    az = bin_dir / "az"
    az.write_text(SCRIPT.format(python=sys.executable, token=token), encoding="utf-8")
    az.chmod(az.stat().st_mode | stat.S_IEXEC)
    env = {
        "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        "AZURE_TOKEN_CREDENTIALS": "AzureCliCredential",
    }
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    return env


def files_containing(root: Path, needle: str) -> list[Path]:
    """Every file under `root` whose bytes contain `needle`."""
    data = needle.encode()
    return [p for p in root.rglob("*") if p.is_file() and data in p.read_bytes()]
