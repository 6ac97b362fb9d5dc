"""Inputs whose size is all that is wrong with them (issue 38 item 2): many invalid lines,
many duplicate names, one record with thousands of unknown keys, in every dataset format.
Each `SHAPES[name](n)` returns (file name, bytes) growing linearly with `n`."""

from __future__ import annotations

import json
from collections.abc import Callable


def _lines(n: int, line: str) -> bytes:
    return (line * n).encode()


def _m365(items: list[dict[str, object]]) -> bytes:
    return json.dumps({"schemaVersion": "1.0.0", "items": items}).encode()


SHAPES: dict[str, Callable[[int], tuple[str, bytes]]] = {
    "jsonl: lines that are not JSON": lambda n: ("t.jsonl", _lines(n, "x\n")),
    "jsonl: lines without a query": lambda n: (
        "t.jsonl",
        "".join(f'{{"name": "t{i}"}}\n' for i in range(n)).encode(),
    ),
    "jsonl: one name given n times": lambda n: (
        "t.jsonl",
        _lines(n, '{"name": "same", "query": "q"}\n'),
    ),
    "jsonl: one line with n unknown keys": lambda n: (
        "t.jsonl",
        (json.dumps({"query": "q", **{f"k{i}": i for i in range(n)}}) + "\n").encode(),
    ),
    "jsonl: n lines with distinct unknown keys": lambda n: (
        "t.jsonl",
        "".join(f'{{"query": "q", "x{i}": 1}}\n' for i in range(n)).encode(),
    ),
    "m365: n items with an unknown key": lambda n: (
        "evals.json",
        _m365([{"prompt": "q", f"k{i}": 1} for i in range(n)]),
    ),
    "m365: one item with n unknown keys": lambda n: (
        "evals.json",
        _m365([{"prompt": "q", **{f"k{i}": 1 for i in range(n)}}]),
    ),
    "m365: n items that are not objects": lambda n: ("evals.json", _m365([1] * n)),  # type: ignore[list-item]
    "csv: n unknown columns": lambda n: (
        "t.csv",
        (",".join(["query", *(f"c{i}" for i in range(n))]) + "\nq" + "," * n + "\n").encode(),
    ),
    "csv: n rows without a query": lambda n: ("t.csv", ("query,name\n" + ",x\n" * n).encode()),
}
