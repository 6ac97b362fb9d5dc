"""Mutational fuzzing of every loader (issue 14 item 1): valid seed files of each kind, nasty
fragments spliced into them, and the loader each kind goes through — shared by the in-process
fuzz test, the CLI fuzz test, and `bench/fuzz_loaders.py` (before/after counts).

A loader may return or raise an `AgentoptError` (exit 2 through the CLI) whose message prints;
anything else — a traceback — or more than `CPU_CAP_S` of CPU for one input is a failure.
"""

from __future__ import annotations

import json
import signal
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CPU_CAP_S = 2.0
"""CPU seconds one input may take in-process (real files take milliseconds)."""

SEEDS: dict[str, tuple[str, str]] = {
    # kind: (file name, valid content)
    "eval_yaml": (
        "eval.yaml",
        "name: smoke\nagent:\n  name: support\n  kind: prompt\n  model: mock:echo\n"
        "dataset:\n  local_uri: tasks.jsonl\nevaluators:\n  - builtin.task_adherence\n"
        "  - name: builtin.regex_match\n    initialization_parameters: {patterns: ['(?i)ok']}\n"
        "options:\n  eval_model: mock:echo\n  max_candidates: 3\n  providers:\n"
        "    lab: {type: compat, base_url: 'http://127.0.0.1:9/v1', api_key_env: LAB_KEY}\n"
        "max_samples: 5\n",
    ),
    "jsonl": (
        "tasks.jsonl",
        '{"name": "t1", "query": "What is 2+2?", "ground_truth": "4", '
        '"criteria": [{"name": "correct", "instruction": "Says 4."}]}\n'
        '{"name": "t2", "turns": [{"query": "hi"}, {"query": "bye"}], "tags": ["a"]}\n',
    ),
    "m365": (
        "evals.json",
        json.dumps(
            {
                "schemaVersion": "1.0.0",
                "items": [
                    {"prompt": "What is 2+2?", "expected_response": "4"},
                    {"turns": [{"prompt": "hi", "evaluators": {"ExactMatch": {}}}]},
                ],
                "default_evaluators": {"Relevance": {}},
            },
            indent=1,
        ),
    ),
    "m365_legacy": ("prompts.json", json.dumps([{"prompt": "q", "expected_response": "a"}])),
    "csv": ("tasks.csv", 'name,query,criteria\nt1,"What is 2+2?","[{""name"": ""c""}]"\n'),
    "rubric": (
        "rubric_dimensions.json",
        json.dumps(
            [
                {"id": "accuracy", "description": "Correct.", "weight": 8},
                {
                    "id": "general_quality",
                    "description": "Other.",
                    "weight": 5,
                    "always_applicable": True,
                },
            ]
        ),
    ),
    "evaluator_yaml": (
        "quality.v1.yaml",
        "name: quality\nversion: '1'\ntype: rubric\ndescription: d\nthreshold: 0.5\n"
        "definition:\n  dimensions:\n    - {id: accuracy, description: Correct., weight: 8}\n",
    ),
    "azure_yaml": (
        "azure.yaml",
        "name: shop\nservices:\n  support:\n    project: .\n    host: azure.ai.agent\n"
        "    kind: prompt\n    model: gpt-4.1-mini\n    instructions: Be brief.\n",
    ),
    "metadata_yaml": (
        "metadata.yaml",
        "model: mock:echo\ninstruction_file: instructions.md\ntools_file: tools.json\n"
        "temperature: 0.2\n",
    ),
    "tools_json": (
        "tools.json",
        json.dumps(
            [
                {
                    "type": "function",
                    "function": {
                        "name": "get_order",
                        "description": "Look up.",
                        "parameters": {"type": "object", "properties": {"id": {"type": "string"}}},
                    },
                }
            ]
        ),
    ),
    "skill_md": ("SKILL.md", "---\nname: refunds\ndescription: How refunds work.\n---\nBody.\n"),
    "results_json": (
        "results.json",
        json.dumps({"run": {"id": "20260101-000000-abcdef"}, "summary": {}, "tasks": []}),
    ),
}

