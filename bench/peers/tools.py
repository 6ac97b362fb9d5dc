"""How each tool is invoked on the dataset, and how its own output says how many tasks passed.

Every tool runs its ordinary CLI the way a user would, quiet, with its usual result storage
(agentopt's run folder, promptfoo's SQLite database, Inspect's `.eval` log) and with no
response cache: agentopt gets a fresh project folder (an empty cache), promptfoo `--no-cache`,
Inspect caches nothing unless asked. Pass counts come from what each tool itself reports, so a
tool that silently failed shows up as a short count rather than as a fast run.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Protocol

from bench.peers.dataset import MODEL, DatasetFiles
from bench.peers.install import Peer
from bench.peers.measure import Measurement


@dataclass
class Invocation:
    """One prepared run: what to execute, where, and with which environment."""

    argv: list[str]
    cwd: Path
    env: dict[str, str]
    workdir: Path
    """This run's private folder (results, logs, the tool's state)."""


class Tool(Protocol):
    """A tool under measurement: builds its command line and reads back its pass count."""

    @property
    def name(self) -> str: ...

    @property
    def version(self) -> str: ...

    @property
    def logging(self) -> dict[str, str]:
        """What the tool records by default ("default") and with the other setting ("alt")."""
        ...

    def prepare(
        self,
        workdir: Path,
        files: DatasetFiles,
        base_url: str,
        concurrency: int,
        logging: str = "default",
    ) -> Invocation: ...

    def passes(self, run: Invocation, result: Measurement) -> int | None: ...

    def unsupported(self, workload: str) -> str | None:
        """Why this tool cannot run `workload` like the others (None: it can)."""
        ...


def base_env() -> dict[str, str]:
    """The caller's environment minus anything that could send a tool to a real service, and
    with bytecode caching allowed: Python tools run as installed, with compiled bytecode (the
    warm-up run writes it), not recompiling their sources on every run because this machine
    sets PYTHONDONTWRITEBYTECODE."""
    return {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("OPENAI_", "AZURE_", "ANTHROPIC_", "INSPECT_EVAL_"))
        and k != "PYTHONDONTWRITEBYTECODE"
    }


@dataclass
class Agentopt:
    name: str = "agentopt"
    version: str = field(default_factory=lambda: metadata.version("agentopt"))
    logging: dict[str, str] = field(
        default_factory=lambda: {
            "default": "run folder (run.json, journal.jsonl, results.json) and the response "
            "cache; no log file",
            "alt": "--debug: every request and response in .agentopt/agentopt.log",
        }
    )

    def unsupported(self, workload: str) -> str | None:
        return None

    def prepare(
        self,
        workdir: Path,
        files: DatasetFiles,
        base_url: str,
        concurrency: int,
        logging: str = "default",
    ) -> Invocation:
        project = workdir / "agentopt-project"
        shutil.copytree(files.agentopt_tasks.parent, project)  # tasks (+ the tool agent)
        model = f"compat:{MODEL}@{base_url}"
        scoring = ["--evaluator", "ExactMatch"]
        if files.workload == "judge":
            scoring = ["--evaluator", "builtin.relevance", "--eval-model", model]
        argv = [
            sys.executable, "-m", "agentopt", "-C", str(project), "-q", "--no-prompt",
            *(["--debug"] if logging == "alt" else []),
            "eval", "run", "--prompts-file", "tasks.jsonl", "--agent-model", model, *scoring,
            "--concurrency", str(concurrency), "--judge-concurrency", str(concurrency),
        ]  # fmt: skip
        return Invocation(argv=argv, cwd=project, env=base_env(), workdir=workdir)

    def passes(self, run: Invocation, result: Measurement) -> int | None:
        found = sorted((run.cwd / ".agentopt" / "runs").glob("*/results.json"))
        if not found:
            return None
        return int(json.loads(found[-1].read_text())["summary"]["passed"])


@dataclass
class Promptfoo:
    peer: Peer
    name: str = "promptfoo"
    logging: dict[str, str] = field(
        default_factory=lambda: {
            "default": "every result in its SQLite database (promptfoo.db), plus its log "
            "files under the config folder",
            "alt": "--no-write: nothing saved to the database",
        }
    )

    @property
    def version(self) -> str:
        return self.peer.version

    def unsupported(self, workload: str) -> str | None:
        if workload == "tools":
            return (
                "no tool loop: its OpenAI provider runs a functionToolCallbacks callback once "
                "and returns the callback's output as the answer, without sending it back to "
                "the model (providers chat.js, 0.121.20)"
            )
        return None

    def prepare(
        self,
        workdir: Path,
        files: DatasetFiles,
        base_url: str,
        concurrency: int,
        logging: str = "default",
    ) -> Invocation:
        assert self.peer.command is not None
        home = workdir / "promptfoo-home"  # its database and logs, fresh for each run
        env = base_env() | {
            "PROMPTFOO_CONFIG_DIR": str(home),
            "PROMPTFOO_CACHE_PATH": str(home / "cache"),
            "PROMPTFOO_DISABLE_TELEMETRY": "1",
            "PROMPTFOO_DISABLE_UPDATE": "1",
            "PROMPTFOO_DISABLE_SHARING": "1",
        }
        argv = [
            *self.peer.command, "eval", "-c", str(files.promptfoo_config), "--no-cache",
            "-j", str(concurrency), "--no-table", "--no-progress-bar",
            *(["--no-write"] if logging == "alt" else []),
        ]  # fmt: skip
        return Invocation(argv=argv, cwd=files.promptfoo_config.parent, env=env, workdir=workdir)

    def passes(self, run: Invocation, result: Measurement) -> int | None:
        # Its own summary line, with thousands separators: "✓ 1,000 passed (100%)".
        found = re.findall(r"(\d[\d,]*) passed", result.stdout.read_text(errors="replace"))
        if found:
            return int(found[-1].replace(",", ""))
        # It has died at shutdown after a complete run (a logger error, twice here): the
        # results it saved in its own database say what it did.
        return promptfoo_db_passes(run.workdir / "promptfoo-home" / "promptfoo.db")


def promptfoo_db_passes(db: Path) -> int | None:
    """Passed results in a promptfoo database holding one eval (None: no database)."""
    if not db.exists():
        return None
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        (count,) = conn.execute("SELECT COUNT(*) FROM eval_results WHERE success = 1").fetchone()
    except sqlite3.Error:
        return None
    finally:
        conn.close()
    return int(count)


_READ_INSPECT_LOG = """
import glob, json, sys
from inspect_ai.log import read_eval_log
logs = sorted(glob.glob(sys.argv[1] + "/*.eval"))
log = read_eval_log(logs[-1], header_only=True)
out = {"status": log.status, "passed": None}
if log.results and log.results.scores:
    score = log.results.scores[0]
    out["passed"] = round(score.metrics["accuracy"].value * score.scored_samples)
