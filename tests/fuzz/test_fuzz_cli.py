"""The nasty-file corpus through the real CLI (issue 14 item 1): `agentopt eval validate` and
`agentopt eval run --dry-run` in a subprocess, as a user would meet them. Each must exit 0 or
2, print no traceback, and stay under a CPU cap (the interpreter's start included)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import REPO

CORPUS = REPO / "tests" / "fixtures" / "fuzz"
WALL_CAP_S = 120.0
CLI_CPU_CAP_S = 8.0
"""CPU seconds for one CLI call on one nasty file, ~0.7 s of it Python and agentopt's start."""


@dataclass
class Ran:
    args: list[str]
    code: int
    output: str
    cpu_s: float


def agentopt(cwd: Path, *args: str) -> Ran:
    """Run the CLI and read its own CPU time from wait4 (so calls can run side by side)."""
    out = cwd / f".out-{os.getpid()}-{abs(hash(args))}"
    with open(out, "wb") as fh:
        proc = subprocess.Popen(
            [sys.executable, "-m", "agentopt", "--no-prompt", *args],
            cwd=cwd,
            stdout=fh,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env={**os.environ, "NO_COLOR": "1", "COLUMNS": "200"},
        )
        # A hang must fail the test, not stall it: killed after WALL_CAP_S (exit -9).
        timer = threading.Timer(WALL_CAP_S, proc.kill)
        timer.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        finally:
            timer.cancel()
            proc.returncode = 0  # reaped by wait4 above
    text = out.read_bytes().decode("utf-8", "replace")
    out.unlink()
    code = os.waitstatus_to_exitcode(status)
    return Ran(list(args), code, text, usage.ru_utime + usage.ru_stime)


def corpus_inputs(tmp: Path) -> list[Path]:
    """The stored corpus, plus what is too big to store: a 10 MB YAML line (it kept the YAML
    scanner busy for minutes), a YAML file just over the size limit, 30,000 short keys."""
    files = [shutil.copy(p, tmp / p.name) for p in sorted(CORPUS.iterdir()) if p.suffix != ".md"]
    (tmp / "long_line.eval.yaml").write_text("name: " + "x" * 10_000_000 + "\n")
    (tmp / "over_limit.eval.yaml").write_text("name: s\n" + "# pad\n" * 50_000)
    (tmp / "many_keys.eval.yaml").write_text(
        "name: s\noptions:\n" + "".join(f"  k{i}: {i}\n" for i in range(30_000))
    )
    return [Path(f) for f in files] + [
        tmp / "long_line.eval.yaml",
        tmp / "over_limit.eval.yaml",
        tmp / "many_keys.eval.yaml",
    ]


def dry_run_args(path: Path) -> list[str]:
    if path.name.endswith(".eval.yaml"):
        return ["eval", "run", "--dry-run", "--config", str(path)]
    return [
        "eval", "run", "--dry-run", "--prompts-file", str(path),
        "--agent-model", "mock:echo", "--evaluator", "ExactMatch",
    ]  # fmt: skip


@pytest.mark.slow
@pytest.mark.timeout(900)  # ~50 interpreter starts: minutes on a loaded 2-core machine
def test_nasty_files_through_validate_and_dry_run(tmp_path: Path) -> None:
    inputs = corpus_inputs(tmp_path)
    runnable = [p for p in inputs if "rubric" not in p.name and "evaluator" not in p.name]
    calls = [["eval", "validate", str(p)] for p in inputs] + [dry_run_args(p) for p in runnable]
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(lambda a: agentopt(tmp_path, *a), calls))
    bad = [
        f"{' '.join(r.args[:2])} {Path(r.args[-1]).name}: exit {r.code}, {r.cpu_s:.1f} CPU-s\n"
        f"{r.output[-600:]}"
        for r in results
        if r.code not in (0, 2) or "Traceback" in r.output or r.cpu_s > CLI_CPU_CAP_S
    ]
    assert not bad, "\n\n".join(bad)
    validated = {Path(r.args[-1]).name: r for r in results if r.args[1] == "validate"}
    assert validated["bom_crlf.jsonl"].code == 0  # a valid file with a BOM and CRLF loads
    assert validated["alias_bomb.eval.yaml"].code == 2
    assert "expands to more than" in validated["alias_bomb.eval.yaml"].output
    assert "half of a UTF-16 pair" in validated["surrogate.jsonl"].output  # printed
    assert "line 6, column" in validated["latin1.evaluator.yaml"].output
    assert "is 9.5 MiB" in " ".join(validated["long_line.eval.yaml"].output.split())
    assert len(results) == len(inputs) + len(runnable)
