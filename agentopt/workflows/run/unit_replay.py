"""A rerun replays each unit whose inputs and cached answers are unchanged, instead of playing
it again: what a cached rerun of 10,000 tasks costs falls from ~0.7 of the first run's CPU to a
fifth (issue 37).

A unit played against a cache leaves its journal line in the cache file too (`units`), keyed
by everything that decides it: this agentopt's code, the agent definition and the models it
resolves to, the evaluators and their settings, the dataset's settings (the run's digest),
the task as loaded and the repeat. A later run whose unit has that key, and whose cache still
holds every answer the unit stood on (`models.call_trail`), writes the line again in place of
playing the unit: the same verdict, record and usage an engine rerun would write from the same
cached answers (its calls counted as cache hits, each pool as the engine counts them), with
the replay's own latency and cost (none). `--no-cache` plays every unit.

Only what is decided by those inputs is kept: a unit of the in-process agent (no MCP server:
its tools change outside the project), not simulated, without an error, whose tools were
answered by mocks or skills, scored only by built-in evaluators that do not read the answer's
latency, every call of it an answer the cache kept. Anything else is played every time.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Sequence
from itertools import islice
from pathlib import Path
from typing import Any

from agentopt.agents.base import AgentTarget
from agentopt.agents.local import LocalTarget
from agentopt.contracts.packed_tasks import PackedTasks, task_json
from agentopt.contracts.task import Task
from agentopt.contracts.task_record import UnitResult
from agentopt.contracts.transcript import Transcript
from agentopt.core.digest import sha256_hex
from agentopt.core.paths import templates_dir
from agentopt.evaluators.registry import lookup
from agentopt.models.cache import ResponseCache
from agentopt.models.cache_sql import payload_json
from agentopt.models.call import CallLayer
from agentopt.models.call_trail import CallTrail
from agentopt.models.cost import Ledger

CHUNK = 256
"""Units looked up together (two SQL reads a chunk)."""
PURE_TOOL_SOURCES = frozenset({"mock", "skill", "none", "refused"})
"""Tool answers decided by the agent definition and the task (not by code or a server)."""
PURE_KINDS = frozenset({"deterministic", "judge", "embedding"})
_SECRET_FIELD = re.compile(r"key|token|secret|password|credential", re.IGNORECASE)
_SPENT = re.compile(r'("(?:latency_s|cost_usd)": )-?[0-9][0-9.eE+-]*')
_HEAD = re.compile(r'^\{"task": -?[0-9]+, "repeat": -?[0-9]+, ')

Unit = tuple[int, int, Transcript | None]
"""(task position, repeat, journaled answers to re-score): what the engine plays."""


class UnitReplay:
    """The replay of one run's units (`for_run`: None when nothing of the run can be)."""

    def __init__(
        self, cache: ResponseCache, read: bool, digest: str, tasks: Sequence[Task]
    ) -> None:
        self.cache = cache
        self.read = read
        """False with `--no-cache`: lines are kept for later runs, none is replayed."""
        self.digest = digest.encode()
        self.tasks = tasks
        self.replayed = 0

    @classmethod
    def for_run(
        cls,
        layer: CallLayer,
        target: AgentTarget,
        *,
        tasks: Sequence[Task],
        parts: dict[str, Any],
        evaluators: Iterable[dict[str, Any]],
    ) -> UnitReplay | None:
        """`parts`: the run's settings that decide a unit (the engine's spec), as JSON."""
        cache = layer.state.cache
        if not isinstance(cache, ResponseCache) or not isinstance(target, LocalTarget):
            return None
        if target.mcp is not None:
            return None
        uses = list(evaluators)
        if any(use.get("local_uri") or use.get("version") for use in uses):
            return None  # a definition in a file: its text is not in the digest
        models = {target.model, parts.get("judge_model") or ""}
        models |= {
            u["options"]["model"] for u in uses if isinstance(u["options"].get("model"), str)
        }
        settings = layer.settings
        digest = {
            "code": code_digest(),
            "agent": parts,
            "system_prompt": target.system_prompt,
            "evaluators": uses,
            "models": sorted(_resolved(layer, m) for m in models if m),
            "providers": _without_secrets(
                {k: v.model_dump(mode="json") for k, v in settings.providers.items()}
            ),
            "reasoning_models": sorted(settings.reasoning_models),
            "max_answer_bytes": settings.max_answer_bytes,
        }
        text = json.dumps(digest, sort_keys=True, ensure_ascii=False, default=str)
        return cls(cache, layer.settings.use_cache, sha256_hex(text.encode()), tasks)

    def key(self, position: int, repeat: int) -> str:
        tasks = self.tasks
        if isinstance(tasks, PackedTasks):
            blob = tasks.json_at(position)  # the task is not built
        else:
            blob = task_json(tasks[position])
        return "unit:" + sha256_hex(b"%s\n%d\n%s" % (self.digest, repeat, blob))

    async def keep(self, key: str, line: str, unit: UnitResult, trail: CallTrail) -> None:
        """Keep the unit's journal line for later runs when only its inputs decided it."""
        if not (trail.clean and trail.keys and _pure(unit)):
            return
        payload = {"line": line, "keys": trail.keys, "hits": dict(trail.hits)}
        self.cache.keep_unit(key, payload_json(payload))

    async def playable(
        self,
        units: Iterator[Unit],
        append: Callable[[str], None],
        usage: Ledger,
        on_replayed: Callable[[int], None],
    ) -> AsyncIterator[Unit]:
        """`units` less those replayed: each of those is given to `append` as its journal
        line, its cache hits counted in `usage` (the run's ledger), and `on_replayed(n)`
        is told after each chunk."""
        while chunk := list(islice(units, CHUNK)):
            lines = await self._found(chunk) if self.read else {}
            done = 0
            for i, unit in enumerate(chunk):
                found = lines.get(i)
                if found is None:
                    yield unit
                    continue
                line, hits = found
                append(_renumbered(line, unit[0], unit[1]))
                for pool, count in hits.items():
                    usage.record_hit(pool, count)
                done += 1
            if done:
                self.replayed += done
                on_replayed(done)

    async def _found(self, chunk: list[Unit]) -> dict[int, tuple[str, dict[str, int]]]:
        """Chunk index → (journal line, cache hits per pool) of the units to replay."""
        keys = {
            i: self.key(pos, repeat)
            for i, (pos, repeat, answered) in enumerate(chunk)
            if answered is None
        }
        rows = await self.cache.units(list(keys.values()))
        memos: dict[int, tuple[str, list[str], dict[str, int]]] = {}
        for i, key in keys.items():
            memo = _memo(rows.get(key))
            if memo is not None:
                memos[i] = memo
        needed = sorted({k for _, used, _ in memos.values() for k in used})
        there = await self.cache.present(needed) if needed else set()
        return {
            i: (line, hits)
            for i, (line, used, hits) in memos.items()
            if all(k in there for k in used)
        }


