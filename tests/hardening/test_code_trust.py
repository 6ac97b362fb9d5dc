"""Item 7 of issue 38: nothing from an eval file runs without the user's say-so. `--dry-run`
("nothing was sent") imported a code evaluator's module; now neither `eval run --dry-run` nor
`optimize --dry-run` imports a code evaluator, a tools module or starts an MCP server. A real
run that executes such code for the first time — from outside the project, or new or changed
since the last run — says so on its own line before it runs (core/trust.py)."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from tests.hardening.conftest import cli, real_cli

MARK = "import pathlib\npathlib.Path(__file__ + '.RAN').write_text('x')\n"
EVALUATOR = (
    MARK
    + """
class Mine:
    def __init__(self, threshold=1, **kw):
        pass

    def __call__(self, response="", **kw):
        return {"score": 1, "reason": "ok"}
"""
)
ENTRY = (
    MARK
    + """
def check(response="", **kw):
    return {"score": 1, "reason": "ok"}
"""
)


def _project(root: Path, *, outside: Path | None = None) -> Path:
    project = root / "p"
    base = project / ".agent_configs" / "baseline"
    base.mkdir(parents=True)
    mcp_marker = project / "mcp.RAN"
    meta = {
        "model": "mock:echo",
        "instruction_file": "instructions.md",
        "tools_file": "tools.json",
        "mcp_servers": [
            {"name": "srv", "command": "python3",
             "args": ["-c", f"import pathlib; pathlib.Path({str(mcp_marker)!r}).write_text('x')"]}
        ],
    }  # fmt: skip
    (base / "metadata.yaml").write_text(yaml.safe_dump(meta))
    (base / "instructions.md").write_text("Be brief.\n")
    tool = {"type": "function", "function": {"name": "get_order", "description": "d",
            "parameters": {"type": "object", "properties": {}}}}  # fmt: skip
    (base / "tools.json").write_text(json.dumps([tool]))
    (base / "tools.py").write_text(MARK + "def get_order():\n    return 'x'\n")
    custom = project / "custom-evaluators" / "mine"
    custom.mkdir(parents=True)
    (custom / "mine.py").write_text(EVALUATOR)
    (project / "my_checks.py").write_text(ENTRY)
    (project / "entry.yaml").write_text(
        "name: entry\nversion: '1'\ntype: code\ndescription: d\n"
        "definition: {entry_point: 'my_checks:check'}\n"
    )
    evaluators = ["mine", "{name: entry, local_uri: entry.yaml}"]
    if outside is not None:
        outside.write_text(EVALUATOR)
        evaluators.append(f"{{name: far, local_uri: {outside}}}")
    (project / "eval.yaml").write_text(
        "name: code\n"
        "agent: {name: a, kind: prompt, config: .agent_configs/baseline/metadata.yaml}\n"
        "dataset: {local_uri: tasks.jsonl}\n"
        f"evaluators: [{', '.join(evaluators)}]\noptions: {{eval_model: mock:echo}}\n"
    )
    rows = [{"name": f"t{i}", "query": f"q{i}"} for i in range(6)]
    (project / "tasks.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return project


def _ran(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*.RAN"))


def test_dry_runs_execute_no_code_from_the_eval_files(tmp_path: Path) -> None:
    project = _project(tmp_path, outside=tmp_path / "far.py")
    ran = cli(project, "eval", "run", "--dry-run")
    assert ran.code == 0, ran.output
    assert _ran(tmp_path) == [], ran.output
    ran = cli(project, "optimize", "--dry-run")
    assert ran.code == 0, ran.output
    assert _ran(tmp_path) == [], ran.output


def test_a_dry_run_still_refuses_a_broken_code_evaluator(tmp_path: Path) -> None:
    project = _project(tmp_path)
    (project / "custom-evaluators" / "mine" / "mine.py").write_text("def broken(:\n")
    ran = cli(project, "eval", "run", "--dry-run")
    assert ran.code == 2 and "mine.py" in ran.output and "invalid Python" in ran.output


def test_a_real_run_announces_new_and_outside_code_once(tmp_path: Path) -> None:
    project = _project(tmp_path, outside=tmp_path / "far.py")
    meta = project / ".agent_configs" / "baseline" / "metadata.yaml"
    data = yaml.safe_load(meta.read_text())
    del data["mcp_servers"]  # no real server to start here
    meta.write_text(yaml.safe_dump(data))
    ran = real_cli(project, "eval", "run")
    assert ran.code == 0, ran.output
    flat = " ".join(ran.output.split())
    assert "running a code evaluator for the first time: custom-evaluators/mine/mine.py" in flat
    assert "running a code evaluator for the first time: my_checks.py" in flat
    assert f"running a code evaluator from outside the project: {tmp_path / 'far.py'}" in flat
    assert "p/custom-evaluators/mine/mine.py.RAN" in _ran(tmp_path)
    again = real_cli(project, "eval", "run")
    assert again.code == 0, again.output
    assert "running a code evaluator" not in again.output  # recorded: announced once
    (project / "my_checks.py").write_text(ENTRY + "# edited\n")
    edited = real_cli(project, "eval", "run")
    flat = " ".join(edited.output.split())
    assert "running a code evaluator changed since the last run: my_checks.py" in flat
    assert "mine.py" not in flat
