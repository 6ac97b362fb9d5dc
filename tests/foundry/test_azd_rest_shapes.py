"""Foundry REST as azd sends it (docs/foundry-remote.md, "azd's shapes, before and after"):
the api-version of each route, registered datasets by reference / `file_id`, JSONL rows
verbatim, `max_candidates` only when set, per-evaluator `initialization_parameters`, and the
cap on status reads. The fake refuses any other api-version with the service's error shape,
so a regression cannot pass."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from agentopt.registry import Registry
from agentopt.workflows.remote.errors import RemoteError
from agentopt.workflows.remote.polling import PollSettings, poll_until
from tests.foundry.fake_project import ASSETS_API_VERSION, FakeFoundry
from tests.foundry.test_eval_remote import remote_run
from tests.foundry.test_optimize_remote import az as az  # the stand-in `az` (a fixture)
from tests.foundry.test_optimize_remote import cli, write_opt_project


def raw(foundry: FakeFoundry, method: str, path: str, version: str, body: Any) -> dict[str, Any]:
    request = urllib.request.Request(
        f"{foundry.endpoint}{path}?api-version={version}",
        data=json.dumps(body).encode(),
        method=method,
        headers={
            "Authorization": "Bearer t",
            "Content-Type": "application/json",
            "Foundry-Features": "AgentsOptimization=V2Preview",
        },
    )
    try:
        with urllib.request.urlopen(request) as answer:
            return {"status": answer.status, **json.loads(answer.read() or b"{}")}
    except urllib.error.HTTPError as err:
        return {"status": err.code, **json.loads(err.read())}


def test_the_fake_refuses_api_versions_azd_does_not_send(foundry: FakeFoundry) -> None:
    body = {"definition": {"type": "rubric", "dimensions": []}}
    refused = raw(foundry, "POST", "/evaluators/q/versions", "v1", body)
    assert refused["status"] == 400
    assert refused["error"]["code"] == "UnsupportedApiVersion"
    assert "'v1'" in refused["error"]["message"]
    wrong = raw(foundry, "GET", "/agent_optimization_jobs", ASSETS_API_VERSION, None)
    assert wrong["status"] == 400 and wrong["error"]["code"] == "UnsupportedApiVersion"


def test_datasets_and_evaluators_go_at_azds_api_version_and_by_file_id(
    project: Path, foundry: FakeFoundry, factory: Any
) -> None:
    from tests.foundry.conftest import write_azd_project

    write_azd_project(project, foundry.endpoint)
    data = (project / "datasets/shop-eval-seed/shop-eval-seed.jsonl").read_bytes()
    Registry(project).register_dataset("shop-eval-seed", data)
    text = (project / "eval.yaml").read_text()
    (project / "eval.yaml").write_text(
        text.replace(
            "  local_uri: datasets/shop-eval-seed/shop-eval-seed.jsonl",
            '  name: shop-eval-seed\n  version: "1"',
        )
    )
    remote_run(project, factory)
    assets = [c for c in foundry.log if c.path.startswith(("/datasets", "/evaluators"))]
    assert assets and {c.query["api-version"] for c in assets} == {ASSETS_API_VERSION}
    [run] = foundry.calls("POST", r"/runs$")
    assert run.body["data_source"]["source"]["type"] == "file_id"


def test_optimize_sends_a_registered_dataset_by_reference(
    project: Path, foundry: FakeFoundry, az: None
) -> None:
    write_opt_project(project, foundry.endpoint)
    data = (project / "datasets/shop-eval-seed/shop-eval-seed.jsonl").read_bytes()
    Registry(project).register_dataset("shop-eval-seed", data)
    text = (project / "eval.yaml").read_text()
    (project / "eval.yaml").write_text(
        text.replace(
            "  local_uri: datasets/shop-eval-seed/shop-eval-seed.jsonl",
            '  name: shop-eval-seed\n  version: "1"',
        )
    )
    code, out = cli(project, "optimize", "--remote", "--max-candidates", "2",
                    "--poll-interval", "0")  # fmt: skip
    assert code == 0, out
    [submit] = foundry.calls("POST", r"^/agent_optimization_jobs$")
    inputs = submit.body["inputs"]
    # azd `datasetRefToAPI`: a registered dataset is a reference to the project's copy, which
    # agentopt uploaded first (the fake refuses a reference to a dataset it does not have).
    assert inputs["train_dataset"] == {"type": "reference", "name": "shop-eval-seed",
                                       "version": "1"}  # fmt: skip
    assert len(foundry.calls("POST", r"/startPendingUpload$")) == 1
    assert inputs["options"]["max_candidates"] == 2  # given, so sent


def test_regex_match_goes_with_its_initialization_parameters(
    project: Path, foundry: FakeFoundry, az: None
) -> None:
    regex = {"name": "builtin.regex_match", "initialization_parameters": {"patterns": ["(?i)day"]}}
    write_opt_project(project, foundry.endpoint, evaluators=["builtin.task_adherence", regex])
    code, out = cli(project, "optimize", "--remote", "--poll-interval", "0")
    assert code == 0, out
    [submit] = foundry.calls("POST", r"^/agent_optimization_jobs$")
    assert submit.body["inputs"]["evaluators"] == [{"name": "builtin.task_adherence"}, regex]


def test_a_reference_to_a_dataset_the_project_lacks_is_refused(foundry: FakeFoundry) -> None:
    inputs = {
        "agent": {"agent_name": "a"},
        "train_dataset": {"type": "reference", "name": "nope", "version": "1"},
        "evaluators": [{"name": "builtin.task_adherence"}],
        "options": {"optimization_model": "gpt-5.1"},
    }
    answer = raw(foundry, "POST", "/agent_optimization_jobs", "v1", {"inputs": inputs})
    assert answer["status"] == 400 and "not in the project" in answer["error"]["message"]


def test_an_evaluation_run_is_read_every_5_s_at_most_360_times() -> None:
    settings = PollSettings.eval_run()
    assert (settings.interval_s, settings.growth, settings.max_reads) == (5.0, 1.0, 360)
    waits: list[float] = []
    reads = iter(range(1000))
    with pytest.raises(RemoteError, match="still in_progress after 360 status reads"):
        poll_until(
            lambda: {"status": "in_progress", "n": next(reads)},
            lambda s: s["status"] == "completed",
            settings,
            sleep=waits.append,
        )
    assert len(waits) == 359 and set(waits) == {5.0}
