"""Item 1 of issue 38: whatever sits where a file is expected — a FIFO (an `open()` blocked on
it forever), a socket, a device (`/dev/zero` filled memory), a folder, a symlink loop (a
RuntimeError from `Path.resolve`) — is refused before it is opened, naming the path and what
it is; saved records (registry.json, run.json, job.json, journals) are validated through their
models and a broken one is named by file and key path, not reported as an unknown id."""

from __future__ import annotations

import json
import os
import socket
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from agentopt.core.errors import InputError
from agentopt.core.files import bounded
from tests.hardening.conftest import Ran, cli, write_project


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _socket(path: Path) -> None:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(str(path))
    _OPEN.append(sock)


def _device(path: Path) -> None:
    path.symlink_to("/dev/zero")


def _loop(path: Path) -> None:
    path.symlink_to(path.name)


def _folder(path: Path) -> None:
    path.mkdir()


def _dangling(path: Path) -> None:
    path.symlink_to("nowhere.json")


_OPEN: list[socket.socket] = []
SPECIAL: dict[str, tuple[Callable[[Path], None], str]] = {
    "fifo": (_fifo, "named pipe (FIFO)"),
    "socket": (_socket, "a socket"),
    "device": (_device, "a character device"),
    "loop": (_loop, "symbolic link loop"),
    "folder": (_folder, "found a folder"),
    "dangling": (_dangling, "a symbolic link to a file that does not exist"),
}


@pytest.fixture(autouse=True)
def _close_sockets() -> Iterator[None]:
    yield
    while _OPEN:
        _OPEN.pop().close()


def _within(seconds: float, path: Path, fn: Callable[[], object]) -> object:
    """`fn()`'s result or exception, run on a thread; a failure (not a hang) when it has not
    returned in time (a writer then opens the FIFO so that the thread can end)."""
    box: list[object] = [None]

    def target() -> None:
        try:
            box[0] = fn()
        except BaseException as exc:  # the outcome under test
            box[0] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        with open(path, "wb"):
            pass
        pytest.fail(f"still blocked on {path.name} after {seconds} s")
    return box[0]


@pytest.mark.parametrize("kind", SPECIAL)
def test_the_bounded_reader_refuses_what_is_not_a_regular_file(tmp_path: Path, kind: str) -> None:
    make, words = SPECIAL[kind]
    path = tmp_path / "tasks.jsonl"
    make(path)
    error = _within(5, path, lambda: bounded.read_bytes(path, kind="dataset"))
    assert isinstance(error, InputError), error
    assert str(path) in str(error) and words in str(error)


@pytest.mark.parametrize("kind", [k for k in SPECIAL if k != "folder"])  # a folder: a dataset
def test_eval_validate_names_the_path_and_what_it_is(tmp_path: Path, kind: str) -> None:
    make, words = SPECIAL[kind]
    path = tmp_path / "eval.yaml"
    make(path)
    ran = cli(tmp_path, "eval", "validate", str(path))
    assert ran.code == 2 and "Traceback" not in ran.output, ran.output
    flat = " ".join(ran.output.split())
    assert "eval.yaml" in flat and words in flat


def test_a_fifo_dataset_on_eval_run_is_an_error_not_a_hang(tmp_path: Path) -> None:
    project = write_project(tmp_path / "p")
    (project / "tasks.jsonl").unlink()
    os.mkfifo(project / "tasks.jsonl")
    ran = _within(30, project / "tasks.jsonl", lambda: cli(project, "eval", "run", "--dry-run"))
    assert isinstance(ran, Ran)
    assert ran.code == 2 and "tasks.jsonl" in ran.output and "FIFO" in ran.output, ran.output


# -- saved records -----------------------------------------------------------------------------


def _ran_once(tmp_path: Path) -> tuple[Path, Path]:
    project = write_project(tmp_path / "p")
    ran = cli(project, "eval", "run")
    assert ran.code == 0, ran.output
    run_dir = next((project / ".agentopt" / "runs").iterdir())
    return project, run_dir