BILLION_LAUGHS = (
    "a: &a ["
    + ",".join(["lol"] * 9)
    + "]\n"
    + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [" + ",".join([f"*{chr(97 + i)}"] * 9) + "]\n"
        for i in range(8)
    )
)
"""Nine levels of aliases, nine copies each: 9**9 values from 400 bytes."""


FRAGMENTS: list[str] = [
    "[" * 5000,
    "{" * 300,
    "- " * 2000,
    "  " * 3000 + "a: 1\n",
    "\\ud800",
    '"\\udfff"',
    "\ud83d",
    "9" * 5000,
    "-" + "1" * 4400,
    "1e999999",
    "NaN",
    "-Infinity",
    "\x00",
    "\x1b[31m",
    "\ufeff",
    "\r\r\n",
    "\t",
    "&a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
    "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
    "e: [*d, *d, *d, *d, *d, *d, *d, *d, *d]\n",
    "x: &x [*x]\n",
    BILLION_LAUGHS,
    "<<: *nope\n",
    "!!python/object/apply:os.system ['true']",
    "!!binary AAAA",
    "? [a, b]\n: c\n",
    "a: 1\na: 2\n",
    "2001-13-45T99:99:99Z",
    "%YAML 9.9\n---\n",
    "--- !tag\n...\n",
    '{"a": 1, "a": 2}',
    "$ref: ../../../../etc/passwd\n",
    "{$ref: missing.yaml}",
    "\xe9\xe8",
    "x" * 70_000,
    '"' * 7,
    "'unterminated",
    "``` ```",
    "null",
    "[]",
    "{}",
    "true",
    '"query": ',
    '"turns": [[[[]]]]',
    '"weight": 10000000000000000000000000000000000000000000',
    '"schemaVersion": "99.0.0"',
    "\u202e\u2066",
]
RAW_BYTES: list[bytes] = [
    b"\xff\xfe",
    b"\xe9",
    b"\xc3\x28",
    b"\xed\xa0\x80",
    b"\x80" * 10,
    b"\x00\x00",
]


@dataclass(frozen=True)
class Mutation:
    """Where and what: insert or append a fragment, overwrite or delete a span, truncate,
    duplicate."""

    op: str
    at: float
    """Position as a fraction of the current length (0–1)."""
    span: int
    fragment: int
    repeat: int = 1


def mutate(seed: str, mutations: list[Mutation]) -> bytes:
    """The seed with the mutations applied, as bytes (some mutations add non-UTF-8 bytes)."""
    data = seed.encode("utf-8")
    for m in mutations:
        pos = int(m.at * len(data))
        if m.op == "insert":
            frag = FRAGMENTS[m.fragment % len(FRAGMENTS)] * m.repeat
            data = data[:pos] + frag.encode("utf-8", "surrogatepass") + data[pos:]
        elif m.op == "bytes":
            data = data[:pos] + RAW_BYTES[m.fragment % len(RAW_BYTES)] * m.repeat + data[pos:]
        elif m.op == "overwrite":
            frag = FRAGMENTS[m.fragment % len(FRAGMENTS)].encode("utf-8", "surrogatepass")
            data = data[:pos] + frag + data[pos + m.span :]
        elif m.op == "delete":
            data = data[:pos] + data[pos + m.span :]
        elif m.op == "append":  # a fragment as a whole document part, after the seed
            frag = FRAGMENTS[m.fragment % len(FRAGMENTS)] * m.repeat
            data = data.rstrip(b"\n") + b"\n" + frag.encode("utf-8", "surrogatepass") + b"\n"
        elif m.op == "truncate":
            data = data[:pos]
        elif m.op == "duplicate":
            data = data[:pos] + data[pos : pos + m.span] * (m.repeat + 1) + data[pos + m.span :]
    return data


# -- the loaders, in-process -----------------------------------------------------------------


def _agent_folder(path: Path) -> None:
    folder = path.parent
    if not (folder / "instructions.md").exists():
        (folder / "instructions.md").write_text("Be brief.\n", encoding="utf-8")


