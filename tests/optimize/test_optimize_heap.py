"""The freeze of long-lived objects (core/heap.py): on in the console entry point's process,
off for in-process callers, whose cyclic garbage it would keep forever."""

from __future__ import annotations

import gc
import subprocess
import sys
from pathlib import Path

from tests.optimize.conftest import Models, make_project, optimize, two_phrase_rows

REPO = Path(__file__).resolve().parents[2]


def python(code: str) -> subprocess.CompletedProcess[str]:
    """`code` in a fresh interpreter (a freeze there cannot touch this test process)."""
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=60
    )


def test_an_in_process_optimize_leaves_the_collector_alone(tmp_path: Path, models: Models) -> None:
    before = gc.get_freeze_count()
    project = make_project(tmp_path, two_phrase_rows("t", 9))
    optimize(project, max_candidates=1, seed=1)
    assert gc.get_freeze_count() == before == 0


def test_once_enabled_the_objects_alive_are_frozen() -> None:
    code = (
        "import gc\n"
        "from agentopt.core import heap\n"
        "heap.freeze_long_lived()\n"
        "assert gc.get_freeze_count() == 0, 'froze before enable()'\n"
        "heap.enable()\n"
        "heap.freeze_long_lived()\n"
        "print(gc.get_freeze_count())\n"
    )
    done = python(code)
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) > 1000  # every module's objects, not a handful


def test_the_collector_waits_while_a_command_starts_and_is_itself_again_once_it_runs() -> None:
    """From the entry point until the run starts, young objects are collected 140x more
    rarely (they are the command's modules and inputs); `run_loop` restores the thresholds
    it found. An in-process caller (no `enable`) keeps the collector as it was."""
    code = (
        "import gc\n"
        "from agentopt.core import heap\n"
        "from agentopt.core.aio import run_loop\n"
        "before = gc.get_threshold()\n"
        "async def nothing():\n"
        "    return gc.get_threshold()\n"
        "assert run_loop(nothing()) == before, 'changed without enable()'\n"
        "heap.enable()\n"
        "starting = gc.get_threshold()\n"
        "running = run_loop(nothing())\n"
        "print(before[0], starting[0], running == before, gc.get_threshold() == before)\n"
    )
    done = python(code)
    assert done.returncode == 0, done.stderr
    default, starting, running, after = done.stdout.split()
    assert int(starting) == 100_000 > int(default)
    assert running == after == "True"


def test_the_console_entry_point_enables_it() -> None:
    code = (
        "import sys\n"
        "from agentopt.core import heap\n"
        "import agentopt.cli.app as app\n"
        "sys.argv = ['agentopt', '--version']\n"
        "import atexit\n"
        "atexit.register(lambda: print('enabled', heap._enabled, flush=True))\n"
        "app.main()\n"
    )
    done = python(code)
    assert "enabled True" in done.stdout, done.stdout + done.stderr


def test_trim_gives_the_heaps_free_pages_back_once_enabled() -> None:
    """Blocks freed between live ones leave holes glibc keeps resident; `trim` (called by a
    run every few thousand units and before its results) hands their pages back, and only in
    the process the entry point enabled it in."""
    code = (
        "from agentopt.core import heap\n"
        "def rss():\n"
        "    return int(open('/proc/self/status').read().split('VmRSS:')[1].split()[0]) // 1024\n"
        "big, keep = [], []\n"
        "for _ in range(1500):\n"
        "    big.append(bytearray(65536))  # 64 KB each, from the heap\n"
        "    keep.append(bytearray(600))  # live blocks between them\n"
        "del big\n"
        "before = rss()\n"
        "heap.trim()\n"
        "untouched = rss()\n"
        "heap.enable()\n"
        "heap.trim()\n"
        "print(before, untouched, rss())\n"
    )
    done = python(code)
    assert done.returncode == 0, done.stderr
    before, untouched, after = map(int, done.stdout.split())
    assert untouched >= before - 5  # not enabled: nothing given back
    assert after <= before - 60  # ~94 MB of holes given back
