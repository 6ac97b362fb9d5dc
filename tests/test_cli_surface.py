"""The installed `agentopt` script: the whole command tree with examples, `python -m agentopt`,
and `eval validate` errors as users see them (file, line or key path; exit 2; no traceback)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from agentopt.datasets import newest_known_version

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


def test_validate_ok_and_strict_schema(m365: Path, tmp_path: Path) -> None:
    valid = m365 / "schema" / "v1" / "examples" / "valid"
    invalid = m365 / "schema" / "v1" / "examples" / "invalid"
    ok = agentopt("eval", "validate", "--strict", *map(str, sorted(valid.glob("*.json"))))
    assert ok.returncode == 0, ok.stdout + ok.stderr
    # One process for all of them (a start-up each cost 12 s); every file gets its own verdict.
    paths = sorted(invalid.glob("*.json"))
    bad = agentopt("eval", "validate", "--strict", *map(str, paths))
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    verdicts = [line for line in bad.stdout.splitlines() if line.startswith(("OK", "FAIL"))]
    assert len(verdicts) == len(paths), bad.stdout
    for path, verdict in zip(paths, verdicts, strict=True):
        assert verdict.startswith("FAIL") and path.name in verdict, verdict
        assert f"{path}:" in bad.stdout, path.name  # at least one error names the file


def test_validate_strict_legacy_file_is_not_ok_and_names_the_upgrade(
    m365: Path, tmp_path: Path
) -> None:
    path = tmp_path / "prompts.json"
    shutil.copy(m365 / "samples" / "example_prompts.json", path)
    before = path.read_bytes()
    strict = agentopt("eval", "validate", "--strict", str(path))
    assert strict.returncode == 2 and "FAIL" in strict.stdout
    assert "not valid against the official schema" in strict.stdout
    assert "agentopt eval validate --upgrade" in " ".join(strict.stdout.split())
    assert path.read_bytes() == before  # validation alone never rewrites
    upgraded = agentopt("eval", "validate", "--upgrade", str(path))
    assert upgraded.returncode == 0, upgraded.stdout
    assert json.loads(path.read_text())["schemaVersion"] == newest_known_version()
    assert agentopt("eval", "validate", "--strict", str(path)).returncode == 0


def test_validate_names_what_an_evaluator_yaml_lacks(tmp_path: Path) -> None:
    path = tmp_path / "quality.v1.yaml"
    path.write_text('name: quality\nversion: "1"\ntype: rubric\ndescription: d\n')
    result = agentopt("eval", "validate", str(path))
    assert result.returncode == 2
    assert "evaluator YAML" in result.stdout and "eval.yaml" not in result.stdout
    assert 'missing "definition"' in result.stdout and "dimensions" in result.stdout