@pytest.mark.parametrize(
    "content", ["null", "true", "[1, 2]", '{"id": 5}', "{", '{"schema_version": false, "id": "x"}']
)
def test_a_broken_run_json_on_resume_names_the_file(tmp_path: Path, content: str) -> None:
    project, run_dir = _ran_once(tmp_path)
    (run_dir / "run.json").write_text(content)
    ran = cli(project, "eval", "run", "--resume", run_dir.name)
    assert ran.code == 2 and "Traceback" not in ran.output, ran.output
    assert "run.json" in ran.output and "no run" not in ran.output


@pytest.mark.parametrize("kind", ["fifo", "device", "loop", "folder"])
def test_a_run_json_that_is_not_a_file_is_named_not_an_unknown_run(
    tmp_path: Path, kind: str
) -> None:
    project, run_dir = _ran_once(tmp_path)
    (run_dir / "run.json").unlink()
    SPECIAL[kind][0](run_dir / "run.json")
    ran = _within(
        30, run_dir / "run.json", lambda: cli(project, "eval", "run", "--resume", run_dir.name)
    )
    assert isinstance(ran, Ran)
    assert ran.code == 2, ran.output
    assert "run.json" in ran.output and "no run '" not in ran.output, ran.output


def test_a_journal_linked_to_dev_zero_is_refused_on_resume(tmp_path: Path) -> None:
    project, run_dir = _ran_once(tmp_path)
    (run_dir / "journal.jsonl").unlink()
    (run_dir / "journal.jsonl").symlink_to("/dev/zero")
    ran = cli(project, "eval", "run", "--resume", run_dir.name)
    assert ran.code == 2, ran.output
    assert "journal.jsonl" in ran.output and "character device" in ran.output


REGISTRY = {
    "a list under datasets": {"datasets": [], "evaluators": {}},
    "a string for a name": {"datasets": {"seed": "oops"}},
    "a number for versions": {"datasets": {"seed": {"versions": 3}}},
    "a wrong type in an entry": {
        "datasets": {"seed": {"versions": {"1": {"sha256": 5, "created_at": "x", "file": []}}}}
    },
    "a list at the root": [1, 2],
}


@pytest.mark.parametrize("data", REGISTRY.values(), ids=REGISTRY.keys())
def test_registry_json_with_wrong_types_names_the_key(tmp_path: Path, data: object) -> None:
    project = write_project(tmp_path / "p")
    registry = project / ".azure" / ".foundry" / "registry.json"
    registry.parent.mkdir(parents=True)
    registry.write_text(json.dumps(data))
    for args in (["eval", "update"], ["eval", "run", "--dry-run"]):
        ran = cli(project, *args)
        assert "Traceback" not in ran.output
        if ran.code != 0:  # eval run --dry-run of a local_uri dataset need not read the index
            assert ran.code == 2, ran.output
            assert "registry.json" in ran.output, ran.output
    ran = cli(project, "eval", "update")
    assert ran.code == 2 and "registry.json" in ran.output, ran.output
    if isinstance(data, dict) and "datasets" in data and isinstance(data["datasets"], dict):
        assert "datasets.seed" in ran.output, ran.output


@pytest.mark.parametrize("content", ["null", "[]", '{"id": 7, "candidates": "x"}', "{{"])
def test_a_broken_job_json_is_named_not_reported_as_an_unknown_job(
    tmp_path: Path, content: str
) -> None:
    project = write_project(tmp_path / "p")
    job = project / ".agentopt" / "optimize" / "20260101-000000-abcdef"
    job.mkdir(parents=True)
    (job / "job.json").write_text(content)
    ran = cli(project, "optimize", "status", job.name)
    assert ran.code == 2, ran.output
    assert "job.json" in ran.output and "no optimization job" not in ran.output, ran.output
