"""`eval generate --from-traces FILE|DIR`: a dataset of what real users asked the agent.

Microsoft's dataset guidance says to write prompts from real users' messages; azd's
extension reads them from Application Insights (`--from traces`, `--trace-days`). agentopt
reads the same GenAI spans exported to files (`datasets.otel_traces`), keeps the user turns
of the agent (in the `--trace-days` window), masks secrets, drops duplicates (the generator's
own exact and near-duplicate rules) and keeps the most recent `--max-samples`. The tasks are
then registered like any dataset `eval generate` imports.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from agentopt.core.atomic import write_text_atomic
from agentopt.core.errors import InputError
from agentopt.core.redaction import redact
from agentopt.datasets.otel_traces import UserTurn, read_user_turns
from agentopt.workflows.generate.dedupe import Deduper, key_words


@dataclass
class TraceMining:
    """The tasks mined from traces, and what was left out and why."""

    tasks: list[dict[str, Any]] = field(default_factory=list)
    turns: int = 0
    """User turns found in the traces."""
    outside_window: int = 0
    other_agents: int = 0
    duplicates: int = 0
    masked: int = 0
    """Tasks whose text had a secret masked."""
    capped: int = 0
    """Left out by --max-samples (the oldest)."""

    def summary(self) -> str:
        parts = [f"{len(self.tasks)} tasks from {self.turns} user turns"]
        for count, what in (
            (self.outside_window, "outside the --trace-days window"),
            (self.other_agents, "from other agents"),
            (self.duplicates, "duplicates"),
            (self.capped, "over --max-samples"),
            (self.masked, "with a secret masked"),
        ):
            if count:
                parts.append(f"{count} {what}")
        return "; ".join(parts)


def mine_traces(
    path: Path,
    *,
    days: int = 0,
    max_samples: int | None = None,
    agent: str | None = None,
    now: datetime | None = None,
) -> TraceMining:
    """The user turns of `path` as task rows (see the module docstring).

    Args:
        days: keep turns from the last N days (0: all, azd's default).
        max_samples: keep the N most recent distinct turns (None: all).
        agent: keep only turns whose span (or an ancestor) names this `gen_ai.agent.name`;
            turns with no agent name are kept.

    Raises:
        InputError: an unreadable or malformed trace file (file and line), or no user turn.
    """
    turns = read_user_turns(path)
    mined = TraceMining(turns=len(turns))
    since = (now or datetime.now(UTC)) - timedelta(days=days) if days > 0 else None
    kept: list[UserTurn] = []
    for turn in turns:
        if since is not None and (turn.time is None or turn.time < since):
            mined.outside_window += 1
        elif agent and turn.agent and turn.agent != agent:
            mined.other_agents += 1
        else:
            kept.append(turn)
    deduper = Deduper()
    distinct: list[tuple[UserTurn, str]] = []
    for turn in reversed(kept):  # the most recent wording of a repeated question wins
        text = redact(turn.text)
        if deduper.check(text) is not None:
            mined.duplicates += 1
            continue
        deduper.add(text, turn.span_id)
        distinct.append((turn, text))
    if max_samples is not None and len(distinct) > max_samples:
        mined.capped = len(distinct) - max_samples
        distinct = distinct[:max_samples]
    names: set[str] = set()
    for turn, text in reversed(distinct):
        mined.masked += text != turn.text
        mined.tasks.append(_row(turn, text, names))
    if not mined.tasks:
        raise InputError.at(
            str(path),
            "",
            f"no user turn to keep ({mined.summary()})",
        )
    return mined


def _row(turn: UserTurn, text: str, names: set[str]) -> dict[str, Any]:
    base = "_".join(key_words(text)[:4]) or "trace"
    name, n = f"trace_{base}", 2
    while name in names:
        name, n = f"trace_{base}_{n}", n + 1
    names.add(name)
    metadata: dict[str, Any] = {"source": "traces", "trace_id": turn.trace_id}
    if turn.time is not None:
        metadata["time"] = turn.time.isoformat().replace("+00:00", "Z")
    if turn.agent:
        metadata["agent"] = turn.agent
    return {"name": name, "query": text, "category": "traces", "metadata": metadata}


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    """The rows as task JSONL, atomically."""
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(path, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
