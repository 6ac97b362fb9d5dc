"""A second fuzz strategy (issue 38 item 10), beside the byte mutations of `inputs.py`:
structure-aware. Each input kind is parsed into its data (a mapping, a list of records, CSV
rows), the data is mutated as data — a value swapped for one of another type, a key dropped or
unknown keys added, a list multiplied to thousands of items, a string made megabytes long,
nesting made deep — and written back in the kind's own format (or, now and then, another one,
truncated, or with a BOM). A share of inputs are not files at all: a FIFO, a socket, a link to a
device, a symlink loop, a dangling link, a folder stand where the file should be.

Shared by the CI test (`test_fuzz_structured.py`, a fixed budget, a fresh seed each run,
printed) and the long run through the CLI (`bench/fuzz_cli.py`).
"""

from __future__ import annotations

import copy
import csv
import io
import json
import os
import random
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from tests.fuzz.inputs import SEEDS

RUN_ID = "20260101-000000-abcdef"
JOB_ID = "20260101-000000-fedcba"


def _record_seeds() -> dict[str, tuple[str, str]]:
    """Saved records: run.json, a run journal, job.json, registry.json."""
    config = {
        "prompts_file": "tasks.jsonl",
        "agent_model": "mock:echo",
        "evaluators": ["ExactMatch"],
    }
    run = {
        "schema_version": 1,
        "id": RUN_ID,
        "name": "smoke",
        "status": "interrupted",
        "started_at": "2026-01-01T00:00:00Z",
        "config": config,
        "dataset": {"name": "tasks", "version": None},
        "evaluators": ["ExactMatch"],
    }
    entry = {"task": 0, "repeat": 0, "score": {"status": "pass", "score": 1.0},
             "record": {"name": "t1", "query": "q", "response": "q", "status": "pass"}}  # fmt: skip
    job = {"schema_version": 1, "id": JOB_ID, "status": "completed",
           "candidates": [{"id": "baseline", "strategy": "-"}]}  # fmt: skip
    registry = {"schema": 1, "datasets": {"tasks": {"versions": {"1": {
        "sha256": "0" * 64, "created_at": "2026-01-01T00:00:00Z", "file": "datasets/tasks.v1.jsonl",
    }}}}, "evaluators": {}}  # fmt: skip
    return {
        "run_json": ("run.json", json.dumps(run)),
        "journal": (
            "journal.jsonl",
            json.dumps(entry) + "\n" + json.dumps({**entry, "task": 1}) + "\n",
        ),
        "job_json": ("job.json", json.dumps(job)),
        "registry_json": ("registry.json", json.dumps(registry)),
    }


KINDS: dict[str, tuple[str, str]] = {**SEEDS, **_record_seeds()}
"""kind → (file name, valid content): every input kind a user or a crash can put in front of
agentopt."""

_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
_YAML = {"eval_yaml", "evaluator_yaml", "azure_yaml", "metadata_yaml"}
_LINES = {"jsonl", "journal"}


def parse(kind: str, text: str) -> Any:
    if kind in _YAML:
        return yaml.safe_load(text)
    if kind in _LINES:
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    if kind == "csv":
        return [dict(row) for row in csv.DictReader(io.StringIO(text))]
    if kind == "skill_md":
        head, body = text.split("---\n")[1:3]
        return {"front": yaml.safe_load(head), "body": body}
    return json.loads(text)


def dump(kind: str, data: Any, rng: random.Random) -> bytes:
    """`data` in the kind's format; sometimes in another one, cut short, or with a BOM."""
    style = rng.random()
    try:
        text = _text(kind, data, rng, style)
    except (RecursionError, UnicodeEncodeError):  # too deep, a lone surrogate: JSON (YAML too)
        text = json.dumps(data, default=str)
    raw = text.encode("utf-8", "surrogatepass")
    if style > 0.96:
        raw = raw[: rng.randrange(len(raw) + 1)]  # cut short, as a crash leaves a file
    elif style > 0.93:
        raw = b"\xef\xbb\xbf" + raw.replace(b"\n", b"\r\n")
    return raw


def _text(kind: str, data: Any, rng: random.Random, style: float) -> str:
    if style < 0.04:
        text = json.dumps(data, default=str)  # the wrong format
    elif kind in _YAML:
        flat = json.dumps(data, default=str)
        if len(flat) > 64 * 1024:  # big: as JSON, which is YAML too (PyYAML writes slowly)
            text = flat
        else:
            text = yaml.dump(
                data, Dumper=_DUMPER, sort_keys=False, allow_unicode=rng.random() < 0.5
            )
    elif kind in _LINES:
        rows = data if isinstance(data, list) else [data]
        text = "".join(json.dumps(r, default=str) + "\n" for r in rows)
    elif kind == "csv":
        text = _csv(data)
    elif kind == "skill_md" and isinstance(data, dict):
        text = f"---\n{yaml.safe_dump(data.get('front'))}---\n{data.get('body', '')}"
    else:
        text = json.dumps(data, default=str, indent=1 if rng.random() < 0.5 else None)
    return text


def _csv(data: Any) -> str:
    rows = data if isinstance(data, list) else [data]
    rows = [r if isinstance(r, dict) else {"query": r} for r in rows]
    columns = list(dict.fromkeys(str(k) for r in rows for k in r))
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=columns or ["query"], extrasaction="ignore")
    writer.writeheader()
    for r in rows:
        writer.writerow(
            {str(k): (json.dumps(v) if isinstance(v, dict | list) else v) for k, v in r.items()}
        )
    return out.getvalue()


# -- mutations of the data -----------------------------------------------------------------------

