"""The README's measured figures, from one run of this script (issue 39 item 4): a fresh clone
of the current commit, an empty home (no pip cache, no `~/.cache/agentopt`), then `make test`
(the suite CI runs, with its pass and skip counts) and `make demo` in the same clone, timed,
with the date, the commit and the load average before and after. It prints the README's
paragraph; paste it under "Two commands" in README.md.

    python -m bench readme_figures          # ~10-15 min on 2 cores; needs PyPI
    python -m bench.readme_figures --count  # only the suite's size (pytest --collect-only)

Not part of `python -m bench`'s default list: it installs everything from scratch."""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
SUMMARY = re.compile(r"=+ (?P<counts>.*?) in (?P<secs>[\d.]+)s")


def commit() -> str:
    return subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip


def counts(summary: str) -> dict[str, int]:
    """`1,666 passed, 1 skipped, 2 deselected` → {"passed": 1666, "skipped": 1, ...}."""
    return {
        word: int(number.replace(",", ""))
        for number, word in re.findall(r"(\d[\d,]*) (\w+)", summary)
    }


def collected() -> int:
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"],
        cwd=REPO, capture_output=True, text=True, check=False,
    ).stdout  # fmt: skip
    found = re.search(r"(\d+) tests? collected", out)
    return int(found.group(1)) if found else 0


def _timed(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, str]:
    started = time.monotonic()
    proc = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({proc.returncode}):\n{proc.stdout[-3000:]}")
    return time.monotonic() - started, proc.stdout


def measure() -> dict[str, Any]:
    """A fresh clone and an empty home: what a new contributor's first `make test` costs."""
    with tempfile.TemporaryDirectory(prefix="agentopt-readme-") as tmp:
        clone, home = Path(tmp) / "agentopt", Path(tmp) / "home"
        home.mkdir()
        subprocess.run(["git", "clone", "--quiet", str(REPO), str(clone)], check=True)
        env = {"PATH": os.environ["PATH"], "HOME": str(home), "PIP_NO_CACHE_DIR": "1"}
        load = os.getloadavg()[0]
        test_s, out = _timed(["make", "test"], clone, env)
        summary = SUMMARY.findall(out)
        demo_s, _ = _timed(["make", "demo"], clone, env)
        return {
            "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
            "commit": commit(),
            "load": f"{load:.1f} → {os.getloadavg()[0]:.1f}",
            "make_test_s": test_s,
            "suite_s": float(summary[-1][1]) if summary else None,
            "suite": counts(summary[-1][0]) if summary else {},
            "make_demo_s": demo_s,
        }


def paragraph(f: dict[str, Any]) -> str:
    suite = ", ".join(f"{n:,} {word}" for word, n in f["suite"].items())
    return (
        f"Measured by `python -m bench readme_figures` on {f['date']} at {f['commit']}, on a "
        f"fresh clone on a 2-core machine with an empty home (no pip cache, no "
        f"`~/.cache/agentopt`), load average {f['load']}: `make test` {f['make_test_s']:.0f} s "
        f"(the suite itself {f['suite_s']:.0f} s: {suite}; the rest is installing agentopt with "
        f"its extras, the model files and LiteLLM's proxy), then `make demo` in the same clone "
        f"{f['make_demo_s']:.0f} s."
    )


def run() -> list[dict[str, Any]]:
    figures = measure()
    print(paragraph(figures))
    return [
        {
            "bench": "readme_figures",
            "case": f"make test / make demo at {figures['commit']}",
            "value": f"{figures['make_test_s']:.0f} s / {figures['make_demo_s']:.0f} s",
            "detail": f"{figures['suite']}, {figures['date']}, load {figures['load']}",
        }
    ]


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="python -m bench.readme_figures", description=__doc__)
    parser.add_argument("--count", action="store_true", help="only count the suite's tests")
    args = parser.parse_args()
    if args.count:
        print(f"{collected():,} tests collected at {commit()}")
    else:
        run()
