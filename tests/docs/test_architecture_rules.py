"""docs/architecture.md's three rules ("one home per record", "one registration style", "one
owner per setting"), held statement by statement; `test_architecture_statements.STATEMENTS`
says which test holds which statement."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import typing

import pydantic

from tests.docs.sources import REPO, called_name, modules, squash

DOC = REPO / "docs" / "architecture.md"


def test_strategies_get_typed_records() -> None:
    from agentopt.contracts.task_record import RepeatOutcome
    from agentopt.workflows.optimize.strategies import base

    assert typing.get_type_hints(base.Example)["record"] is RepeatOutcome
    found = []
    for m in modules():
        if not m.rel.startswith("workflows/optimize/strategies/"):
            continue
        for n in ast.walk(m.tree):  # `x.record[...]` or `x.record.get(...)`: a dict read
            target = n.value if isinstance(n, ast.Subscript) else None
            if isinstance(n, ast.Call) and called_name(n) == "get":
                target = getattr(n.func, "value", None)
            if isinstance(target, ast.Attribute) and target.attr == "record":
                found.append(f"{m.rel}:{n.lineno}")
    assert found == []


def _strict_models(model: type[pydantic.BaseModel]) -> set[str]:
    """The models under `model` that refuse unknown keys: the first strict one on each path."""
    strict: set[str] = set()
    seen: set[type] = set()

    def walk(tp: object) -> None:
        for arg in typing.get_args(tp):
            walk(arg)
        if not (isinstance(tp, type) and issubclass(tp, pydantic.BaseModel)) or tp in seen:
            return
        seen.add(tp)
        if tp.model_config.get("extra") != "allow":
            strict.add(tp.__name__)
            return
        for field in tp.model_fields.values():
            walk(field.annotation)

    walk(model)
    return strict


def test_saved_records_keep_unknown_keys_but_the_two_named() -> None:
    """Every model a saved file is read into keeps unknown keys, but the two the page names
    (inside journal lines); a new strict model in a saved record fails here."""
    from agentopt.contracts import optimize_journal, run_journal
    from agentopt.contracts.matrix import MatrixRecord
    from agentopt.contracts.optimize_job import JobRecord
    from agentopt.contracts.run_results import RunRecord, RunResults

    files = [RunRecord, RunResults, JobRecord, MatrixRecord]
    assert set().union(*map(_strict_models, files)) == set()
    lines = [
        obj
        for mod in (run_journal, optimize_journal)
        for obj in vars(mod).values()
        if isinstance(obj, type)
        and issubclass(obj, pydantic.BaseModel)
        and obj.__module__ == mod.__name__
    ]
    strict = set().union(*map(_strict_models, lines))
    assert strict == {"TurnResult", "AgentDefinition"}
    text = squash(DOC.read_text(encoding="utf-8"))
    assert all(f"`{name}`" in text for name in strict)


def test_the_three_files_carry_schema_version() -> None:
    from agentopt.contracts.optimize_job import JobRecord
    from agentopt.contracts.record import SCHEMA_VERSION, VersionedRecord
    from agentopt.contracts.run_results import RunRecord, RunResults

    for model in (RunRecord, RunResults, JobRecord):
        assert issubclass(model, VersionedRecord)
        assert model.model_fields["schema_version"].default == SCHEMA_VERSION
    # without a version a file is version 1, and is migrated from there
    migrate = VersionedRecord.model_validate({})
    assert migrate.schema_version == SCHEMA_VERSION and SCHEMA_VERSION >= 1


def test_a_unit_takes_a_task_and_returns_a_unit_result() -> None:
    from agentopt.contracts.record import Record
    from agentopt.contracts.task import Task
    from agentopt.contracts.task_record import UnitResult
    from agentopt.workflows.run.engine import RunEngine, UnitRunner

    for runner in (UnitRunner, RunEngine):
        hints = typing.get_type_hints(runner.run_unit)
        assert hints["task"] is Task and hints["return"] is UnitResult
    assert issubclass(UnitResult, Record) and issubclass(Task, pydantic.BaseModel)


REGISTRATIONS = {
    "register_provider": "models/providers/",
    "evaluator": "evaluators/",
    "register_target": "agents/",
    "register_strategy": "workflows/optimize/strategies/",
}
"""Each kind's decorator and the home package of its built-ins."""


