"""A rerun replays each unit whose inputs and cached answers are unchanged, instead of playing
it again: a cached rerun of 10,000 tasks costs about a quarter of the first run's CPU
(0.250–0.275× in six runs at 763f3b0, bench/README), where it cost ~0.7 (issue 37).

A unit played against a cache leaves in the cache file (`units`) where its journal line is
(run, offset, size, digest: the line stays in its journal), keyed by everything that decides
it: this agentopt's code, the agent definition and the models it resolves to, the evaluators
and their settings, the dataset's settings (the run's digest), the task as loaded and the
repeat. A later run whose unit has that key, whose line is still where it was, and whose cache
still holds every answer the unit stood on (`models.call_trail`), writes the line again in
place of playing the unit: the same verdict, record and usage an engine rerun would write from
the same cached answers (its calls counted as cache hits, each pool as the engine counts them),
with the replay's own latency and cost (none). `--no-cache` plays every unit.

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
from collections import Counter
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Sequence
from itertools import islice
from pathlib import Path
from typing import Any, BinaryIO, NamedTuple

from agentopt.agents.base import AgentTarget
from agentopt.agents.local import LocalTarget
from agentopt.contracts.packed_tasks import PackedTasks, task_json
from agentopt.contracts.task import Task
from agentopt.contracts.task_record import UnitResult
from agentopt.contracts.transcript import Transcript
from agentopt.core.digest import sha256_hex
from agentopt.core.ids import ID_RE
from agentopt.core.paths import runs_dir, templates_dir
from agentopt.evaluators.registry import lookup
from agentopt.models.cache import ResponseCache
from agentopt.models.cache_sql import payload_json
from agentopt.models.call import CallLayer
from agentopt.models.call_trail import CallTrail
from agentopt.models.cost import Ledger
from agentopt.models.types import POOLS

CHUNK = 256
"""Units looked up together (two SQL reads a chunk)."""
PURE_TOOL_SOURCES = frozenset({"mock", "skill", "none", "refused"})
"""Tool answers decided by the agent definition and the task (not by code or a server)."""
PURE_KINDS = frozenset({"deterministic", "judge", "embedding"})
MAX_LINE = 64 << 20
"""The largest journal line a replay reads back."""
_SECRET_FIELD = re.compile(r"key|token|secret|password|credential", re.IGNORECASE)
# Journal lines are compact (`redaction.model_line`); lines of older versions have a space
# after each `,` and `:`, and are read alike.
_SPENT = re.compile(r'("(?:latency_s|cost_usd)": ?)-?[0-9][0-9.eE+-]*')
_HEAD = re.compile(r'^\{"task": ?-?[0-9]+, ?"repeat": ?-?[0-9]+, ?')

Unit = tuple[int, int, Transcript | None]
"""(task position, repeat, journaled answers to re-score): what the engine plays."""


class UnitReplay:
    """The replay of one run's units (`for_run`: None when nothing of the run can be)."""

    def __init__(
        self, cache: ResponseCache, read: bool, digest: str, tasks: Sequence[Task], runs: Path
    ) -> None:
        self.cache = cache
        self.runs = runs
        """Where the runs' journals are (the kept lines are read from them)."""
        self.read = read
        """False with `--no-cache`: units are kept for later runs, none is replayed."""
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
        digest_hex = sha256_hex(text.encode())
        return cls(cache, layer.settings.use_cache, digest_hex, tasks, runs_dir(layer.project_dir))

    def key(self, position: int, repeat: int) -> str:
        tasks = self.tasks
        if isinstance(tasks, PackedTasks):
            blob = tasks.json_at(position)  # the task is not built
        else:
            blob = task_json(tasks[position])
        return "unit:" + sha256_hex(b"%s\n%d\n%s" % (self.digest, repeat, blob))

    def keep(
        self, key: str, run_id: str, at: int, line: str, unit: UnitResult, trail: CallTrail
    ) -> None:
        """Remember where the unit's journal line is (run, offset, size, digest) for later
        runs, when only its inputs decided it. The line stays in its journal: a copy of it in
        the cache file cost a first run of 10,000 tasks ~10% more CPU and 5 MB more memory;
        this costs ~4% and 3 MB (four rounds each, within the machine's noise; bench/README)."""
        if not (trail.clean and trail.keys and _pure(unit)):
            return
        data = (line + "\n").encode()
        memo = {
            "run": run_id,
            "at": at,
            "size": len(data),
            "sha": sha256_hex(data)[:32],
            "keys": trail.keys,
            "hits": dict(trail.hits),
        }
        self.cache.keep_unit(key, payload_json(memo))

    async def playable(
        self,
        units: Iterator[Unit],
        append: Callable[[list[str]], None],
        usage: Ledger,
        on_replayed: Callable[[int], None],
    ) -> AsyncIterator[Unit]:
        """`units` less those replayed: those are given to `append` as their journal lines,
        the replayed units between two played ones at once (one redactor lookup and one
        ledger update for them, not one a unit), their cache hits counted in `usage` (the
        run's ledger), and `on_replayed(n)` is told of each such batch."""
        while chunk := list(islice(units, CHUNK)):
            lines = await self._found(chunk) if self.read else {}
            replayed: list[str] = []
            hits: Counter[str] = Counter()
            for i, unit in enumerate(chunk):
                found = lines.get(i)
                if found is None:
                    if replayed:  # journaled in the units' order, before the one played
                        self._replayed(replayed, hits, append, usage, on_replayed)
                        replayed, hits = [], Counter()
                    yield unit
                    continue
                line, used = found
                replayed.append(_renumbered(line, unit[0], unit[1]))
                hits.update(used)
            if replayed:
                self._replayed(replayed, hits, append, usage, on_replayed)

    def _replayed(
        self,
        lines: list[str],
        hits: Counter[str],
        append: Callable[[list[str]], None],
        usage: Ledger,
        on_replayed: Callable[[int], None],
    ) -> None:
        append(lines)
        for pool, count in hits.items():
            usage.record_hit(pool, count)
        self.replayed += len(lines)
        on_replayed(len(lines))

    async def _found(self, chunk: list[Unit]) -> dict[int, tuple[str, dict[str, int]]]:
        """Chunk index → (journal line, cache hits per pool) of the units to replay."""
        keys = {
            i: self.key(pos, repeat)
            for i, (pos, repeat, answered) in enumerate(chunk)
            if answered is None
        }
        rows = await self.cache.units(list(keys.values()))
        memos = {i: m for i, key in keys.items() if (m := _memo(rows.get(key))) is not None}
        lines = _read_lines(self.runs, memos)
        needed = sorted({k for i in lines for k in memos[i].keys})
        there = await self.cache.present(needed) if needed else set()
        return {
            i: (line, memos[i].hits)
            for i, line in lines.items()
            if all(k in there for k in memos[i].keys)
        }


