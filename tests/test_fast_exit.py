"""The console entry point leaves without the interpreter's teardown, and loses nothing: the
exit status, buffered output, the atexit handlers (the process guard, logging) and the
threads Python would wait for."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from agentopt.cli.fast_exit import exit_status


def _run(code: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "child.py"
    script.write_text(textwrap.dedent(code))
    return subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=60, cwd=tmp_path
    )


def test_status_output_and_atexit_handlers_survive_the_fast_exit(tmp_path: Path) -> None:
    done = _run(
        """
        import atexit, logging, sys
        from pathlib import Path
        from agentopt.cli.fast_exit import exit_now
        atexit.register(lambda: Path("atexit.txt").write_text("ran"))
        logging.basicConfig(filename="log.txt", level=logging.INFO)
        logging.info("logged before the exit")
        sys.stdout.write("no newline, still buffered")
        exit_now(3)
        """,
        tmp_path,
    )
    assert done.returncode == 3, done.stderr
    assert done.stdout == "no newline, still buffered"
    assert (tmp_path / "atexit.txt").read_text() == "ran"
    assert "logged before the exit" in (tmp_path / "log.txt").read_text()


def test_a_running_non_daemon_thread_is_waited_for(tmp_path: Path) -> None:
    done = _run(
        """
        import threading, time
        from pathlib import Path
        from agentopt.cli.fast_exit import exit_now
        def late():
            time.sleep(0.5)
            Path("thread.txt").write_text("finished")
        threading.Thread(target=late).start()
        exit_now(0)
        """,
        tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "thread.txt").read_text() == "finished"


@pytest.mark.parametrize(("code", "status"), [(None, 0), (0, 0), (2, 2), (256 + 4, 4), (-1, 255)])
def test_exit_status_is_what_system_exit_gives(code: int | None, status: int) -> None:
    assert exit_status(code) == status


def test_a_message_exit_prints_it_and_gives_1(capsys: pytest.CaptureFixture[str]) -> None:
    assert exit_status("stopped: no tasks") == 1
    assert capsys.readouterr().err == "stopped: no tasks\n"


def test_the_cli_exits_with_its_usage_status_and_message(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "agentopt", "eval", "run", "--no-such-option"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert done.returncode == 2
    assert "No such option" in done.stderr
