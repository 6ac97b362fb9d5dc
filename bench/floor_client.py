"""The floor: the least a client can do to run the floor bench's dataset, for `bench/floor.py`
to measure agentopt against.

Keep-alive connections (one per slot, opened once), hand-written HTTP/1.1, `json.loads` of the
answer and the same check as agentopt's `ExactMatch` (both sides stripped and case-folded). It
sends exactly the body agentopt's local agent sends for a task without instructions (the model,
the default system prompt, the task's query), one request per task, `concurrency` in flight.
It keeps no record, no cache, no journal: what it costs is what talking to the model costs.

    python bench/floor_client.py tasks.jsonl http://127.0.0.1:8000/v1 64 result.json

Standard library only, run as a script: its startup is the interpreter's.
"""

from __future__ import annotations

import asyncio
import json
import sys
from urllib.parse import urlsplit

MODEL = "fake-model"
SYSTEM = "You are a helpful assistant. Answer concisely."


async def run(tasks: list[dict[str, str]], base_url: str, concurrency: int) -> dict[str, int]:
    url = urlsplit(base_url)
    host, port = url.hostname or "127.0.0.1", url.port or 80
    path = (url.path.rstrip("/") + "/chat/completions").encode()
    head = b"POST %s HTTP/1.1\r\nHost: %s:%d\r\nContent-Type: application/json\r\n" % (
        path,
        host.encode(),
        port,
    )
    pending = iter(tasks)
    counts = {"passed": 0, "failed": 0, "errors": 0, "connections": 0}

    async def slot() -> None:
        reader, writer = await asyncio.open_connection(host, port)
        counts["connections"] += 1
        try:
            for task in pending:
                body = json.dumps(
                    {
                        "model": MODEL,
                        "messages": [
                            {"role": "system", "content": SYSTEM},
                            {"role": "user", "content": task["query"]},
                        ],
                    }
                ).encode()
                writer.write(head + b"Content-Length: %d\r\n\r\n" % len(body) + body)
                status, length = _status_and_length(await reader.readuntil(b"\r\n\r\n"))
                answer = json.loads(await reader.readexactly(length))
                if status != 200:
                    counts["errors"] += 1
                    continue
                content = answer["choices"][0]["message"]["content"] or ""
                expected = task["ground_truth"].strip().casefold()
                counts["passed" if content.strip().casefold() == expected else "failed"] += 1
        finally:
            writer.close()

    await asyncio.gather(*(slot() for _ in range(max(1, min(concurrency, len(tasks))))))
    return counts


def _status_and_length(head: bytes) -> tuple[int, int]:
    lines = head.split(b"\r\n")
    status = int(lines[0].split(b" ", 2)[1])
    for line in lines[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return status, int(value)
    raise ValueError("an answer without Content-Length")


def main(argv: list[str]) -> int:
    tasks_path, base_url, concurrency, out = argv[0], argv[1], int(argv[2]), argv[3]
    with open(tasks_path, encoding="utf-8") as fh:
        tasks = [json.loads(line) for line in fh if line.strip()]
    counts = asyncio.run(run(tasks, base_url, concurrency))
    with open(out, "w", encoding="utf-8") as fh:
        json.dump(counts | {"tasks": len(tasks)}, fh)
    return 0 if counts["passed"] == len(tasks) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
