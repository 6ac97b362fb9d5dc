"""Every flag of azd's `azd ai agent eval` / `optimize` commands is accepted by agentopt, with
azd's meaning. The list is azd's own, read from the azure.ai.agents extension's Go source
(Azure/azure-dev, `cli/azd/extensions/azure.ai.agents/internal/cmd/`, commit
ae35809f496491989273d0edefdeb70f245f399b; file:line of each `cmd.Flags()` call below).
`--trace-days` (eval_generate.go:93) belongs to the traces work and is not listed here.

Each flag is parsed for real: the flag (with a value when it takes one) and then `--help`;
click stops at the first unknown option with exit 2, so exit 0 means the parser took it. The
tests after the table check what the flags do."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from agentopt.cli.app import app
from tests.fake_openai import FakeOpenAI
from tests.optimize.conftest import Models, make_project, optimize, two_phrase_rows
from tests.optimize.conftest import models as models  # the scripted judge (a fixture)

AZD = [
    # (agentopt command, flag, value or None, azd source)
    (("eval", "generate"), "--name", "suite", "eval_generate.go:82"),
    (("eval", "generate"), "--no-wait", None, "eval_generate.go:83"),
    (("eval", "generate"), "--agent", "svc", "eval_generate.go:84"),
    (("eval", "generate"), "--project-endpoint", "https://p", "eval_generate.go:85"),
    (("eval", "generate"), "-p", "https://p", "eval_generate.go:85"),
    (("eval", "generate"), "--gen-instruction", "text", "eval_generate.go:86"),
    (("eval", "generate"), "-g", "text", "eval_generate.go:86"),
    (("eval", "generate"), "--gen-instruction-file", "brief.md", "eval_generate.go:87"),
    (("eval", "generate"), "--eval-model", "gpt-4.1-mini", "eval_generate.go:88"),
    (("eval", "generate"), "--dataset", "tasks.jsonl", "eval_generate.go:89"),
    (("eval", "generate"), "--max-samples", "15", "eval_generate.go:90"),
    (("eval", "generate"), "--evaluator", "builtin.relevance", "eval_generate.go:91"),
    (("eval", "generate"), "--out-file", "eval.yaml", "eval_generate.go:92"),
    (("eval", "generate"), "--reset-defaults", None, "eval_generate.go:94"),
    (("eval", "run"), "--config", "eval.yaml", "eval_run.go:50"),
    (("eval", "run"), "--name", "nightly", "eval_run.go:51"),
    (("eval", "run"), "--no-wait", None, "eval_run.go:52"),
    (("eval", "show"), "--eval-run-id", "20261201-000000-abcdef", "eval_show.go:53"),
    (("eval", "show"), "--limit", "5", "eval_show.go:54"),
    (("eval", "show"), "--out-file", "out.json", "eval_show.go:55"),
    (("eval", "show"), "-O", "out.json", "eval_show.go:55"),
    (("eval", "list"), "--limit", "5", "eval_list.go:43"),
    (("eval", "update"), "--config", "eval.yaml", "eval_update.go:54"),
    (("eval", "update"), "--dataset-only", None, "eval_update.go:55"),
    (("eval", "update"), "--evaluator-only", None, "eval_update.go:56"),
    (("optimize",), "--config", "eval.yaml", "optimize.go:160"),
    (("optimize",), "-c", "eval.yaml", "optimize.go:160"),
    (("optimize",), "--agent", "svc", "optimize.go:161"),
    (("optimize",), "-a", "svc", "optimize.go:161"),
    (("optimize",), "--dataset", "tasks.jsonl", "optimize.go:162"),
    (("optimize",), "-d", "tasks.jsonl", "optimize.go:162"),
    (("optimize",), "--eval-model", "gpt-4.1-mini", "optimize.go:163"),
    (("optimize",), "-m", "gpt-4.1-mini", "optimize.go:163"),
    (("optimize",), "--optimize-model", "gpt-5.1", "optimize.go:164"),
    (("optimize",), "--evaluator", "builtin.task_adherence", "optimize.go:166"),
    (("optimize",), "--max-candidates", "1", "optimize.go:168"),
    (("optimize",), "--no-wait", None, "optimize.go:169"),
    (("optimize",), "--poll-interval", "10", "optimize.go:170"),
    (("optimize", "status"), "--watch", None, "optimize_status.go:71"),
    (("optimize", "status"), "--poll-interval", "10", "optimize_status.go:72"),
    (("optimize", "list"), "--limit", "5", "optimize_list.go:53"),
    (("optimize", "list"), "--status", "completed", "optimize_list.go:54"),
    (("optimize", "apply"), "--candidate", "cand_01", "optimize_apply.go:75"),
    (("optimize", "apply"), "--agent", "svc", "optimize_apply.go:76"),
    (("optimize", "deploy"), "--candidate", "cand_01", "optimize_deploy.go:69"),
    (("optimize", "deploy"), "--agent", "svc", "optimize_deploy.go:70"),
]
# `optimizeConnectionFlags.register` (optimize_helpers.go:34-35) on optimize (optimize.go:171)
# and each subcommand: apply (:78), cancel (:43), deploy (:72), status (:73), list, show.
for sub in ((), ("status",), ("list",), ("apply",), ("show",), ("cancel",), ("deploy",)):
    for flag, value in (("-p", "https://p"), ("--project-endpoint", "https://p")):
        AZD.append((("optimize", *sub), flag, value, "optimize_helpers.go:34"))
    AZD.append((("optimize", *sub), "--endpoint", "http://localhost:9", "optimize_helpers.go:35"))
# azd's global `-o json|table` (azdext `RegisterFlagOptions(... "output" ...)`, e.g.
# optimize_status.go:75) on every read command.
READ = [("eval", "list"), ("eval", "show"), ("optimize", "list"), ("optimize", "status"),
        ("optimize", "show"), ("cache", "stats")]  # fmt: skip
AZD += [(path, "-o", "json", "optimize_status.go:75") for path in READ]
AZD += [(path, "--output", "table", "optimize_status.go:75") for path in READ]
# Positionals: `optimize [agent-name]` (optimize.go:122), `optimize deploy [agent-name]`
# (optimize_deploy.go:41), `eval show [eval-id]` (eval_show.go:34).
POSITIONAL = [(("optimize", "svc"), "optimize.go:122"),
              (("optimize", "deploy", "svc"), "optimize_deploy.go:41"),
              (("eval", "show", "20261201-000000-abcdef"), "eval_show.go:34")]  # fmt: skip

runner = CliRunner()


def invoke(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, list(args))
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize(
    ("path", "flag", "value", "source"), AZD, ids=lambda v: v if isinstance(v, str) else None
)
def test_azd_flag_is_accepted(path: tuple[str, ...], flag: str, value: str | None, source: str):
    args = [*path, flag, *([value] if value is not None else []), "--help"]
    code, out, err = invoke(*args)
    assert code == 0, f"{' '.join(args)} ({source}): {out}{err}"
    assert "Usage" in out


@pytest.mark.parametrize(("args", "source"), POSITIONAL)
def test_azd_positional_is_accepted(args: tuple[str, ...], source: str) -> None:
    code, out, err = invoke(*args, "--help")
    assert code == 0, f"{' '.join(args)} ({source}): {out}{err}"


def test_an_unknown_flag_is_still_refused() -> None:
    """The check above can fail: a flag agentopt lacks is exit 2."""
    code, out, err = invoke("optimize", "list", "--no-such-flag", "--help")
    assert code == 2 and "No such option" in out + err


def adhoc_args(root: Path, srv: FakeOpenAI) -> list[str]:
    return [
        "eval", "run", "--prompts", "hello", "--expected", "hello", "--evaluator", "ExactMatch",
        "--agent-model", f"compat:fake@{srv.base_url}", "--no-prompt", "-C", str(root),
    ]  # fmt: skip


def adhoc_run(root: Path, srv: FakeOpenAI, *extra: str) -> tuple[int, str, str]:
    return invoke(*adhoc_args(root, srv), *extra)


def test_output_json_on_read_commands_and_eval_run(tmp_path: Path) -> None:
    root = tmp_path / "p"
    (root / ".git").mkdir(parents=True)
    with FakeOpenAI() as srv:
        code, out, err = adhoc_run(root, srv, "-o", "json")
        assert code == 0, out + err
        ran = json.loads(out)  # stdout is the JSON document alone
        code, out, err = adhoc_run(root, srv, "-o", "report.json")
        assert code == 0, out + err
        code, out, err = invoke("-o", "json", *adhoc_args(root, srv))  # azd's global place
        assert code == 0 and json.loads(out)["tasks"][0]["status"] == "pass", out + err
    assert ran["summary"] and [t["status"] for t in ran["tasks"]] == ["pass"]
    assert json.loads((root / "report.json").read_text())["run"]["id"]
    code, out, _ = invoke("-o", "json", "eval", "list", "-C", str(root))
    listed = json.loads(out)
    ids = [h["id"] for h in listed]
    assert code == 0 and len(ids) == 3 and ran["run"]["id"] in ids
    code, out, _ = invoke("eval", "show", "--eval-run-id", ran["run"]["id"], "-o", "json",
                          "-C", str(root))  # fmt: skip
    assert code == 0 and json.loads(out)["run"]["id"] == ran["run"]["id"]
    code, out, _ = invoke("eval", "show", "--limit", "1", "-C", str(root))
    assert code == 0 and sum(i in out for i in ids) == 1  # one run listed: --limit 1
    code, out, _ = invoke("eval", "show", ran["run"]["id"], "-O", "x.json", "-C", str(root))
    assert code == 0 and (root / "x.json").is_file()
    code, out, _ = invoke("cache", "stats", "-o", "json", "-C", str(root))
    assert code == 0 and json.loads(out)["entries"] >= 1
    code, out, err = invoke("eval", "list", "-o", "yaml", "-C", str(root))
    assert code == 2 and "expected json or table" in out + err


def test_optimize_status_list_show_as_json(tmp_path: Path, models: Models) -> None:
    project = make_project(tmp_path / "p", two_phrase_rows("t", 4))
    job = optimize(project, max_candidates=1, seed=0).job
    code, out, _ = invoke("optimize", "status", "-o", "json", "-C", str(project))
    assert code == 0 and json.loads(out)["id"] == job.id
    code, out, _ = invoke("optimize", "list", "--status", "succeeded", "--limit", "1",
                          "-o", "json", "-C", str(project))  # fmt: skip
    assert code == 0 and [j["id"] for j in json.loads(out)] == [job.id]  # azd's name mapped
    code, out, _ = invoke("optimize", "list", "--status", "failed", "-o", "json",
                          "-C", str(project))  # fmt: skip
    assert code == 0 and json.loads(out) == []
    best = job.candidates[-1].id
    code, out, _ = invoke("optimize", "show", "--candidate", best, "-o", "json", "-C", str(project))
    assert code == 0 and json.loads(out)["candidate"]["id"] == best


TWO = {
    "name": "two",
    "services": {
        "alpha": {"host": "azure.ai.agent", "project": "alpha", "kind": "prompt",
                  "model": "gpt-4.1-mini", "instructions": "You are alpha."},
        "beta": {"host": "azure.ai.agent", "project": "beta", "kind": "prompt",
                 "model": "gpt-4.1-mini", "instructions": "You are beta."},
    },
}  # fmt: skip


def test_optimize_agent_positional_means_the_agent(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "azure.yaml").write_text(yaml.safe_dump(TWO))
    code, out, err = invoke("optimize", "gamma", "--dry-run", "--no-prompt", "-C", str(root))
    assert code == 2 and "gamma" in out + err and "alpha" in out + err  # unknown service named
    code, out, err = invoke("optimize", "beta", "-a", "alpha", "--no-prompt", "-C", str(root))
    assert code == 2 and "given twice" in out + err


def test_eval_run_config_is_found_in_the_agents_project_folder(tmp_path: Path) -> None:
    """azd joins `--config` with the agent's project folder; a file beside the working
    folder is kept, and the run says which one it used."""
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "azure.yaml").write_text(
        yaml.safe_dump({"name": "one", "services": {"alpha": TWO["services"]["alpha"]}})
    )
    folder = root / "alpha"
    folder.mkdir()
    (folder / "tasks.jsonl").write_text('{"name": "t1", "query": "hi", "ground_truth": "hi"}\n')
    with FakeOpenAI() as srv:
        suite = {"name": "s", "dataset": {"local_uri": "tasks.jsonl"}, "evaluators": ["ExactMatch"],
                 "agent": {"model": f"compat:fake@{srv.base_url}"}}  # fmt: skip
        (folder / "suite.yaml").write_text(yaml.safe_dump(suite))
        code, out, err = invoke("eval", "run", "--config", "suite.yaml", "--no-prompt",
                                "-C", str(root))  # fmt: skip
        assert code == 0, out + err
        assert "relative to the agent's project folder" in " ".join((out + err).split())
        shutil.copy(folder / "suite.yaml", root / "suite.yaml")
        (root / "tasks.jsonl").write_text('{"name": "t9", "query": "yo", "ground_truth": "yo"}\n')
        code, out, err = invoke("eval", "run", "--config", "suite.yaml", "--no-prompt",
                                "-C", str(root))  # fmt: skip
        assert code == 0, out + err
        assert "relative to the working folder" in " ".join((out + err).split())
    code, out, err = invoke("eval", "run", "--config", "nope.yaml", "--no-prompt", "-C", str(root))
    assert code == 2 and "looked in" in out + err


def test_max_samples_under_azds_range_gets_a_note(tmp_path: Path) -> None:
    code, out, err = invoke("eval", "generate", "--max-samples", "1001", "--no-prompt",
                            "-C", str(tmp_path))  # fmt: skip
    assert code == 2 and "1000" in " ".join((out + err).split())  # azd's maximum, refused
    code, out, err = invoke("eval", "generate", "--max-samples", "3", "--no-prompt",
                            "-C", str(tmp_path))  # fmt: skip
    assert "under azd's range (15–1000)" in " ".join(err.split())
