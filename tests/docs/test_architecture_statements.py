"""docs/architecture.md, statement by statement (issue 39: "docs/architecture.md's statements
each hold (a test per statement where one can check it)").

`STATEMENTS` names, for each statement of the page, the tests that fail when it stops being
true — here, or in the test file that already held it — or why no test can check it. The
first test splits the page into statements and fails on one the table does not account for,
so a sentence added to the page needs a test (or a reason) before it merges.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

from tests.docs.sources import (
    PACKAGE,
    REPO,
    called_name,
    docstrings,
    imported_modules,
    modules,
    squash,
    statements,
)

DOC = REPO / "docs" / "architecture.md"


@dataclass(frozen=True)
class Statement:
    quote: str
    """Words of the statement as the page has them (whitespace aside)."""
    held_by: tuple[str, ...] = ()
    """Tests in this file (`test_x`) or elsewhere (`tests/path.py::test_x`)."""
    why_not: str | None = None
    """For a statement no test can check: the reason."""
    unchecked: str | None = None
    """The part of a tested statement no test checks, and why."""


LAYERS = "tests/test_layers.py::"
SURFACE = "tests/test_plugins_surface.py::"
COMPAT = "tests/contracts/test_records_compat.py::"
CALLS = "tests/workflows/test_resolve_suite_calls.py::"
RULES = "tests/docs/test_architecture_rules.py::"
STATEMENTS = (
    Statement("agentopt is one Python package", (LAYERS + "test_the_map_names_every_package",)),
    Statement("never upward, never sideways", (LAYERS + "test_no_import_goes_up_or_sideways",)),
    Statement(  # a type two peers share can only come from below: the import rule above
        "Shared types therefore live low", (LAYERS + "test_no_import_goes_up_or_sideways",)
    ),
    Statement("reads the table below and checks", ("test_the_layer_test_reads_this_page",)),
    Statement(
        "The house style behind it is `style.md`",
        why_not="style.md is part of the specification, which is not in this repository",
    ),
    Statement(
        "the four registration decorators and the types a plugin needs",
        (
            "test_the_surface_has_four_registration_decorators",
            SURFACE + "test_the_surface_is_the_registration_path_of_the_built_ins",
            SURFACE + "test_importing_the_surface_loads_only_what_is_asked_for",
        ),
    ),
    Statement(
        "Plugins import only from it; nothing in agentopt does",
        (
            SURFACE + "test_the_extending_docs_import_only_agentopt_plugins",
            SURFACE
            + "test_every_plugin_test_imports_the_plugin_surface_only_from_agentopt_plugins",
            SURFACE + "test_nothing_inside_agentopt_imports_the_surface",
        ),
    ),
    Statement(
        "The typer commands",
        (
            "test_only_cli_imports_typer",
            "test_exceptions_become_exit_codes_in_one_place",
            "test_the_detected_eval_target_block_is_the_cli_s",
        ),
        unchecked="'options → one library call → rendering' is a shape of each command's "
        "function; how many library calls a command makes is not countable from the source "
        "without flagging helpers that only read options",
    ),
    Statement("The commands as a library", ("test_workflows_has_the_parts_the_map_names",)),
    Statement("The evaluator catalogue", ("test_evaluators_has_the_parts_the_map_names",)),
    Statement("one target per way of reaching it", ("test_the_targets_are_the_ways_named",)),
    Statement("Loading every dataset shape", ("test_every_dataset_shape_loads_into_tasks",)),
    Statement("versioned registry of datasets", ("test_the_registry_writes_only_atomically",)),
    Statement("Every rendering of a run", ("test_reports_renders_every_format_named",)),
    Statement(
        "The one call layer for every model call",
        ("test_no_model_sdk_outside_the_call_layer",),
        unchecked="the order in parentheses is the order of steps inside `CallLayer.chat`; "
        "tests/models checks each step (cache hits, limits, retries, costs) on its own",
    ),
    Statement("The typed records every layer shares", ("test_contracts_has_the_records_named",)),
    Statement("Pydantic models and loaders of every user file", ("test_only_core_loads_yaml",)),
    Statement(
        "Everything agentopt saves is a model in `contracts/`",
        (
            RULES + "test_strategies_get_typed_records",
            COMPAT + "test_this_version_writes_the_same_records",
        ),
        unchecked="'everything agentopt saves': the cache database, logs, HTML and registry "
        "indexes are saved too and are not records; which files are records is a judgement, "
        "so the tests hold the record files (run.json, results.json, job.json, journals)",
    ),
    Statement(
        "Saved records keep keys they do not know",
        (
            RULES + "test_saved_records_keep_unknown_keys_but_the_two_named",
            "tests/contracts/test_records.py::test_a_record_keeps_keys_a_newer_version_added",
        ),
    ),
    Statement(
        "carry `schema_version`",
        (
            RULES + "test_the_three_files_carry_schema_version",
            COMPAT + "test_a_file_from_a_newer_version_is_refused_with_a_clear_message",
        ),
    ),
    Statement(
        "The run engine's unit of work",
        (
            RULES + "test_a_unit_takes_a_task_and_returns_a_unit_result",
            "tests/contracts/test_records.py::test_task_transcript_and_unit_come_back_equal_from_another_process",
        ),
    ),
    Statement(
        "register with their kind's decorator in their own module",
        (RULES + "test_built_ins_register_by_decorator_in_their_home_package",),
    ),
    Statement(
        "imports the built-in modules of the kind's home package",
        (
            RULES + "test_registries_load_their_group_and_home_on_first_use",
            "tests/test_plugin_scan.py::test_plugins_are_found_and_the_first_distribution_of_a_name_wins",
        ),
    ),
    Statement("See [extending.md](extending.md).", why_not="a pointer, not a statement"),
    Statement(
        "The call layer owns concurrency",
        (RULES + "test_one_pool_per_name_one_default_one_builder",),
    ),
    Statement(
        "Which flag, eval.yaml key or environment variable a setting",
        (
            RULES + "test_run_and_optimize_take_call_flags_from_the_resolved_suite",
            CALLS + "test_the_suite_file_sets_them_with_key_and_line",
            CALLS + "test_flags_win_over_the_suite_file",
            CALLS + "test_the_call_layer_uses_what_the_table_shows",
        ),
    ),
    Statement(
        "The agent pool bounds agent runs in flight", (RULES + "test_who_holds_an_agent_slot",)
    ),
)


def _held(name: str) -> bool:
    if "::" not in name:
        return callable(globals().get(name))
    path, test = name.split("::")
    tree = ast.parse((REPO / path).read_text(encoding="utf-8"))
    return any(isinstance(n, ast.FunctionDef) and n.name == test for n in ast.walk(tree))


def test_every_statement_is_tested_or_says_why_not() -> None:
    page = statements(DOC.read_text(encoding="utf-8"))
    quotes = [squash(s.quote) for s in STATEMENTS]
    loose = [s for s in page if not any(q in squash(s) for q in quotes)]
    assert loose == [], "statements with no test and no reason:\n" + "\n".join(loose)
    unused = [q for q in quotes if not any(q in squash(s) for s in page)]
    assert unused == [], f"quotes the page no longer has: {unused}"
    for s in STATEMENTS:
        assert bool(s.held_by) != bool(s.why_not), s.quote
        assert all(_held(name) for name in s.held_by), s.held_by


def test_the_layer_test_reads_this_page() -> None:
    from tests import test_layers

    assert test_layers.DOC.resolve() == DOC.resolve()
    rows = re.findall(r"^\| \d+ \| `", DOC.read_text(encoding="utf-8"), re.M)
    assert len(test_layers.layer_map()) == len(rows)  # every row of the table is read
    source = ast.parse((REPO / "tests" / "test_layers.py").read_text(encoding="utf-8"))
    assert "ast" in {name for _, name in imported_modules(source)}
    assert any(isinstance(n, ast.Call) and called_name(n) == "parse" for n in ast.walk(source))


def test_the_surface_has_four_registration_decorators() -> None:
    from agentopt import plugins

    assert sorted(n for n in plugins.__all__ if n.startswith("register_")) == [
        "register_evaluator",
        "register_provider",
        "register_strategy",
        "register_target",
    ]


def test_only_cli_imports_typer() -> None:
    found = [
        m.rel
        for m in modules()
        for _, name in imported_modules(m.tree)
        if name.split(".")[0] in ("typer", "click") and m.package != "cli"
    ]
    assert found == []


_EXITS = {"Exit", "exit", "SystemExit", "Abort"}


def test_exceptions_become_exit_codes_in_one_place() -> None:
    """Outside cli/errors.py no `except` turns an exception into an exit (typer.Exit,
    SystemExit, sys.exit): a command raises, errors.py maps."""
    found = []
    for m in modules():
        if m.rel in ("cli/errors.py", "cli/fast_exit.py"):  # the mapping, and how it ends
            continue
        for handler in ast.walk(m.tree):
            if not isinstance(handler, ast.ExceptHandler):
                continue
            for node in ast.walk(handler):
                if isinstance(node, ast.Call) and called_name(node) in _EXITS:
                    found.append(f"{m.rel}:{node.lineno}")
    assert found == []


def test_the_detected_eval_target_block_is_the_cli_s() -> None:
    found = []
    for m in modules():
        skip = docstrings(m.tree)
        for node in ast.walk(m.tree):
            if (
                isinstance(node, ast.Constant)
                and id(node) not in skip
                and node.value == "Detected eval target"
            ):
                found.append(m.rel)
    assert found == ["cli/target_block.py"]


def _exists(*parts: str) -> list[str]:
    return [p for p in parts if not (PACKAGE / p).exists()]


def test_workflows_has_the_parts_the_map_names() -> None:
    run = [
        f"workflows/run/{n}.py" for n in ("inputs", "plan", "engine", "store", "results", "gates")
    ]
    others = [
        "workflows/generate",
        "workflows/optimize/search.py",
        "workflows/optimize/strategies",
        "workflows/update.py",
        "workflows/validate.py",
        "workflows/init.py",
        "workflows/detect.py",
    ]
    assert _exists(*run, *others) == []
    store = next(m for m in modules() if m.rel == "workflows/run/store.py")
    assert "agentopt.contracts.run_journal" in {n for _, n in imported_modules(store.tree)}


def test_evaluators_has_the_parts_the_map_names() -> None:
    from agentopt.evaluators.builtin_index import builtin_modules  # the catalogue

    assert len(builtin_modules()) >= 10
    assert (
        _exists(
            "evaluators/judges",
            "evaluators/judges/rubric.py",
            "evaluators/aggregate.py",
            "evaluators/run_stats.py",
        )
        == []
    )


def test_the_targets_are_the_ways_named() -> None:
    from agentopt.agents.base import TARGETS

    assert set(TARGETS.names()) == {"local", "hosted", "endpoint", "command", "foundry", "captured"}
    drivers = {
        m.rel
        for m in modules()
        for n in ast.walk(m.tree)
        if isinstance(n, ast.AsyncFunctionDef) and n.name == "run_turns"
    }
    assert drivers == {"agents/conversation.py"}
    for m in modules():
        registers = any(
            isinstance(n, ast.Call)
            and called_name(n) == "register_target"
            and n.args
            and getattr(n.args[0], "value", None) != "captured"
            for d in ast.walk(m.tree)
            if isinstance(d, ast.ClassDef)
            for n in d.decorator_list
        )
        if registers:  # a way of reaching the agent plays its turns through the one driver
            calls = {called_name(n) for n in ast.walk(m.tree) if isinstance(n, ast.Call)}
            assert "run_turns" in calls, m.rel


def test_every_dataset_shape_loads_into_tasks(tmp_path: Path) -> None:
    from agentopt.datasets.adhoc import dataset_from_prompts
    from agentopt.datasets.load import load_dataset
    from agentopt.datasets.writer import dump_tasks_jsonl

    adhoc = dataset_from_prompts(["What is 2+2?"], ["4"])
    jsonl = tmp_path / "tasks.jsonl"
    jsonl.write_text(dump_tasks_jsonl(adhoc.tasks), encoding="utf-8")
    back = load_dataset(jsonl).tasks  # written by datasets, read back the same
    assert [(t.name, t.turns) for t in back] == [(t.name, t.turns) for t in adhoc.tasks]
    csv = tmp_path / "tasks.csv"
    csv.write_text("name,query\nt1,What is 2+2?\n", encoding="utf-8")
    assert [t.name for t in load_dataset(csv).tasks] == ["t1"]
    document = tmp_path / "prompts.json"  # a copy: loading may upgrade the file in place
    sample = REPO / "tests" / "fixtures" / "m365" / "samples" / "example_prompts.json"
    document.write_bytes(sample.read_bytes())
    m365 = load_dataset(document)
    assert m365.format == "m365" and m365.tasks


def test_the_registry_writes_only_atomically() -> None:
    from agentopt.core.paths import REGISTRY_DIR

    assert REGISTRY_DIR.as_posix() == ".azure/.foundry"
    plain = {"write_text", "write_bytes", "open"}
    found = [
        f"{m.rel}:{n.lineno}"
        for m in modules()
        if m.package == "registry"
        for n in ast.walk(m.tree)
        if isinstance(n, ast.Call)
        and called_name(n) in plain
        and not (called_name(n) == "open" and _read_mode(n))
    ]
    assert found == []
    assert _exists("registry/hashing.py", "registry/store.py") == []


def _read_mode(call: ast.Call) -> bool:
    modes = [a.value for a in call.args[1:2] if isinstance(a, ast.Constant)]
    modes += [
        k.value.value
        for k in call.keywords
        if k.arg == "mode" and isinstance(k.value, ast.Constant)
    ]
    return all("r" in str(m) and "+" not in str(m) for m in modes)


def test_reports_renders_every_format_named() -> None:
    from agentopt.reports.outputs import OUTPUT_FORMATS

    assert set(OUTPUT_FORMATS) == {".json", ".html", ".xml", ".csv", ".md"}
    assert (
        _exists(
            "reports/terminal.py",
            "reports/m365_output.py",
            "reports/optimize_html.py",
            "reports/optimize_report.py",
        )
        == []
    )


SDKS = {"openai", "anthropic", "litellm", "azure.ai.inference", "google.genai", "ollama"}
AGENT_TRAFFIC = {"agents"}
"""An agent under test is reached through its own protocol (a hosted agent and an endpoint
speak OpenAI's wire): that is the agent's traffic, not a model call."""
FOUNDRY_API = {"workflows/remote/errors.py"}
"""Maps the Foundry project client's exceptions (remote runs): no model is called there."""


def test_no_model_sdk_outside_the_call_layer() -> None:
    found = [
        f"{m.rel}:{line} {name}"
        for m in modules()
        for line, name in imported_modules(m.tree)
        if any(name == s or name.startswith(s + ".") for s in SDKS)
        and m.package not in {"models", *AGENT_TRAFFIC}
        and m.rel not in FOUNDRY_API
    ]
    assert found == []


def test_contracts_has_the_records_named() -> None:
    from agentopt.contracts import (  # noqa: F401 - each name is a record the map lists
        EvalResult,
        JobRecord,
        RunRecord,
        RunResults,
        TaskScore,
        Transcript,
    )
    from agentopt.contracts.optimize_journal import ProposalEntry, UnitEntry  # noqa: F401
    from agentopt.contracts.run_journal import RunJournalEntry  # noqa: F401
    from agentopt.contracts.task import Task  # noqa: F401
    from agentopt.contracts.task_record import TaskOutcome  # noqa: F401


def test_only_core_loads_yaml() -> None:
    """A YAML file is parsed in core/ (its loaders); other packages may write YAML."""
    found = []
    for m in modules():
        if m.package == "core":
            continue
        names = {n for _, n in imported_modules(m.tree)}
        if not any(n == "yaml" or n.startswith(("yaml.", "ruamel")) for n in names):
            continue
        found += [
            f"{m.rel}:{n.lineno}"
            for n in ast.walk(m.tree)
            if isinstance(n, ast.Call)
            and called_name(n) in {"load", "safe_load", "load_all", "safe_load_all"}
        ]
    assert found == []
