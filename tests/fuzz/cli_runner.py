"""Generated inputs through the real CLI entry point (`agentopt.cli.app.main`, the console
script), each in a forked process of its own: the imports are paid once by the parent, each
input only pays its own work, and the child is a real process — its exit code, what it printed,
its CPU time (from `wait4`), a hang killed after `WALL_CAP_S`. Used by the CI test
(`test_fuzz_structured.py`) and by `bench/fuzz_cli.py`."""

from __future__ import annotations

import json
import os
import random
import re
import resource
import shutil
import signal
import sys
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

from tests.fuzz.structured import JOB_ID, KINDS, RUN_ID, Made, make_input

WALL_CAP_S = 60.0
"""A CLI call still running after this long is a hang (killed)."""
CPU_CAP_S = 20.0
"""More CPU than this for one input is a failure (the issue's bound)."""
OK_CODES = {0, 1, 2, 3}

EVAL_YAML = (
    "name: fuzz\nagent: {name: support, kind: prompt, model: mock:echo, instruction: Be brief.}\n"
    "dataset: {name: tasks, local_uri: tasks.jsonl}\nevaluators: [builtin.exact_match]\n"
    "options: {eval_model: mock:echo}\n"
)
AGENT_EVAL_YAML = (
    "name: fuzz\n"
    "agent: {name: support, kind: prompt, config: .agent_configs/baseline/metadata.yaml}\n"
    "dataset: {local_uri: tasks.jsonl}\nevaluators: [builtin.exact_match]\n"
    "options: {eval_model: mock:echo}\n"
)
TASKS = '{"name": "t1", "query": "q", "ground_truth": "q"}\n{"name": "t2", "query": "r"}\n'


@dataclass
class Case:
    """One generated input and the command that meets it."""

    kind: str
    made: str
    path: Path
    args: list[str]


def prepare(kind: str, folder: Path, rng: random.Random) -> tuple[Case, Made]:
    """Lay out a project in `folder` with a generated input of `kind`, and pick the command."""
    folder.mkdir(parents=True)
    (folder / "tasks.jsonl").write_text(TASKS)
    name = KINDS[kind][0]
    validate = rng.random() < 0.5
    if kind in ("metadata_yaml", "tools_json", "skill_md"):
        base = folder / ".agent_configs" / "baseline"
        base.mkdir(parents=True)
        (base / "instructions.md").write_text("Be brief.\n")
        (folder / "eval.yaml").write_text(AGENT_EVAL_YAML)
        meta = "model: mock:echo\ninstruction_file: instructions.md\n"
        if kind == "tools_json":
            meta += "tools_file: tools.json\n"
        if kind == "skill_md":
            meta += "skill_dir: skills\n"
            (base / "skills" / "s").mkdir(parents=True)
        path = base / ("skills/s/SKILL.md" if kind == "skill_md" else name)
        if kind != "metadata_yaml":
            (base / "metadata.yaml").write_text(meta)
        args = ["eval", "run", "--dry-run"]
    elif kind in ("run_json", "journal"):
        run = folder / ".agentopt" / "runs" / RUN_ID
        run.mkdir(parents=True)
        if kind == "journal":
            (run / "run.json").write_text(KINDS["run_json"][1])
        path = run / name
        args = ["eval", "run", "--resume", RUN_ID] + ([] if kind == "journal" else ["--dry-run"])
    elif kind == "job_json":
        job = folder / ".agentopt" / "optimize" / JOB_ID
        job.mkdir(parents=True)
        path = job / name
        args = ["optimize", "status", JOB_ID]
    elif kind == "registry_json":
        (folder / "eval.yaml").write_text(EVAL_YAML)
        path = folder / ".azure" / ".foundry" / name
        path.parent.mkdir(parents=True)
        args = ["eval", "update"]
    elif kind == "results_json":
        path = folder / name
        args = ["eval", "show", str(path)]
    elif kind == "azure_yaml":
        (folder / "eval.yaml").write_text(EVAL_YAML)
        path = folder / name
        args = ["eval", "run", "--dry-run"]
    elif kind == "eval_yaml":
        path = folder / name
        args = ["eval", "validate", str(path)] if validate else ["eval", "run", "--dry-run"]
    elif kind in ("rubric", "evaluator_yaml"):
        path = folder / name
        args = ["eval", "validate", str(path)]
    else:  # datasets
        path = folder / name
        args = ["eval", "validate", str(path)] if validate else [
            "eval", "run", "--dry-run", "--prompts-file", str(path),
            "--agent-model", "mock:echo", "--evaluator", "ExactMatch",
        ]  # fmt: skip
    if path.is_file():
        path.unlink()  # the dataset under test is the project's own tasks.jsonl
    made = make_input(kind, path, rng)
    return Case(kind, made.what, path, args), made


