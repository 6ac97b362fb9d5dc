"""The installed `agentopt` script: the whole command tree with examples, `python -m agentopt`,
and `eval validate` errors as users see them (file, line or key path; exit 2; no traceback)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(sys.executable).parent / "agentopt"
TREE = {
    "eval": ["init", "generate", "update", "run", "list", "show", "validate"],
    "optimize": ["status", "list", "apply", "show"],
    "cache": ["stats", "clear"],
}


def agentopt(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SCRIPT), *args], capture_output=True, text=True, cwd=cwd, timeout=120,
        env={"COLUMNS": "200", "PATH": "/usr/bin:/bin", "CI": "1"},
    )  # fmt: skip


def test_help_lists_the_whole_command_tree() -> None:
    top = agentopt("--help")
    assert top.returncode == 0
    for group in [*TREE, "view"]:
        assert group in top.stdout
    for group, commands in TREE.items():
        out = agentopt(group, "--help").stdout
        for command in commands:
            assert command in out, f"{group} {command} missing from --help"


@pytest.mark.parametrize(
    "command", [["eval", c] for c in TREE["eval"]] + [["optimize"], ["view"], ["cache", "clear"]]
)
def test_every_command_help_has_examples(command: list[str]) -> None:
    out = agentopt(*command, "--help")
    assert out.returncode == 0, out.stderr
    assert "Example" in out.stdout


def test_python_dash_m_runs_the_same_cli() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "agentopt", "--version"], capture_output=True, text=True
    )
    assert out.returncode == 0 and out.stdout.startswith("agentopt ")


def test_validate_reports_the_bad_line_of_a_jsonl(tmp_path: Path) -> None:
    lines = [f'{{"name": "t{i}", "query": "q{i}"}}' for i in range(1, 11)]
    lines[6] = '{"name": "t7", "query": '
    (tmp_path / "tasks.jsonl").write_text("\n".join(lines) + "\n")
    out = agentopt("eval", "validate", "tasks.jsonl", cwd=tmp_path)
    assert out.returncode == 2
    text = out.stdout + out.stderr
    assert "tasks.jsonl" in text and "line 7" in text
    assert "Traceback" not in out.stderr


def test_validate_suggests_the_key_a_typo_meant(tmp_path: Path) -> None:
    (tmp_path / "eval.yaml").write_text(
        "name: s\nagent: {name: a}\ndatset: {local_uri: x.jsonl}\nevaluators: [builtin.relevance]\n"
    )
    out = agentopt("eval", "validate", "eval.yaml", cwd=tmp_path)
    text = out.stdout + out.stderr
    assert "did you mean" in text and "dataset" in text
    assert out.returncode == 2, text
    assert "Traceback" not in out.stderr


def test_validate_ok_and_strict_schema(reference: Path, tmp_path: Path) -> None:
    valid = reference / "m365-copilot-eval" / "schema" / "v1" / "examples" / "valid"
    invalid = reference / "m365-copilot-eval" / "schema" / "v1" / "examples" / "invalid"
    ok = agentopt("eval", "validate", "--strict", *map(str, sorted(valid.glob("*.json"))))
    assert ok.returncode == 0, ok.stdout + ok.stderr
    for path in sorted(invalid.glob("*.json")):
        bad = agentopt("eval", "validate", "--strict", str(path))
        assert bad.returncode == 2, path.name
        assert "error" in bad.stdout and "Traceback" not in bad.stderr
