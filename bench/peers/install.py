"""Install the peer tools (promptfoo, Inspect AI) into a throwaway folder under the user's cache.

They are benchmark subjects, never project dependencies: promptfoo goes into its own npm
prefix and Inspect AI into its own venv, both under `~/.cache/agentopt/bench-peers/` (or
`$XDG_CACHE_HOME`), reused when already there with the pinned version. A failed install is
reported as the reason that peer is unavailable; the benchmark goes on with the others.

    python -m bench.peers.install          # install (or reuse) both, print versions and times
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

# The last promptfoo whose `engines` accepts Node 20 (`^20.20.0 || >=22.22.0`); 0.122 wants 22.
PROMPTFOO_VERSION = "0.121.20"
INSPECT_VERSION = "0.3.285"
INSTALL_TIMEOUT = 900.0


@dataclass
class Peer:
    """One installed (or not) peer tool."""

    name: str
    version: str = ""
    """The version actually installed, read back from the install."""
    command: list[str] | None = None
    """argv prefix that runs the tool; None when unavailable."""
    env: dict[str, str] | None = None
    """Extra environment the tool needs (e.g. PATH with the venv's bin)."""
    unavailable: str = ""
    """Why the tool cannot run here; empty when it can."""
    seconds: float = 0.0
    """How long installing took (near zero when reused)."""
    notes: str = ""
    """Versions of what the tool depends on that matter here (e.g. the openai SDK)."""


def cache_root() -> Path:
    """`~/.cache/agentopt/bench-peers` (honouring XDG_CACHE_HOME)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "agentopt" / "bench-peers"


def _run(argv: list[str], cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv, cwd=cwd, capture_output=True, text=True, timeout=INSTALL_TIMEOUT, check=False
    )


def _tail(proc: subprocess.CompletedProcess[str]) -> str:
    lines = (proc.stderr or proc.stdout or "").strip().splitlines()
    return lines[-1][:200] if lines else f"exit {proc.returncode}"


def install_promptfoo(root: Path | None = None) -> Peer:
    """`npm install promptfoo@<pinned>` into `<root>/promptfoo` unless already there."""
    peer = Peer("promptfoo")
    folder = (root or cache_root()) / "promptfoo"
    binary = folder / "node_modules" / ".bin" / "promptfoo"
    manifest = folder / "node_modules" / "promptfoo" / "package.json"
    node = shutil.which("node")
    if node is None or shutil.which("npm") is None:
        peer.unavailable = "node/npm not on PATH"
        return peer
    t0 = time.perf_counter()
    if not (manifest.exists() and json.loads(manifest.read_text())["version"] == PROMPTFOO_VERSION):
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "package.json").write_text('{"name": "bench-peers", "private": true}\n')
        print(f"installing promptfoo@{PROMPTFOO_VERSION} into {folder} ...", flush=True)
        try:
            proc = _run(
                ["npm", "install", "--no-audit", "--no-fund", f"promptfoo@{PROMPTFOO_VERSION}"],
                cwd=folder,
            )
        except subprocess.TimeoutExpired:
            peer.unavailable = f"npm install timed out after {INSTALL_TIMEOUT:.0f}s"
            return peer
        if proc.returncode != 0 or not binary.exists():
            peer.unavailable = f"npm install failed: {_tail(proc)}"
            return peer
    peer.seconds = time.perf_counter() - t0
    peer.version = json.loads(manifest.read_text())["version"]
    peer.command = [str(binary)]
    return peer


def install_inspect(root: Path | None = None) -> Peer:
    """A venv at `<root>/inspect-venv` with `inspect-ai==<pinned>` and `openai`."""
    peer = Peer("inspect")
    venv = (root or cache_root()) / "inspect-venv"
    python = venv / "bin" / "python"
    binary = venv / "bin" / "inspect"
    t0 = time.perf_counter()
    if _inspect_version(python) != INSPECT_VERSION:
        print(f"installing inspect-ai=={INSPECT_VERSION} + openai into {venv} ...", flush=True)
        try:
            if not python.exists():
                proc = _run([sys.executable, "-m", "venv", str(venv)])
                if proc.returncode != 0:
                    peer.unavailable = f"venv creation failed: {_tail(proc)}"
                    return peer
            proc = _run(
                [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check",
                 f"inspect-ai=={INSPECT_VERSION}", "openai"]
            )  # fmt: skip
        except subprocess.TimeoutExpired:
            peer.unavailable = f"pip install timed out after {INSTALL_TIMEOUT:.0f}s"
            return peer
        if proc.returncode != 0 or not binary.exists():
            peer.unavailable = f"pip install failed: {_tail(proc)}"
            return peer
    peer.seconds = time.perf_counter() - t0
    peer.version = _inspect_version(python) or "?"
    openai_version = _dist_version(python, "openai")
    if openai_version:
        peer.notes = f"openai {openai_version}"
    peer.command = [str(binary)]
    peer.env = {"PATH": f"{venv / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}"}
    return peer


def _dist_version(python: Path, dist: str) -> str:
    if not python.exists():
        return ""
    code = f"import importlib.metadata as m; print(m.version({dist!r}))"
    try:
        proc = _run([str(python), "-c", code])
    except subprocess.TimeoutExpired:
        return ""
    return proc.stdout.strip() if proc.returncode == 0 else ""


def _inspect_version(python: Path) -> str:
    return _dist_version(python, "inspect-ai")


def install_all(root: Path | None = None) -> dict[str, Peer]:
    """Both peers, by name, each available or carrying the reason it is not."""
    return {p.name: p for p in (install_promptfoo(root), install_inspect(root))}


def main() -> int:
    peers = install_all()
    for peer in peers.values():
        if peer.unavailable or not peer.command:
            print(f"{peer.name}: unavailable: {peer.unavailable}")
        else:
            where = peer.command[0]
            notes = f" ({peer.notes})" if peer.notes else ""
            print(f"{peer.name} {peer.version}{notes}: ready in {peer.seconds:.1f}s ({where})")
    return 0 if all(not p.unavailable for p in peers.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
