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