def _loaders() -> dict[str, list[Callable[[Path], Any]]]:
    """kind → the loader calls a file of that kind goes through (import-light: done lazily)."""
    from agentopt.core.files import (
        load_agent_config,
        load_azure_yaml,
        load_eval_config,
        load_evaluator_yaml,
        load_rubric,
        parse_dotenv,
        read_service_agent,
    )
    from agentopt.datasets import load_dataset, validate_dataset
    from agentopt.workflows.validate import validate_file

    try:
        from agentopt.contracts.run_results import load_results
    except ImportError:  # before the contracts move (e2ad180): for bench before/after counts
        from agentopt.reports.results import load_results  # type: ignore[no-redef]

    def azure(path: Path) -> Any:
        azure = load_azure_yaml(path)
        return [read_service_agent(azure, name) for name in azure.services]

    def agent(path: Path) -> Any:
        _agent_folder(path)
        return load_agent_config(path)

    def tools(path: Path) -> Any:
        meta = path.parent / "metadata.yaml"
        meta.write_text("model: mock:echo\ntools_file: tools.json\n", encoding="utf-8")
        _agent_folder(path)
        return load_agent_config(meta)

    def skill(path: Path) -> Any:
        folder = path.parent
        skills = folder / "skills" / "s"
        skills.mkdir(parents=True, exist_ok=True)
        (skills / "SKILL.md").write_bytes(path.read_bytes())
        meta = folder / "metadata.yaml"
        meta.write_text("model: mock:echo\nskill_dir: skills\n", encoding="utf-8")
        _agent_folder(path)
        return load_agent_config(meta)

    def dotenv(path: Path) -> Any:
        return parse_dotenv(path.read_bytes().decode("utf-8", "replace"))

    dataset = [
        lambda p: load_dataset(p, upgrade=False),
        lambda p: validate_dataset(p, strict=True),
        validate_file,
    ]
    return {
        "eval_yaml": [load_eval_config, validate_file],
        "jsonl": dataset,
        "m365": dataset,
        "m365_legacy": dataset,
        "csv": dataset,
        "rubric": [load_rubric, validate_file],
        "evaluator_yaml": [load_evaluator_yaml, validate_file],
        "azure_yaml": [azure],
        "metadata_yaml": [agent],
        "tools_json": [tools],
        "skill_md": [skill, dotenv],
        "results_json": [load_results],
    }


LOADERS = _loaders


@dataclass
class Outcome:
    """What one loader call did with one input."""

    kind: str
    error: str | None = None
    """`ExceptionType: message` of anything that is not an AgentoptError (a traceback)."""
    cpu_s: float = 0.0
    hung: bool = False


class _CpuCapReached(BaseException):
    """Raised by the CPU timer; a BaseException so that no loader's `except` swallows it."""


@contextmanager
def cpu_cap(seconds: float) -> Iterator[None]:
    """Stop the block after `seconds` of CPU (main thread only): a hang becomes an outcome."""

    def stop(signum: int, frame: Any) -> None:
        raise _CpuCapReached

    previous = signal.signal(signal.SIGPROF, stop)
    signal.setitimer(signal.ITIMER_PROF, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)


def _printable(problems: Any) -> None:
    from agentopt.core.errors import Problem

    for problem in problems if isinstance(problems, list) else []:
        if isinstance(problem, Problem):
            str(problem).encode("utf-8")


def run_loader(kind: str, loader: Callable[[Path], Any], path: Path, *, stop_s: float) -> Outcome:
    """One loader on one file: returned or AgentoptError = fine; anything else is recorded."""
    from agentopt.core.errors import AgentoptError

    outcome = Outcome(kind)
    started = time.process_time()
    try:
        with cpu_cap(stop_s):
            try:
                result = loader(path)
            except AgentoptError as err:
                str(err).encode("utf-8")  # the message must print, whatever the input
                _printable(getattr(err, "problems", []))
            else:
                _printable(getattr(result, "problems", result))
    except _CpuCapReached:
        outcome.hung = True
    except Exception as exc:  # a traceback for the user
        outcome.error = f"{type(exc).__name__}: {str(exc)[:200]}"
    outcome.cpu_s = time.process_time() - started
    return outcome