def test_built_ins_register_by_decorator_in_their_home_package() -> None:
    decorated: dict[str, set[str]] = {name: set() for name in REGISTRATIONS}
    found = []
    for m in modules():
        own = {
            alias.asname or alias.name
            for n in ast.walk(m.tree)
            if isinstance(n, ast.ImportFrom) and (n.module or "").startswith("agentopt.")
            for alias in n.names
            if alias.name in REGISTRATIONS
        }
        as_decorator: set[int] = set()
        for n in ast.walk(m.tree):
            if isinstance(n, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                for d in n.decorator_list:
                    call = d if isinstance(d, ast.Call) else None
                    name = called_name(call) if call else getattr(d, "id", None)
                    if name in own:
                        as_decorator.add(id(d))
                        decorated[name].add(m.rel)
        for n in ast.walk(m.tree):  # `register_x("a")(cls)`: registration by a call
            if (
                isinstance(n, ast.Call)
                and isinstance(n.func, ast.Call)
                and called_name(n.func) in own
                and id(n.func) not in as_decorator
            ):
                found.append(f"{m.rel}:{n.lineno}")
    assert found == []
    for name, home in REGISTRATIONS.items():
        assert decorated[name], name
        assert all(rel.startswith(home) for rel in decorated[name]), (name, decorated[name])


def test_registries_load_their_group_and_home_on_first_use() -> None:
    code = """
import sys
from agentopt.agents.base import TARGETS
from agentopt.evaluators.registry import EVALUATORS
from agentopt.models.providers.registry import PROVIDERS
from agentopt.workflows.optimize.strategies.base import STRATEGIES
regs = (PROVIDERS, EVALUATORS, TARGETS, STRATEGIES)
print([r.group for r in regs])
print([list(r.packages) for r in regs])
print("agentopt.evaluators.deterministic.exact_match" in sys.modules)
TARGETS.names(); EVALUATORS.names()
print("agentopt.evaluators.deterministic.exact_match" in sys.modules)
"""
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True
    ).stdout.splitlines()
    groups = [
        "agentopt.providers",
        "agentopt.evaluators",
        "agentopt.targets",
        "agentopt.strategies",
    ]
    assert out[0] == str(groups)
    assert out[1] == str(
        [
            ["agentopt.models.providers"],
            ["agentopt.evaluators.deterministic", "agentopt.evaluators.judges"],
            ["agentopt.agents"],
            ["agentopt.workflows.optimize.strategies"],
        ]
    )
    assert out[2:] == ["False", "True"]  # a built-in loads on the first lookup, not before


def test_one_pool_per_name_one_default_one_builder() -> None:
    from agentopt.models.settings import CallSettings

    text = squash(DOC.read_text(encoding="utf-8"))
    named = re.search(r"one limit per pool \(([^)]*)\)", text)
    assert named is not None
    assert set(CallSettings().concurrency) == {p.strip() for p in named.group(1).split(",")}
    builders = [
        f"{m.rel}:{n.lineno}"
        for m in modules()
        for n in ast.walk(m.tree)
        if isinstance(n, ast.Call) and called_name(n) == "CallSettings" and (n.args or n.keywords)
    ]
    assert builders == ["models/settings.py:" + builders[0].split(":")[1]], builders


def test_who_holds_an_agent_slot() -> None:
    slots: list[str] = []
    sized: list[str] = []
    semaphores: list[str] = []
    for m in modules():
        for n in ast.walk(m.tree):
            if not isinstance(n, ast.Call):
                continue
            first = getattr(n.args[0], "value", None) if n.args else None
            if called_name(n) == "slot" and first == "agent":
                slots.append(m.rel)
            elif called_name(n) == "limit" and first == "agent":
                sized.append(m.rel)
            elif (called_name(n) or "").endswith(("Semaphore", "CapacityLimiter")) or (
                called_name(n) == "PoolLimiter" and m.package != "models"
            ):
                semaphores.append(m.rel)
    assert sorted(slots) == ["agents/conversation.py", "workflows/optimize/evaluation.py"]
    # The run engine sizes its workers by the agent limit; an optimize validation race
    # decides each unit on those that ran that many units before it.
    assert sorted(sized) == ["workflows/optimize/evaluation.py", "workflows/run/engine.py"]
    assert semaphores == []


def test_run_and_optimize_take_call_flags_from_the_resolved_suite() -> None:
    """`eval run`, `optimize` and a remote run build no `CallFlags` of their own: they take
    `resolve_suite.call_flags`, which reads only settings the table resolves."""
    from agentopt.contracts.resolved_suite import ResolvedSuite
    from agentopt.workflows import resolve_suite

    own = [
        f"{m.rel}:{n.lineno}"
        for m in modules()
        if m.rel.startswith(("workflows/run/", "workflows/optimize/", "workflows/remote/", "cli/"))
        for n in ast.walk(m.tree)
        if isinstance(n, ast.Call) and called_name(n) == "CallFlags"
    ]
    assert own == []
    read: list[str] = []

    class Seen(dict):  # type: ignore[type-arg]
        def get(self, name: str, default: object = None) -> object:
            read.append(name)
            return default

    class Spy(ResolvedSuite):
        def get(self, name: str, default: object = None) -> object:
            read.append(name)
            return default

        def given(self, name: str) -> bool:
            read.append(name)
            return False

    resolve_suite.call_flags(Spy(settings=Seen()))
    knobs = {k.name for k in resolve_suite.KNOBS}
    endpoints = {"calls_project_endpoint"}  # resolve_endpoints' row of the call layer
    assert read and set(read) <= knobs | endpoints, set(read) - knobs
