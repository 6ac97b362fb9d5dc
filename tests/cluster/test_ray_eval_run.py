"""`eval run --executor ray` on a real 2-worker Ray cluster against the fake OpenAI server:
the same results as the local executor, a rerun served from the one cache, a killed worker that
loses nothing, secrets that never reach Ray's logs, pool limits that hold cluster-wide."""

from __future__ import annotations

import ipaddress
import json
import os
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agentopt.cli.app import app
from agentopt.workflows.cluster.ray_host import session_members
from tests.cluster.conftest import CLUSTER_SECRET, Cluster, needs_ray
from tests.fake_openai import FakeOpenAI, RecordedRequest, Reply, error, text
from tests.workflows.fake_agent_server import judge_reply, last_user

pytestmark = [pytest.mark.slow, needs_ray]
runner = CliRunner()


SUITE = 200
"""The acceptance's suite size: parity, rerun, a killed worker."""


def cli(project: Path, *args: str) -> tuple[int, str]:
    result = runner.invoke(app, ["-C", str(project), "--no-prompt", "eval", "run", *args])
    return result.exit_code, result.output


def on_ray(cluster: Cluster) -> list[str]:
    return ["--executor", "ray", "--ray-address", cluster.address]


def write_tasks(project: Path, n: int) -> None:
    project.mkdir(parents=True, exist_ok=True)
    rows = [
        {"name": f"t{i:03d}", "query": f"item {i}", "ground_truth": f"item {i}"} for i in range(n)
    ]
    (project / "tasks.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")


def scripted(req: RecordedRequest) -> Reply | None:
    i = int(last_user(req).split()[-1])
    if i % 10 == 3:
        return error(400, "the agent refused", code="bad_request")
    if i % 10 == 5:
        return text("something else")
    return None


def results(project: Path) -> dict[str, Any]:
    runs = sorted((project / ".agentopt" / "runs").glob("*/results.json"))
    return json.loads(runs[-1].read_text())


def verdicts(project: Path) -> list[tuple[str, str, float | None, str | None]]:
    return [
        (t["name"], t["status"], t["score"], (t["error"] or {}).get("code"))
        for t in results(project)["tasks"]
    ]


def lab_suite(project: Path, base_url: str, key_env: str, n: int = 6) -> None:
    write_tasks(project, n)
    (project / "eval.yaml").write_text(
        "dataset: {local_uri: tasks.jsonl}\n"
        "evaluators: [builtin.exact_match]\n"
        "agent: {name: a, model: 'lab:fake', instruction: 'Answer.'}\n"
        f"options: {{providers: {{lab: {{type: compat, base_url: '{base_url}', "
        f"api_key_env: {key_env}}}}}}}\n"
    )


