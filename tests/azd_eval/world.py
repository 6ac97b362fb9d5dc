"""A fake OpenAI server that plays an agent and its judges for azure.eval.yaml runs, with
the verdict of each row chosen by its query: passing, failing (every judge says so), or
errored (the agent call is refused, as a real server refuses a request)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from agentopt.cli.app import app
from tests.fake_openai import FakeOpenAI, RecordedRequest, Reply, error, text

runner = CliRunner()


@dataclass
class World:
    """Which queries fail or error (by a substring of the query)."""

    failing: set[str] = field(default_factory=set)
    erroring: set[str] = field(default_factory=set)

    def _matches(self, words: set[str], content: str) -> bool:
        return any(w in content for w in words)

    def handle(self, req: RecordedRequest) -> Reply | None:
        body = req.body or {}
        if not req.path.endswith("/chat/completions"):
            return None
        messages = body.get("messages", [])
        everything = "\n".join(str(m.get("content")) for m in messages)
        fmt = body.get("response_format") or {}
        schema = (fmt.get("json_schema") or {}) if isinstance(fmt, dict) else {}
        if schema:
            return text(json.dumps(self.verdict(schema, everything)), usage=(200, 20))
        users = [m for m in messages if m.get("role") == "user"]
        last = str(users[-1].get("content")) if users else ""
        if self._matches(self.erroring, last):
            return error(400, "the agent refused this request", code="bad_request")
        return text(f"Here is what I know about: {last}")

    def verdict(self, schema: dict[str, Any], prompt: str) -> dict[str, Any]:
        ok = not self._matches(self.failing, prompt)
        name = schema.get("name")
        if name == "simulated_user":  # opens with the goal, stops once the agent answered
            answered = len(re.findall(r"\[turn \d+\] Agent:", prompt))
            if answered:
                return {"reason": "the agent answered", "action": "goal_reached", "message": ""}
            return {"reason": "start", "action": "continue", "message": "Please waive my fee."}
        if name == "task_adherence":
            names = re.findall(r"^- name: (\S+)$", prompt, flags=re.MULTILINE)
            return {
                "verdicts": [
                    {"name": n, "passed": ok, "reason": "met" if ok else "missed"}
                    for n in names or ["follows_instructions"]
                ]
            }
        if name == "rubric":
            props = schema["schema"]["properties"]["dimensions"]["items"]["properties"]
            ids = props["id"]["enum"]
            return {
                "dimensions": [
                    {"id": i, "applicable": True, "score": 5 if ok else 1, "reason": "r"}
                    for i in ids
                ]
            }
        return {"reason": "good" if ok else "poor", "score": 5 if ok else 1}


@contextmanager
def serving(world: World) -> Iterator[dict[str, str]]:
    """The server, and the environment that points bare model names at it."""
    with FakeOpenAI() as srv:
        srv.handler = world.handle
        yield {"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": srv.base_url}


def agentopt(root: Path, env: dict[str, str], *args: str) -> tuple[int, str]:
    """One command in `root`, as a script runs it (no prompts)."""
    result = runner.invoke(app, ["-C", str(root), "--no-prompt", *args], env=env)
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.output
