"""A real Ray cluster for the scale-out tests: one local instance on 127.0.0.1 with 2 worker
CPUs for the whole of tests/cluster (package scope: it stops when the last of them ends, not
at the end of the suite), started through agentopt's own supervised host (`ray_host`) and
stopped with nothing of it left running.

Ray reads its network and auth settings when it is first imported, so these tests import
nothing that imports Ray at module level: the cluster fixture applies the host's environment
first. Without the `ray` extra every test here is skipped, saying so.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

HAVE_RAY = importlib.util.find_spec("ray") is not None
CLUSTER_SECRET = "sk-cluster-secret-0123456789abcdef"
"""LAB_KEY in the environment the cluster's processes run in (as an operator would set it)."""
needs_ray = pytest.mark.skipif(
    not HAVE_RAY, reason="the `ray` extra is not installed (pip install 'agentopt[ray]')"
)


def wait_gone(sid: int, timeout: float = 30.0) -> list[int]:
    """Wait until no process of the session is left; returns the survivors at the deadline."""
    from agentopt.workflows.cluster.ray_host import session_members

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        left = session_members(sid)
        if not left:
            return []
        time.sleep(0.2)
    return session_members(sid)


@dataclass(frozen=True)
class Cluster:
    address: str
    session_dir: Path
    """Ray's temp folder of this instance (its logs are under it)."""
    session: int
    """The session id of the host: every Ray process of the instance is in it."""


@pytest.fixture(scope="package")
def ray_cluster() -> Iterator[Cluster]:
    """A 2-CPU local Ray instance (this process's environment set to reach it)."""
    if not HAVE_RAY:
        pytest.skip("the `ray` extra is not installed (pip install 'agentopt[ray]')")
    from agentopt.workflows.cluster.ray_host import LocalRayHost

    assert "ray" not in sys.modules, "a test module imported ray before the cluster was set up"

    temp = Path(tempfile.mkdtemp(prefix="ao-ray-"))  # short: Ray's socket paths are limited
    with pytest.MonkeyPatch.context() as env:
        env.setenv("LAB_KEY", CLUSTER_SECRET)
        host = LocalRayHost.start(num_cpus=2, temp_dir=temp / "r", log=temp / "host.log")
    saved = {name: os.environ.get(name) for name in host.driver_env}
    os.environ.update(host.driver_env)
    try:
        yield Cluster(host.address, temp / "r", host.process.pid)
    finally:
        sid = host.process.pid  # the host leads its own session
        host.stop()
        survivors = wait_gone(sid)
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        shutil.rmtree(temp, ignore_errors=True)
        assert survivors == [], f"Ray processes outlived the cluster fixture: {survivors}"
