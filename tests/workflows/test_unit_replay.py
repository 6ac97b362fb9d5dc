"""A cached rerun replays a unit whose task, agent, evaluators and cached answers are unchanged
(`workflows/run/unit_replay.py`), and writes what an engine rerun from the same cached answers
writes: verdicts, records and usage. Anything that changed, or that the cache no longer holds,
is played again; `--no-cache`, a failed unit and a latency check play every time.

The project is a tool-calling agent (a mocked tool) on the fake OpenAI server, judged by
task_adherence (a judge model on the same server, priced so that costs show) and exact match.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from agentopt.cli.app import app
from agentopt.core.files.agent_config import write_agent_config
from agentopt.core.files.agent_definition import AgentDefinition
from tests.fake_openai import FakeOpenAI, RecordedRequest, Reply, error, text, tool_calls
from tests.workflows.fake_agent_server import last_user

runner = CliRunner()
TASKS = 6
REPLAYED = "units replayed from the cache"


def write_project(project: Path, base: str) -> None:
    parameters = {"type": "object", "properties": {"id": {"type": "string"}}}
    function = {"name": "order_status", "description": "Order status.", "parameters": parameters}
    tool = {"type": "function", "function": function}
    agent = AgentDefinition(
        name="store",
        model=f"compat:agent@{base}",
        instructions="Answer from the tool.",
        tools=[tool],
        tool_mocks={"order_status": {"return": {"status": "shipped"}}},
    )
    write_agent_config(project / ".agent_configs" / "baseline", agent)
    rows = [
        {
            "name": f"t{i}",
            "query": f"Where is order {i}?",
            "ground_truth": "shipped",
            "criteria": [{"name": "status", "instruction": "Says the order has shipped."}],
        }
        for i in range(TASKS)
    ]
    (project / "tasks.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    config = {
        "name": "replay",
        "agent": {"name": "store", "config": ".agent_configs/baseline/metadata.yaml"},
        "dataset": {"local_uri": "tasks.jsonl"},
        "evaluators": ["builtin.task_adherence", "builtin.exact_match"],
        "options": {
            "eval_model": f"compat:judge@{base}",
            "prices": {
                "agent": {"input": 10.0, "output": 20.0},
                "judge": {"input": 1.0, "output": 2.0},
            },
        },
    }
    (project / "eval.yaml").write_text(yaml.safe_dump(config))


def judged(req: RecordedRequest) -> bool:
    return bool((req.body or {}).get("response_format"))


def agent(req: RecordedRequest) -> Reply | None:
    """The judge passes the criterion; the agent calls the tool, then says what it said."""
    if judged(req):
        verdict = {"name": "status", "passed": True, "reason": "says shipped"}
        return text(json.dumps({"verdicts": [verdict]}), usage=(200, 20))
    messages = (req.body or {}).get("messages", [])
    if messages[-1].get("role") == "user":
        return tool_calls([("order_status", {"id": last_user(req).split()[-1].rstrip("?")})])
    return text("shipped")


@contextmanager
def served(
    project: Path, handler: Callable[[RecordedRequest], Reply | None] | None = None
) -> Iterator[FakeOpenAI]:
    """The fake server answering as `agent` (or `handler`), after a first run of the project."""
    with FakeOpenAI(schemas="any") as srv:
        srv.handler = handler or agent
        write_project(project, srv.base_url)
        run(project)
        yield srv


def run(project: Path, *args: str) -> str:
    result = runner.invoke(app, ["-C", str(project), "--no-prompt", "eval", "run", *args])
    assert result.exit_code in (0, 3), result.output  # 3: a run with an error
    return result.output


def latest(project: Path) -> Path:
    runs = sorted((project / ".agentopt" / "runs").iterdir(), key=lambda p: p.stat().st_mtime_ns)
    return runs[-1]


def journal(project: Path) -> list[dict[str, Any]]:
    """The latest run's units in task order, latencies set aside (a rerun's are its own)."""
    lines = (latest(project) / "journal.jsonl").read_text().splitlines()
    units = [_no_latency(json.loads(line)) for line in lines]
    return sorted(units, key=lambda u: (u["task"], u["repeat"]))


def _no_latency(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _no_latency(v) for k, v in value.items() if k != "latency_s"}
    if isinstance(value, list):
        return [_no_latency(v) for v in value]
    return value


def summary(project: Path) -> dict[str, Any]:
    results = json.loads((latest(project) / "results.json").read_text())
    return {k: v for k, v in results["summary"].items() if k not in ("duration_s", "latency")}


def forget_units(project: Path) -> None:
    with sqlite3.connect(project / ".agentopt" / "cache.sqlite") as conn:
        conn.execute("DELETE FROM units")


def test_a_replayed_rerun_writes_what_an_engine_rerun_writes(project: Path) -> None:
    with FakeOpenAI(schemas="any") as srv:
        srv.handler = agent
        write_project(project, srv.base_url)
        first = run(project)
        assert REPLAYED not in first
        asked = srv.count()
        assert asked == TASKS * 3  # the tool round, the answer, the judge
        first_units = journal(project)

        replayed = run(project)
        assert f"{TASKS} of {TASKS} units replayed from the cache" in replayed
        assert srv.count() == asked
        by_replay, replay_summary = journal(project), summary(project)

        forget_units(project)  # the same rerun, played by the engine from the cached answers
        engine = run(project)
        assert REPLAYED not in engine
        assert srv.count() == asked
        by_engine, engine_summary = journal(project), summary(project)

    assert by_replay == by_engine
    assert replay_summary == engine_summary
    usage = engine_summary["usage"]
    assert usage["agent"]["cache_hits"] == 2 * TASKS and usage["judge"]["cache_hits"] == TASKS
    assert usage["agent"]["calls"] == 0 and usage["agent"]["cost_usd"] == 0.0
    # The first run paid for its calls; a rerun of either kind pays nothing.
    assert [u["score"] for u in by_replay] != [u["score"] for u in first_units]  # costs differ
    assert [u["score"]["status"] for u in by_replay] == [u["score"]["status"] for u in first_units]


def test_what_changed_is_played_again(project: Path) -> None:
    with served(project) as srv:
        asked = srv.count()

        rows = (project / "tasks.jsonl").read_text().splitlines()
        changed = json.loads(rows[2])
        changed["query"] = "Where is order 22?"
        rows[2] = json.dumps(changed)
        (project / "tasks.jsonl").write_text("\n".join(rows) + "\n")
        out = run(project)
        assert f"{TASKS - 1} of {TASKS} units replayed" in out
        assert srv.count() == asked + 3  # only the changed task's three calls

        instructions = project / ".agent_configs" / "baseline" / "instructions.md"
        instructions.write_text("Answer briefly from the tool.")
        out = run(project)
        assert REPLAYED not in out  # new instructions: every unit is played
        assert srv.count() == asked + 3 + 2 * TASKS  # the agent asked; the judge cached


def test_a_unit_whose_answer_left_the_cache_is_played(project: Path) -> None:
    with served(project) as srv:
        asked = srv.count()
        with sqlite3.connect(project / ".agentopt" / "cache.sqlite") as conn:
            judged = conn.execute(
                "SELECT key FROM entries WHERE kind = 'chat' AND model = 'judge'"
            ).fetchall()
            conn.execute("DELETE FROM entries WHERE key = ?", judged[0])
        out = run(project)
        assert f"{TASKS - 1} of {TASKS} units replayed" in out
        assert srv.count() == asked + 1  # its judge asked again; the agent's answers cached


def test_no_cache_plays_every_unit(project: Path) -> None:
    with served(project) as srv:
        out = run(project, "--no-cache")
        assert REPLAYED not in out
        assert srv.count() == 2 * 3 * TASKS


def test_a_failed_unit_is_never_replayed(project: Path) -> None:
    def failing(req: RecordedRequest) -> Reply | None:
        if "order 4" in last_user(req) and not judged(req):
            return error(400, "refused", code="bad_request")
        return agent(req)

    with served(project, failing) as srv:
        asked = srv.count()
        out = run(project)
        assert f"{TASKS - 1} of {TASKS} units replayed" in out
        assert srv.count() == asked + 1  # the failed agent call, asked again
        statuses = [u["score"]["status"] for u in journal(project)]
        assert statuses.count("error") == 1


def test_a_latency_check_plays_every_unit(project: Path) -> None:
    with FakeOpenAI(schemas="any") as srv:
        srv.handler = agent
        write_project(project, srv.base_url)
        config = yaml.safe_load((project / "eval.yaml").read_text())
        config["evaluators"].append(
            {"name": "builtin.latency", "initialization_parameters": {"max_seconds": 60}}
        )
        (project / "eval.yaml").write_text(yaml.safe_dump(config))
        run(project)
        out = run(project)
        assert REPLAYED not in out  # its verdict reads this run's latency


def test_a_kept_unit_in_another_shape_is_played(project: Path) -> None:
    with served(project) as srv:
        asked, first = srv.count(), [u["score"]["status"] for u in journal(project)]
        with sqlite3.connect(project / ".agentopt" / "cache.sqlite") as conn:
            conn.execute("UPDATE units SET payload = '{\"line\": 5}'")
        out = run(project)
        assert REPLAYED not in out
        assert srv.count() == asked  # played again from the cached answers
        assert [u["score"]["status"] for u in journal(project)] == first


def test_cache_stats_shows_the_kept_units_and_clear_removes_them(project: Path) -> None:
    with served(project):
        pass
    stats = runner.invoke(app, ["-C", str(project), "-o", "json", "cache", "stats"])
    rows = json.loads(stats.output)["by_model"]
    units = [r for r in rows if r["kind"] == "unit"]
    assert [(u["model"], u["entries"], u["hits"]) for u in units] == [("eval run units", TASKS, 0)]
    assert sum(r["entries"] for r in rows if r["kind"] == "chat") == 3 * TASKS
    cleared = runner.invoke(app, ["-C", str(project), "--no-prompt", "cache", "clear"])
    assert cleared.exit_code == 0, cleared.output
    with sqlite3.connect(project / ".agentopt" / "cache.sqlite") as conn:
        assert conn.execute("SELECT COUNT(*) FROM units").fetchone() == (0,)


def test_a_unit_whose_journal_is_gone_or_changed_is_played(project: Path) -> None:
    with served(project) as srv:
        first = latest(project)
        lines = (first / "journal.jsonl").read_text().splitlines()
        lines[0] = lines[0].replace('"status":"pass"', '"status":"fail"', 1)  # same size
        (first / "journal.jsonl").write_text("\n".join(lines) + "\n")
        out = run(project)
        assert f"{TASKS - 1} of {TASKS} units replayed" in out  # the edited line is not used
        asked = srv.count()
        for folder in (project / ".agentopt" / "runs").iterdir():
            shutil.rmtree(folder)
        out = run(project)
        assert REPLAYED not in out
        assert srv.count() == asked  # played from the cached answers
        assert [u["score"]["status"] for u in journal(project)] == ["pass"] * TASKS


def test_a_replayed_line_is_masked_with_the_secrets_known_now(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "zq81-shipped-token-5vw0x"

    def leaky(req: RecordedRequest) -> Reply | None:
        reply = agent(req)
        is_answer = not judged(req) and (req.body or {})["messages"][-1]["role"] == "tool"
        return text(f"shipped ({secret})") if is_answer else reply

    with served(project, leaky):
        assert secret in (latest(project) / "journal.jsonl").read_text()  # not a secret then
        monkeypatch.setenv("ORDER_SERVICE_TOKEN", secret)
        out = run(project)
    assert f"{TASKS} of {TASKS} units replayed" in out
    assert secret not in (latest(project) / "journal.jsonl").read_text()
    assert secret not in (latest(project) / "results.json").read_text()