def test_200_tasks_match_local_a_rerun_is_served_by_the_cache_and_no_secret_leaks(
    tmp_path: Path, ray_cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The provider's key is read by each worker from its own environment (set where the
    cluster runs); it appears nowhere Ray or the run writes: logs, spilled objects, journal,
    results, cache."""
    monkeypatch.setenv("LAB_KEY", CLUSTER_SECRET)
    on_cluster, here = tmp_path / "ray", tmp_path / "local"
    with FakeOpenAI(schemas="any") as srv:
        srv.handler = scripted
        lab_suite(on_cluster, srv.base_url, "LAB_KEY", SUITE)
        lab_suite(here, srv.base_url, "LAB_KEY", SUITE)
        code, out = cli(on_cluster, "--max-errors", "1000", *on_ray(ray_cluster))
        assert code == 0, out
        first = srv.count()
        code, out = cli(here, "--max-errors", "1000")
        assert code == 0, out
        assert verdicts(on_cluster) == verdicts(here)
        assert Counter(t[1] for t in verdicts(here)) == {"pass": 160, "fail": 20, "error": 20}
        summary = results(on_cluster)["summary"]
        assert summary["usage"]["agent"]["calls"] == 180  # the 20 refusals are errors

        rerun_from = len(srv.requests)
        code, out = cli(on_cluster, "--max-errors", "1000", *on_ray(ray_cluster))
        assert code == 0, out
    repeated = [last_user(r) for r in srv.requests[rerun_from:] if r.path.endswith("completions")]
    # Answered calls come from the cache; only the refused ones (never cached) are sent again,
    # exactly as a local rerun does.
    assert sorted(repeated) == sorted(f"item {i}" for i in range(SUITE) if i % 10 == 3)
    assert first == SUITE
    rerun = results(on_cluster)
    assert [t[:3] for t in verdicts(on_cluster)] == [t[:3] for t in verdicts(here)]
    assert rerun["summary"]["usage"]["agent"]["cache_hits"] == 180
    assert rerun["summary"]["usage"]["agent"]["calls"] == 0
    auth = {r.headers.get("authorization") for r in srv.requests if r.path.endswith("completions")}
    assert auth == {f"Bearer {CLUSTER_SECRET}"}, "the workers did not send their key"
    leaks = [
        str(path)
        for root in (ray_cluster.session_dir, on_cluster)
        for path in root.rglob("*")
        if path.is_file() and CLUSTER_SECRET.encode() in path.read_bytes()
    ]
    assert leaks == []


CRASHING_EVALUATOR = '''
"""Exact match that kills its own worker process the first time it scores `item 5`."""
import os, pathlib, signal

MARK = pathlib.Path({mark!r})


class CrashOnce:
    def __init__(self, *, model_config=None, threshold=1.0, options=None):
        self.threshold = threshold

    def __call__(self, *, prompt="", expected_response="", response="", **_):
        if prompt == "item 5" and not MARK.exists():
            MARK.write_text(str(os.getpid()))
            os.kill(os.getpid(), signal.SIGKILL)
        return {{"score": 1.0 if response == expected_response else 0.0, "reason": "exact"}}
'''


def test_a_worker_killed_mid_unit_loses_nothing_and_repeats_no_answered_call(
    tmp_path: Path, ray_cluster: Cluster
) -> None:
    project = tmp_path / "p"
    write_tasks(project, SUITE)
    mark = tmp_path / "killed-pid"
    folder = project / "custom-evaluators" / "crash_once"
    folder.mkdir(parents=True)
    (folder / "crash_once.py").write_text(CRASHING_EVALUATOR.format(mark=str(mark)))
    with FakeOpenAI(schemas="any") as srv:
        srv.handler = scripted
        # Two units in flight on two workers: the killed one holds only `item 5`, whose agent
        # call was answered (and cached) before its evaluator killed the process.
        code, out = cli(
            project, "--prompts-file", "tasks.jsonl",
            "--agent-model", f"compat:fake@{srv.base_url}", "--evaluator", "crash_once",
            "--max-errors", "1000", "--concurrency", "2", *on_ray(ray_cluster),
        )  # fmt: skip
    assert code == 0, out
    assert mark.exists(), "the evaluator never killed its worker"
    assert f"(pid {mark.read_text()}) died" in out
    asked = Counter(last_user(r) for r in srv.requests if r.path.endswith("completions"))
    assert asked == {f"item {i}": 1 for i in range(SUITE)}, "an answered call was sent again"
    journal = next((project / ".agentopt" / "runs").glob("*/journal.jsonl"))
    lines = [json.loads(line) for line in journal.read_text().splitlines()]
    tasks = sorted(e["task"] for e in lines)
    assert tasks == list(range(SUITE)), "a unit was lost or written twice"
    statuses = {t["name"]: t["status"] for t in results(project)["tasks"]}
    expected = {3: "error", 5: "fail"}
    assert statuses == {f"t{i:03d}": expected.get(i % 10, "pass") for i in range(SUITE)}
    # t005's status is its real verdict on the replacement worker ("something else" ≠ item 5).
    assert statuses["t005"] == "fail"


def test_a_key_the_workers_lack_is_a_clear_error_before_any_call(
    tmp_path: Path, ray_cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OTHER_LAB_KEY", "sk-only-on-the-driver")
    project = tmp_path / "p"
    with FakeOpenAI(schemas="any") as srv:
        lab_suite(project, srv.base_url, "OTHER_LAB_KEY")
        code, out = cli(project, *on_ray(ray_cluster))
        assert srv.count() == 0
    assert code == 2, out
    assert "lacks environment variables set here: OTHER_LAB_KEY" in out
    assert "sk-only-on-the-driver" not in out
    assert list((project / ".agentopt" / "runs").iterdir()) == [], "a refused run left a folder"


def test_pool_limits_are_global_across_workers_and_a_429_halves_them_everywhere(
    tmp_path: Path, ray_cluster: Cluster
) -> None:
    """--judge-concurrency 1 on two workers means one judge call at a time on the cluster (a
    limit per worker would allow two); a judge service that takes one request at a time and
    429s the rest halves the cluster's judge pool, and the run's summary says so."""
    project = tmp_path / "p"
    write_tasks(project, 12)
    with FakeOpenAI(schemas="any") as agent, FakeOpenAI(latency=0.2, schemas="any") as judge:
        judge.handler = judge_reply
        suite = ["--prompts-file", "tasks.jsonl", "--agent-model", f"compat:fake@{agent.base_url}",
                 "--eval-model", f"compat:judge@{judge.base_url}", "--evaluator", "Relevance",
                 "--concurrency", "4", *on_ray(ray_cluster)]  # fmt: skip
        code, out = cli(project, *suite, "--judge-concurrency", "1")
        assert code == 0, out
        assert judge.count() == 12 and judge.peak_in_flight == 1

        judge.max_in_flight, judge.retry_after = 1, 0.1
        code, out = cli(project, *suite, "--judge-concurrency", "4", "--no-cache")
        assert code == 0, out
        assert judge.rejected > 0
    summary = results(project)["summary"]
    assert summary["errors"] == 0
    assert summary["limiter"].startswith("judge: rate limited"), summary["limiter"]
    assert "concurrency 4 → " in summary["limiter"]


def listening_addresses(pids: list[int]) -> set[str]:
    """Local IP of every TCP socket in LISTEN state held by `pids` (Linux /proc/net)."""
    inodes = set()
    for pid in pids:
        fds = Path(f"/proc/{pid}/fd")
        for fd in fds.iterdir() if fds.is_dir() else []:
            try:
                target = os.readlink(fd)
            except OSError:
                continue
            if target.startswith("socket:["):
                inodes.add(target[8:-1])
    found = set()
    for table in ("tcp", "tcp6"):
        for row in Path(f"/proc/net/{table}").read_text().splitlines()[1:]:
            cols = row.split()
            if cols[3] == "0A" and cols[9] in inodes:  # 0A: LISTEN
                ip = ipaddress.ip_address(_proc_ip(cols[1].split(":")[0]))
                mapped = ip.ipv4_mapped if isinstance(ip, ipaddress.IPv6Address) else None
                found.add(str(mapped or ip))
    return found


def _proc_ip(hex_ip: str) -> bytes:
    """/proc/net writes addresses as 32-bit words in host (little-endian) order."""
    raw = bytes.fromhex(hex_ip)
    return b"".join(raw[i : i + 4][::-1] for i in range(0, len(raw), 4))


def test_the_cluster_listens_on_loopback_only(ray_cluster: Cluster) -> None:
    """GCS, raylet, object manager, runtime-env agent, workers: 127.0.0.1 and nothing else."""
    found = listening_addresses(session_members(ray_cluster.session))
    assert found, "no listening socket found in the cluster's session"
    assert found == {"127.0.0.1"}, found
