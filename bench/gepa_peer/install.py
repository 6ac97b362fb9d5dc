"""Install DSPy (with GEPA) into a throwaway venv under the user's cache — never a project
dependency: `~/.cache/agentopt/bench-peers/dspy-venv` (honouring XDG_CACHE_HOME), reused when
the pinned version is already there. A failed install is reported as the reason GEPA is
unavailable; the benchmark keeps agentopt's row.

    python -m bench.gepa_peer.install
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from bench.peers.install import Peer, cache_root

DSPY_VERSION = "3.4.1"
INSTALL_TIMEOUT = 900.0


def _run(argv: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv, capture_output=True, text=True, timeout=INSTALL_TIMEOUT, check=False
    )


def _last_line(proc: subprocess.CompletedProcess[str]) -> str:
    lines = (proc.stderr or proc.stdout or "").strip().splitlines()
    return lines[-1][:200] if lines else f"exit {proc.returncode}"


def _versions(python: Path) -> tuple[str, str]:
    """(dspy, gepa) versions importable by `python`; empty strings when not."""
    if not python.exists():
        return "", ""
    code = "import dspy, gepa, importlib.metadata as m; print(dspy.__version__, m.version('gepa'))"
    try:
        proc = _run([str(python), "-c", code])
    except subprocess.TimeoutExpired:
        return "", ""
    parts = proc.stdout.split() if proc.returncode == 0 else []
    return (parts[0], parts[1]) if len(parts) == 2 else ("", "")


def install_dspy(root: Path | None = None) -> Peer:
    """A venv at `<root>/dspy-venv` with `dspy==<pinned>`; `command` is its python."""
    peer = Peer("dspy.GEPA")
    venv = (root or cache_root()) / "dspy-venv"
    python = venv / "bin" / "python"
    t0 = time.perf_counter()
    if _versions(python)[0] != DSPY_VERSION:
        print(f"installing dspy=={DSPY_VERSION} into {venv} ...", flush=True)
        try:
            if not python.exists():
                proc = _run([sys.executable, "-m", "venv", str(venv)])
                if proc.returncode != 0:
                    peer.unavailable = f"venv creation failed: {_last_line(proc)}"
                    return peer
            proc = _run(
                [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check",
                 f"dspy=={DSPY_VERSION}"]
            )  # fmt: skip
        except subprocess.TimeoutExpired:
            peer.unavailable = f"pip install timed out after {INSTALL_TIMEOUT:.0f}s"
            return peer
        if proc.returncode != 0:
            peer.unavailable = f"pip install failed: {_last_line(proc)}"
            return peer
    dspy_version, gepa_version = _versions(python)
    if not dspy_version:
        peer.unavailable = "dspy installed but `import dspy, gepa` fails"
        return peer
    peer.seconds = time.perf_counter() - t0
    peer.version = dspy_version
    peer.notes = f"gepa {gepa_version}"
    peer.command = [str(python)]
    return peer


def main() -> int:
    peer = install_dspy()
    if peer.unavailable:
        print(f"{peer.name}: unavailable: {peer.unavailable}")
        return 1
    print(f"dspy {peer.version} ({peer.notes}): ready in {peer.seconds:.1f}s ({peer.command})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