class _Memo(NamedTuple):
    """Where a kept unit's journal line is, and the cached answers it stood on."""

    run: str
    at: int
    size: int
    sha: str
    keys: list[str]
    hits: dict[str, int]


def replayed_notice(replayed: int, total: int) -> str:
    """What the run says of its replayed units."""
    return (
        f"{replayed:,} of {total:,} units replayed from the cache: their task, agent, "
        "evaluators and cached answers are unchanged (`--no-cache` plays every unit again)"
    )


def _memo(text: str | None) -> _Memo | None:
    """A kept unit; None: absent or not this version's shape (it is then played, and kept
    anew)."""
    try:
        m = json.loads(text) if text is not None else None
    except (ValueError, TypeError, RecursionError):  # whatever the file holds: played
        return None
    if not isinstance(m, dict):
        return None
    run, at, size, sha = m.get("run"), m.get("at"), m.get("size"), m.get("sha")
    used, hits = m.get("keys"), m.get("hits")
    if not (isinstance(run, str) and ID_RE.fullmatch(run) and isinstance(sha, str)):
        return None  # a run id names a folder under .agentopt/runs, never a path
    if not (isinstance(at, int) and at >= 0 and isinstance(size, int) and 0 < size <= MAX_LINE):
        return None
    if not (isinstance(used, list) and used and all(isinstance(k, str) for k in used)):
        return None
    if not isinstance(hits, dict):
        return None
    if not all(p in POOLS and isinstance(n, int) and n > 0 for p, n in hits.items()):
        return None
    return _Memo(run, at, size, sha, used, hits)


def _read_lines(runs: Path, memos: dict[int, _Memo]) -> dict[int, str]:
    """The kept lines that are still in their journals as they were written (same bytes at
    the same place: a journal is only appended to); a run deleted since, or a line that is
    not the one kept, is left out (its unit is played)."""
    out: dict[int, str] = {}
    files: dict[str, BinaryIO | None] = {}
    try:
        for i, memo in memos.items():
            if memo.run not in files:
                try:
                    files[memo.run] = open(runs / memo.run / "journal.jsonl", "rb")  # noqa: SIM115
                except OSError:
                    files[memo.run] = None
            fh = files[memo.run]
            if fh is None:
                continue
            try:
                fh.seek(memo.at)
                data = fh.read(memo.size)
            except OSError:
                continue
            if len(data) != memo.size or sha256_hex(data)[:32] != memo.sha:
                continue
            line = data.decode("utf-8", errors="replace").rstrip("\n")
            if _HEAD.match(line):
                out[i] = line
    finally:
        for fh in files.values():
            if fh is not None:
                fh.close()
    return out


def _renumbered(line: str, position: int, repeat: int) -> str:
    """The kept line as this run writes it: its position and repeat, and the replay's own
    latency and cost (none: nothing was asked)."""
    body = _HEAD.sub("", line, count=1)
    return f'{{"task":{position},"repeat":{repeat},' + _SPENT.sub(_spent_nothing, body)


def _spent_nothing(match: re.Match[str]) -> str:
    """A latency or cost made 0.0 (a function: a template's `\\g<1>` is expanded in Python
    at each match, 1.6 µs more a line)."""
    return match.group(1) + "0.0"


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
