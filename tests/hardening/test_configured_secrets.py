"""Item 6 of issue 38: every configured secret-bearing value is masked in every file and
message — a provider header (`headers: {X-Team: TEAM_HEADER}`, whose variable is not named like
a key, was written in clear to results.json, the journal, answers.jsonl and every report), the
secret parts of a configured URL's query, a connection string's password, and the variables
`options.secrets` names."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentopt.core.redaction import redact
from tests.fake_openai import FakeOpenAI, RecordedRequest, Reply, text
from tests.hardening.conftest import real_cli, subprocess_env

HEADER = "hdr-canary-7f3a91"
QUERY = "qry-canary-5be21c"
PASSWORD = "pwd-canary-0d4e88"
NAMED = "named-canary-91ab3f"

EVAL_YAML = """\
name: canaries
agent:
  name: support
  kind: prompt
  model: lab:gpt-x
  instruction: Be brief.
dataset:
  local_uri: tasks.jsonl
evaluators:
  - builtin.relevance
  - name: builtin.regex_match
    initialization_parameters: {{patterns: ['(?i)question']}}
options:
  eval_model: lab:gpt-x
  secrets: [SHOP_INTERNAL]
  providers:
    lab:
      type: compat
      base_url: {url}?sig={query}
      headers: {{X-Team: TEAM_HEADER}}
"""


@pytest.mark.slow
def test_configured_secrets_reach_no_file(tmp_path: Path) -> None:
    rows = [{"name": f"t{i}", "query": f"question {i}"} for i in range(4)]
    (tmp_path / "tasks.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    with FakeOpenAI(schemas="any") as srv:  # a self-hosted (compat) server

        def handler(req: RecordedRequest) -> Reply | None:
            # A server (or a compromised proxy) that reflects what it was sent, and an agent
            # that recites its environment: every canary comes back in answers and errors.
            team = req.headers.get("x-team", "")
            leak = f"team {team}; password {PASSWORD}; internal {NAMED}; url ?sig={QUERY}"
            if isinstance(req.body, dict) and req.body.get("response_format"):
                return text(json.dumps({"reason": f"fine ({leak})", "score": 4}))
            last = str(req.body["messages"][-1]["content"]) if isinstance(req.body, dict) else ""
            if "question 3" in last:
                return Reply(body=b"<html>bad gateway " + leak.encode() + b"</html>",
                             headers={"Content-Type": "text/html"})  # fmt: skip
            return text(f"Answer to {last}. {leak}")

        srv.handler = handler
        (tmp_path / "eval.yaml").write_text(EVAL_YAML.format(url=srv.base_url, query=QUERY))
        env = subprocess_env(
            TEAM_HEADER=HEADER,
            SHOP_DB_CONNECTION_STRING=f"Server=db;User Id=app;Password={PASSWORD};",
            SHOP_INTERNAL=NAMED,
        )
        outputs = ["--output", "r.json", "--output", "r.html", "--output", "r.xml"]
        outputs += ["--output", "r.csv", "--output", "r.md"]
        ran = real_cli(tmp_path, "--debug", "eval", "run", *outputs, env=env, timeout=300)
        assert srv.chat_requests and srv.chat_requests[0].headers.get("x-team") == HEADER
    assert ran.code in (0, 3), ran.output[-2000:]
    assert "question 3" in ran.output or (tmp_path / "r.json").exists()
    leaked = []
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert any(p.name == "journal.jsonl" for p in files) and (tmp_path / "r.html").exists()
    for path in files:
        if path.name in ("eval.yaml", "tasks.jsonl"):
            continue
        data = path.read_bytes()
        leaked += [
            f"{path.relative_to(tmp_path)}: {c}"
            for c in (HEADER, QUERY, PASSWORD, NAMED)
            if c.encode() in data
        ]
    for canary in (HEADER, QUERY, PASSWORD, NAMED):
        if canary in ran.output:
            leaked.append(f"terminal: {canary}")
    assert not leaked, leaked
    assert "***" in (tmp_path / "r.json").read_text()


def test_secret_parts_of_connection_strings_and_urls() -> None:
    from agentopt.core.redaction import secret_parts  # new in issue 38

    assert secret_parts("Server=x;AccountKey=abcd1234==;Database=d") == ["abcd1234=="]
    assert secret_parts("https://h/v1?api-version=2024-10-21&sig=s3cr3tsig") == ["s3cr3tsig"]
    assert secret_parts("https://h/v1?api-version=2024-10-21") == []


def test_a_password_variable_is_masked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SHOP_DB_PASSWORD", "pw-canary-77a1b2")
    assert "pw-canary-77a1b2" not in redact("connecting with pw-canary-77a1b2 now")
