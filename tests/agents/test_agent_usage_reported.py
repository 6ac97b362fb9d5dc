"""An agent run outside agentopt (here an endpoint) still shows its requests and tokens in the
usage table: they come from what its answers report, since the call layer never sees them."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from agentopt.cli.app import app


def test_endpoint_runs_count_agent_calls_and_tokens(
    project: Path, recording_server: Callable[..., Any], responses_body: Callable[..., dict]
) -> None:
    server = recording_server(lambda req: (200, responses_body("4")))
    (project / "eval.yaml").write_text(
        f"name: gateway\nagent: {{name: gateway, target: endpoint, endpoint: '{server.url}'}}\n",
        encoding="utf-8",
    )
    result = CliRunner().invoke(
        app,
        ["-C", str(project), "--no-prompt", "eval", "run", "--prompts", "2+2?", "3+1?",
         "--expected", "4", "4", "--evaluator", "ExactMatch"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    run = next((project / ".agentopt" / "runs").iterdir())
    usage = json.loads((run / "results.json").read_text())["summary"]
    agent = usage["usage"]["agent"] if "usage" in usage else usage["tokens"]["agent"]
    assert agent["calls"] == 2 == len(server.requests)
    assert (agent["input_tokens"], agent["output_tokens"]) == (6, 4)  # 3 + 2 per answer
    agent_row = next(line for line in result.output.splitlines() if line.startswith("agent  "))
    assert agent_row.split()[1:4] == ["2", "6", "4"]