@dataclass
class Outcome:
    case: Case
    code: int
    output: str
    cpu_s: float
    hung: bool

    @property
    def traceback(self) -> bool:
        return "Traceback (most recent call last)" in self.output or self.code not in OK_CODES

    @property
    def unnamed(self) -> bool:
        """An exit-2 message that does not name the input file (by name or path)."""
        if self.code != 2:
            return False
        flat = re.sub(r"\s+", "", self.output)
        return self.case.path.name not in flat and str(self.case.path) not in flat


def run_cli(case: Case, cwd: Path) -> Outcome:
    """`agentopt --no-prompt -C cwd ARGS` in a forked child; its output, code and CPU."""
    out = cwd.parent / f".{cwd.name}.out"
    pid = os.fork()
    if pid == 0:  # the child: the console script's own entry point
        try:
            fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            null = os.open(os.devnull, os.O_RDONLY)
            os.dup2(null, 0)
            os.dup2(fd, 1)
            os.dup2(fd, 2)
            os.environ.update({"NO_COLOR": "1", "COLUMNS": "200"})
            resource.setrlimit(resource.RLIMIT_CPU, (int(CPU_CAP_S) + 10, int(CPU_CAP_S) + 15))
            sys.argv = ["agentopt", "--no-prompt", "-C", str(cwd), *case.args]
            from agentopt.cli.app import main

            main()
        except BaseException:
            traceback.print_exc()
            sys.stderr.flush()
            os._exit(99)
        os._exit(0)
    deadline = time.monotonic() + WALL_CAP_S
    hung = False
    while True:
        done, status, usage = os.wait4(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            hung = True
            os.kill(pid, signal.SIGKILL)
            done, status, usage = os.wait4(pid, 0)
            break
        time.sleep(0.005)
    output = out.read_bytes().decode("utf-8", "replace") if out.exists() else ""
    out.unlink(missing_ok=True)
    code = os.waitstatus_to_exitcode(status)
    return Outcome(case, code, output, usage.ru_utime + usage.ru_stime, hung)


def preload() -> None:
    """Import what the commands import, once, in the parent (the children share it)."""
    import agentopt.cli.app
    import agentopt.cli.eval_cmd
    import agentopt.cli.eval_run_cmd
    import agentopt.cli.eval_show_cmd
    import agentopt.cli.optimize_cmd
    import agentopt.workflows.run.eval_run
    import agentopt.workflows.update
    import agentopt.workflows.validate  # noqa: F401


def fuzz(n: int, seed: int, root: Path, on_outcome=None) -> list[Outcome]:  # type: ignore[no-untyped-def]
    """`n` inputs, round-robin over every kind, each through the CLI; failures kept whole."""
    rng = random.Random(seed)
    kinds = sorted(KINDS)
    outcomes: list[Outcome] = []
    for i in range(n):
        kind = kinds[i % len(kinds)]
        folder = root / f"in{i}"
        case, made = prepare(kind, folder, rng)
        try:
            outcome = run_cli(case, folder)
        finally:
            made.close()
        outcomes.append(outcome)
        if on_outcome is not None:
            on_outcome(outcome)
        if not (outcome.hung or outcome.traceback or outcome.unnamed or outcome.cpu_s > CPU_CAP_S):
            shutil.rmtree(folder, ignore_errors=True)
    return outcomes


def summary(outcomes: list[Outcome]) -> dict[str, object]:
    by_kind: dict[str, int] = {}
    for o in outcomes:
        by_kind[o.case.kind] = by_kind.get(o.case.kind, 0) + 1
    return {
        "inputs": len(outcomes),
        "kinds": len(by_kind),
        "special_files": sum(1 for o in outcomes if o.case.made != "data"),
        "exit_codes": {
            c: sum(1 for o in outcomes if o.code == c) for c in sorted({o.code for o in outcomes})
        },
        "tracebacks": sum(1 for o in outcomes if o.traceback),
        "hangs": sum(1 for o in outcomes if o.hung),
        "over_cpu_cap": sum(1 for o in outcomes if o.cpu_s > CPU_CAP_S),
        "exit2_not_naming_file": sum(1 for o in outcomes if o.unnamed),
        "max_cpu_s": round(max((o.cpu_s for o in outcomes), default=0.0), 2),
    }


def describe(o: Outcome) -> str:
    return json.dumps(
        {
            "kind": o.case.kind,
            "made": o.case.made,
            "args": o.case.args,
            "code": o.code,
            "cpu_s": round(o.cpu_s, 2),
            "hung": o.hung,
            "output": o.output[-1500:],
        }
    )