print(json.dumps(out))
"""


@dataclass
class Inspect:
    peer: Peer
    name: str = "inspect"
    logging: dict[str, str] = field(
        default_factory=lambda: {
            "default": "an .eval log with every sample and its events, written as it goes",
            "alt": "--no-log-samples --no-log-realtime: the log keeps the results only",
        }
    )

    @property
    def version(self) -> str:
        return self.peer.version

    def unsupported(self, workload: str) -> str | None:
        return None

    def prepare(
        self,
        workdir: Path,
        files: DatasetFiles,
        base_url: str,
        concurrency: int,
        logging: str = "default",
    ) -> Invocation:
        assert self.peer.command is not None
        # `openai-api/<service>/<model>`: Inspect's provider for OpenAI-compatible servers,
        # configured by <SERVICE>_BASE_URL / <SERVICE>_API_KEY; it speaks chat completions.
        env = base_env() | (self.peer.env or {}) | {"FAKE_BASE_URL": base_url, "FAKE_API_KEY": "x"}
        argv = [
            *self.peer.command, "eval", files.inspect_task.name,
            "--model", f"openai-api/fake/{MODEL}", "--max-connections", str(concurrency),
            "--display", "none", "--log-dir", str(workdir / "inspect-logs"),
            *(["--no-log-samples", "--no-log-realtime"] if logging == "alt" else []),
        ]  # fmt: skip
        return Invocation(argv=argv, cwd=files.inspect_task.parent, env=env, workdir=workdir)

    def passes(self, run: Invocation, result: Measurement) -> int | None:
        # Inspect exits 0 even when the eval itself failed: read its log's status and score.
        python = Path(self.peer.command[0]).with_name("python")  # type: ignore[index]
        proc = subprocess.run(
            [str(python), "-c", _READ_INSPECT_LOG, str(run.workdir / "inspect-logs")],
            capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        if proc.returncode != 0:
            return None
        data = json.loads(proc.stdout.strip().splitlines()[-1])
        if data["status"] != "success" or data["passed"] is None:
            return 0
        return int(data["passed"])
