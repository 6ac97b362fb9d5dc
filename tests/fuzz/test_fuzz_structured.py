"""The structure-aware fuzz strategy (issue 38 item 10) in CI: a fixed budget of generated
inputs over every input kind, each through the real CLI entry point, with a fresh seed every
run (not derandomized: each CI run explores new inputs), printed so that a failure replays:
`AGENTOPT_FUZZ_SEED=<seed>` here, or `python bench/fuzz_cli.py N --seed <seed>`."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import REPO
from tests.fuzz.seed import fuzz_seed
from tests.fuzz.structured import KINDS

BUDGET = 3 * len(KINDS)
"""Inputs per CI run: three of each kind (~20 s of CPU); the long run is bench/fuzz_cli.py."""


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_structured_inputs_through_the_cli(capsys: pytest.CaptureFixture[str]) -> None:
    seed = fuzz_seed(capsys, "structured fuzz")
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
    }
    proc = subprocess.run(
        [sys.executable, str(REPO / "bench" / "fuzz_cli.py"), str(BUDGET),
         "--seed", str(seed), "--json"],
        capture_output=True, text=True, env=env, timeout=880,
    )  # fmt: skip
    assert proc.returncode == 0, f"seed {seed}: {proc.stderr[-3000:]}"
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["inputs"] == BUDGET and result["kinds"] == len(KINDS)
    failures = "\n".join(result["failures"])
    assert result["tracebacks"] == 0, f"seed {seed}:\n{failures}"
    assert result["hangs"] == 0, f"seed {seed}:\n{failures}"
    assert result["over_cpu_cap"] == 0, f"seed {seed}:\n{failures}"
    assert result["exit2_not_naming_file"] == 0, f"seed {seed}:\n{failures}"
