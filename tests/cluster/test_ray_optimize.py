"""`optimize --executor ray` reaches the same job outcome as the local executor on the scripted
benchmark world `phrases` (bench/gepa_peer/): same candidates, scores, winner and stop."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentopt.contracts.optimize_job import JobRecord
from agentopt.workflows.optimize import (
    NullOptimizeSink,
    OptimizeOptions,
    prepare_optimize,
    run_optimize,
)
from bench.gepa_peer.run_agentopt import write_project
from bench.gepa_peer.scripted import ScriptedServer
from bench.gepa_peer.world_base import BASE_INSTRUCTIONS
from bench.gepa_peer.worlds import WORLDS
from bench.optimizer_efficiency import _splits
from tests.cluster.conftest import Cluster, needs_ray
from tests.fake_openai import FakeOpenAI

pytestmark = [pytest.mark.slow, needs_ray]
SEED = 2
BUDGET = 200
AGENT_LIMIT = 8
"""Units in flight (the agent pool's default): at most these overshoot the budget."""


def outcome(job: JobRecord) -> dict[str, Any]:
    """What a user reads off a finished job: every candidate and its scores, the winner."""
    return {
        "status": job.status,
        "stop": job.termination_reason,
        "best": job.best,
        "candidates": [
            (c.id, c.status, c.validation.score if c.validation else None) for c in job.candidates
        ],
        "test": (job.test.baseline_score, job.test.best_score) if job.test else None,
    }


def run(root: Path, **executor: Any) -> tuple[dict[str, Any], dict[str, int]]:
    world = WORLDS["phrases"]
    tasks = world.tasks()
    with FakeOpenAI(schemas="any") as srv:  # the world's self-hosted (compat) server
        script = ScriptedServer(world, SEED, {t.name: t for t in tasks})
        srv.handler = script
        root.mkdir()
        config = {"base_url": srv.base_url, "instructions": BASE_INSTRUCTIONS}
        config |= {"tools": world.tools, "tool_mocks": world.tool_mocks, **_splits(tasks)}
        project = write_project(root, config)
        opts = OptimizeOptions(budget_calls=BUDGET, max_candidates=4, seed=SEED, **executor)
        job = run_optimize(prepare_optimize(opts, project, None), NullOptimizeSink()).job
    return outcome(job), dict(script.counts)


def test_optimize_on_ray_gives_the_local_outcome(tmp_path: Path, ray_cluster: Cluster) -> None:
    here, here_calls = run(tmp_path / "local")
    there, there_calls = run(tmp_path / "ray", executor="ray", ray_address=ray_cluster.address)
    assert there == here
    assert len(here["candidates"]) > 1, "the search evaluated no candidate"
    # The budget holds on the cluster as locally: in-flight units (one agent and one judge
    # call each) may finish past it, nothing more. Which of them started is a matter of timing
    # across processes, so the count may differ from the local run's by those units.
    for calls in (here_calls, there_calls):
        assert calls["agent"] + calls["judge"] <= BUDGET + 2 * AGENT_LIMIT, calls
    assert there_calls["reflect"] == here_calls["reflect"]
    assert abs(there_calls["agent"] - here_calls["agent"]) <= AGENT_LIMIT