ALIASES = [
    "prompt", "question", "expected_response", "groundTruth", "dataset_file",
    "dimension_id", "tool_file", "max_iterations", "schemaVersion", "turns", "items",
]  # fmt: skip


def _value(rng: random.Random, depth: int = 0) -> Any:
    """A value of some type, small or not."""
    pick = rng.randrange(18)
    if pick == 0:
        return None
    if pick == 1:
        return rng.choice([True, False])
    if pick == 2:
        return rng.choice([0, -1, 1, 7, 10**30, -(10**19), 2**63])
    if pick == 3:
        return rng.choice([0.5, -0.0, 1e308, -1e-308, 3.14])
    if pick == 4:
        return ""
    if pick == 5:
        return rng.choice(
            ["x", "1", "yes", "null", "2026-13-45", "../../etc/passwd", "\u202e\u0000"]
        )
    if pick == 6:
        return "\ud800"  # a lone surrogate, written as JSON's escape
    if pick == 7:
        return "w" * rng.choice([300, 70_000, 2_000_000])
    if pick == 8:
        return []
    if pick == 9:
        return {}
    if pick == 10:
        nested: Any = "deep"
        for _ in range(rng.choice([10, 70, 400])):
            nested = [nested] if rng.random() < 0.5 else {"k": nested}
        return nested
    if pick == 11:
        return [rng.choice(["a", 1, None]) for _ in range(rng.choice([3, 5_000, 30_000]))]
    if pick == 12:
        return {f"k{i}": i for i in range(rng.choice([3, 3_000, 40_000]))}
    if pick == 13 and depth < 3:
        return [_value(rng, depth + 1) for _ in range(rng.randint(1, 4))]
    if pick == 14 and depth < 3:
        return {rng.choice(ALIASES): _value(rng, depth + 1) for _ in range(rng.randint(1, 4))}
    return rng.choice(["a", 2, True, None])


def _nodes(data: Any) -> list[tuple[Any, Any]]:
    """(container, key) of every place in the data, breadth first, capped."""
    out: list[tuple[Any, Any]] = []
    queue = [data]
    while queue and len(out) < 500:
        node = queue.pop(0)
        items = (
            node.items()
            if isinstance(node, dict)
            else enumerate(node)
            if isinstance(node, list)
            else ()
        )
        for key, child in list(items)[:50]:
            out.append((node, key))
            if isinstance(child, dict | list):
                queue.append(child)
    return out


def _small(value: Any) -> bool:
    """Small enough to be repeated thousands of times (inputs stay below ~30 MB)."""
    return len(json.dumps(value, default=str)) < 1000


def mutate(data: Any, rng: random.Random) -> Any:
    """One to four structure-aware mutations."""
    data = copy.deepcopy(data)
    for _ in range(rng.randint(1, 4)):
        nodes = _nodes(data)
        op = rng.randrange(8)
        if not nodes or op == 0:
            if rng.random() < 0.3:
                data = _value(rng)  # the whole document replaced
            elif isinstance(data, list) and data and _small(data):
                # copies, not references: a later mutation of one row must not change them all
                data = [copy.deepcopy(x) for x in data * rng.choice([2, 200, 20_000])]
            continue
        parent, key = rng.choice(nodes)
        if op in (1, 2):
            parent[key] = _value(rng)
        elif op == 3:
            del parent[key]
        elif op == 4 and isinstance(parent, dict):
            parent[rng.choice([*ALIASES, f"unknown_{rng.randrange(99)}"])] = _value(rng)
        elif op == 5 and isinstance(parent, list) and _small(parent[key]):
            item = parent[key]
            parent.extend(copy.deepcopy(item) for _ in range(rng.choice([1, 100, 20_000])))
        elif op == 6 and isinstance(parent[key], str) and len(parent[key]) < 100:
            parent[key] = parent[key] * rng.choice([2, 1000, 100_000])
        else:
            child = parent[key]
            parent[key] = [child] if not isinstance(child, list) else {"wrapped": child}
    return data


# -- special files ------------------------------------------------------------------------------

SPECIAL = ["fifo", "socket", "dev_zero", "dev_null", "loop", "dangling", "folder", "empty", "huge"]


@dataclass
class Made:
    """What was put at the path: "data" or one of SPECIAL; sockets to close afterwards."""

    what: str
    sock: socket.socket | None = None

    def close(self) -> None:
        if self.sock is not None:
            self.sock.close()


def make_input(kind: str, path: Path, rng: random.Random, special_rate: float = 0.06) -> Made:
    """Write one generated input of `kind` at `path`."""
    if rng.random() < special_rate:
        what = rng.choice(SPECIAL)
        if what == "fifo":
            os.mkfifo(path)
        elif what == "socket":
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.bind(str(path))
            return Made(what, sock)
        elif what in ("dev_zero", "dev_null"):
            path.symlink_to("/dev/zero" if what == "dev_zero" else "/dev/null")
        elif what == "loop":
            path.symlink_to(path.name)
        elif what == "dangling":
            path.symlink_to(f"missing-{path.name}")
        elif what == "folder":
            path.mkdir()
        elif what == "empty":
            path.write_bytes(b"")
        else:  # a file over every size limit, sparse so it costs no disk
            with open(path, "wb") as fh:
                fh.truncate(300 * 1024 * 1024)
        return Made(what)
    _name, seed = KINDS[kind]
    raw = dump(kind, mutate(parse(kind, seed), rng), rng)
    path.write_bytes(raw[:MAX_INPUT_BYTES])  # a cut is one more malformed input
    return Made("data")


MAX_INPUT_BYTES = 64 * 1024 * 1024
"""Largest generated file (the sparse "huge" special file goes past every limit anyway)."""