def replayed_notice(replayed: int, total: int) -> str:
    """What the run says of its replayed units."""
    return (
        f"{replayed:,} of {total:,} units replayed from the cache: their task, agent, "
        "evaluators and cached answers are unchanged (`--no-cache` plays every unit again)"
    )


def _memo(text: str | None) -> tuple[str, list[str], dict[str, int]] | None:
    """A kept unit as (line, answers it used, hits per pool); None: absent or not this
    version's shape (it is then played, and kept anew)."""
    try:
        payload = json.loads(text) if text is not None else None
    except ValueError:
        return None
    if not isinstance(payload, dict):
        return None
    line, used, hits = payload.get("line"), payload.get("keys"), payload.get("hits")
    if not (isinstance(line, str) and _HEAD.match(line) and isinstance(used, list) and used):
        return None
    if not all(isinstance(k, str) for k in used) or not isinstance(hits, dict):
        return None
    if not all(isinstance(p, str) and isinstance(n, int) and n > 0 for p, n in hits.items()):
        return None
    return line, used, hits


def _renumbered(line: str, position: int, repeat: int) -> str:
    """The kept line as this run writes it: its position and repeat, and the replay's own
    latency and cost (none: nothing was asked)."""
    body = _HEAD.sub("", line, count=1)
    return f'{{"task": {position}, "repeat": {repeat}, ' + _SPENT.sub(r"\g<1>0.0", body)


def _pure(unit: UnitResult) -> bool:
    """Whether the unit was decided by its inputs and cached answers alone."""
    score = unit.score
    if score.status == "error" or score.errors() or unit.transcript is None:
        return False
    transcript = unit.transcript
    if transcript.simulation is not None:
        return False
    for turn in transcript.turns:
        if turn.simulated or any(c.source not in PURE_TOOL_SOURCES for c in turn.tool_calls):
            return False
    return all(_pure_evaluator(r.evaluator) for r in score.results)


@functools.cache
def _pure_evaluator(name: str) -> bool:
    """A built-in whose verdict follows from the sample and cached answers (not one that
    reads the latency, which a replay does not repeat)."""
    info = lookup(name)
    return (
        info is not None
        and info.factory.__module__.startswith("agentopt.evaluators.")
        and info.kind in PURE_KINDS
        and "latency_s" not in info.needs
    )


def _resolved(layer: CallLayer, model: str) -> str:
    ref = layer.resolve(model)
    return f"{model} → {ref.provider}:{ref.type}:{ref.model}@{ref.server or ''}"


def _without_secrets(value: Any) -> Any:
    """Settings as hashed into the digest: credentials left out, not even as a digest."""
    if isinstance(value, dict):
        return {
            k: _without_secrets(v) for k, v in value.items() if not _SECRET_FIELD.search(str(k))
        }
    if isinstance(value, list):
        return [_without_secrets(v) for v in value]
    return value


@functools.cache
def code_digest() -> str:
    """This agentopt's code and prompt templates, by name, size and modification time: an
    upgrade, or an edit of a checkout, replays nothing kept before it."""
    digest = hashlib.sha256()
    for root in (Path(__file__).resolve().parents[2], templates_dir()):
        for folder, dirs, files in os.walk(root):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for name in sorted(files):
                path = os.path.join(folder, name)
                try:
                    st = os.stat(path)
                except OSError:
                    continue
                digest.update(f"{path}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return digest.hexdigest()
