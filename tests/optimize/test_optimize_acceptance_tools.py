"""Acceptance (optimizer issue): tool-description mutation never changes a tool's name,
parameter names, types or required list — a property test over random tools.json files.

Each example writes a random tools.json (nested parameter schemas, enums, required lists, a
parameter that may be called `description`), loads it the way a project is loaded, and lets
the `tools` strategy ask a scripted reflection model, which answers with a random rewrite:
new description texts, sometimes with one structural change on top (a rename, a type, the
required list, an added or dropped parameter, a parameter schema replaced by text, ...). An
accepted proposal is written as a candidate and its tools.json read back: it must differ from
the input only in description texts. A rewrite with a structural change must be refused, and
one that changed nothing but descriptions accepted (else the strategy would be useless).
"""

from __future__ import annotations

import asyncio
import copy
import json
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentopt.contracts.task import Criterion, Task, Turn
from agentopt.core.files.agent_config import load_agent_config, write_agent_config
from agentopt.models.call import CallLayer, CallSettings
from agentopt.models.providers.mock import register_mock, unregister_mock
from agentopt.workflows.optimize.strategies import (
    Example,
    MutationRejected,
    NoProposal,
    Proposal,
    ProposalContext,
    make_strategy,
)
from agentopt.workflows.optimize.strategies.tools import rewritten_tools

REFLECT = "acceptance_tool_reflect"
SCALARS = ("string", "integer", "number", "boolean")
# Names that are also JSON-Schema keywords are the interesting ones for a merge by key.
PARAM_NAMES = st.one_of(
    st.just("description"),
    st.sampled_from(["type", "properties", "required", "items", "enum"]),
    st.from_regex(r"[a-z][a-z0-9_]{0,7}", fullmatch=True),
)
TEXT = st.text(st.characters(codec="ascii", categories=("L", "N", "Zs", "P")), max_size=24)


# -- random tools.json -----------------------------------------------------------------------


@st.composite
def schemas(draw: st.DrawFn, depth: int) -> dict[str, Any]:
    """A parameter schema: a scalar (maybe with an enum), an array, or a nested object."""
    kinds = ["object", "array", "scalar"] if depth > 0 else ["scalar"]
    kind = draw(st.sampled_from(kinds))  # hypothesis favours the first: nesting is common
    node: dict[str, Any]
    if kind == "scalar":
        node = {"type": draw(st.sampled_from(SCALARS))}
        if node["type"] == "string" and draw(st.booleans()):
            node["enum"] = draw(st.lists(TEXT, min_size=1, max_size=3, unique=True))
    elif kind == "array":
        node = {"type": "array", "items": draw(schemas(depth - 1))}
    else:
        node = draw(objects(depth - 1))
    if draw(st.booleans()):
        node["description"] = draw(TEXT)
    return node


@st.composite
def objects(draw: st.DrawFn, depth: int, min_size: int = 0) -> dict[str, Any]:
    props = draw(st.dictionaries(PARAM_NAMES, schemas(depth), min_size=min_size, max_size=4))
    required: list[str] = []
    if props:
        required = draw(st.lists(st.sampled_from(sorted(props)), unique=True))
    node: dict[str, Any] = {"type": "object", "properties": props}
    listed: bool = bool(required) or draw(st.booleans())
    if listed:  # an empty `required` list sometimes, no list other times
        node["required"] = required
    return node


@st.composite
def tools_files(draw: st.DrawFn) -> list[dict[str, Any]]:
    names = draw(
        st.lists(
            st.from_regex(r"[a-z][a-z0-9_]{0,11}", fullmatch=True), min_size=1, max_size=3
        ).map(lambda xs: list(dict.fromkeys(xs)))
    )
    tools = []
    for name in names:
        fn: dict[str, Any] = {
            "name": name,
            "description": draw(TEXT),
            "parameters": draw(objects(2, min_size=1)),
        }
        if draw(st.booleans()):
            fn["strict"] = draw(st.booleans())
        tools.append({"type": "function", "function": fn})
    return tools


# -- random rewrites from the reflection model -------------------------------------------------


def schema_nodes(node: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], Any]]:
    """Every schema node of a parameters schema, with its path (property maps are not nodes)."""
    if not isinstance(node, dict):
        return
    yield path, node
    for name, sub in (node.get("properties") or {}).items():
        yield from schema_nodes(sub, (*path, "properties", name))
    if "items" in node:
        yield from schema_nodes(node["items"], (*path, "items"))


def at(root: dict[str, Any], path: tuple[Any, ...]) -> Any:
    for key in path:
        root = root[key]
    return root


STRUCTURAL = (
    "rename_tool",
    "rename_param",
    "add_param",
    "drop_param",
    "change_type",
    "change_required",
    "change_enum",
    "param_as_text",
    "text_in_properties",
    "add_keyword",
    "drop_parameters",
)
HARMLESS = ("none", "non_text_description", "extra_function_key", "wrapped")


@st.composite
def rewrites(draw: st.DrawFn, fn: dict[str, Any], change: str) -> tuple[dict[str, Any], str]:
    """(what the reflection model answers, `change` — or "none" when it does not apply)."""
    new = copy.deepcopy(fn)
    params = new["parameters"]
    nodes = list(schema_nodes(params))
    new["description"] = draw(TEXT)
    for path, _ in nodes:
        if draw(st.booleans()):
            at(params, path)["description"] = draw(TEXT)
    objects_ = [(p, n) for p, n in nodes if n.get("type") == "object"]
    with_props = [(p, n) for p, n in objects_ if n["properties"]]
    path, node = draw(st.sampled_from(nodes))
    if change == "rename_tool":
        new["name"] = new["name"] + "_v2"
    elif change in ("rename_param", "drop_param", "param_as_text") and with_props:
        path, node = draw(st.sampled_from(with_props))
        key = draw(st.sampled_from(sorted(node["properties"])))
        sub = node["properties"].pop(key)
        if change == "rename_param":
            node["properties"][key + "_x"] = sub
        elif change == "param_as_text":
            node["properties"][key] = draw(TEXT)
    elif change == "text_in_properties" and objects_:
        # A model that takes a property map for a schema node and "describes" it (the
        # deepest one: the top level has its own name checks).
        path, node = max(objects_, key=lambda pn: len(pn[0]))
        node["properties"]["description"] = draw(TEXT)
    elif change == "add_param" and objects_:
        path, node = draw(st.sampled_from(objects_))
        extra = draw(PARAM_NAMES.filter(lambda k: k not in node["properties"]))
        node["properties"][extra] = {"type": draw(st.sampled_from(SCALARS))}
    elif change == "change_type":
        node["type"] = draw(st.sampled_from([t for t in (*SCALARS, "array") if t != node["type"]]))
    elif change == "change_required" and objects_:
        path, node = draw(st.sampled_from(objects_))
        required: list[str] = list(node.get("required") or [])
        missing = [k for k in node["properties"] if k not in required]
        drop: bool = bool(required) and draw(st.booleans())
        if drop:
            required.pop(draw(st.integers(0, len(required) - 1)))
        elif missing:
            required.append(draw(st.sampled_from(missing)))
        else:
            required.append("made_up")
        node["required"] = required
    elif change == "change_enum":
        node["enum"] = [*node.get("enum", []), "another value"]
    elif change == "add_keyword":
        node["minLength" if node["type"] == "string" else "title"] = 3
    elif change == "drop_parameters":
        del new["parameters"]
    elif change == "non_text_description":
        node["description"] = draw(st.sampled_from([None, 42, ["a list"]]))
    elif change == "extra_function_key":
        new["strict"] = not new.get("strict", False)
        new["title"] = "ignored"
    elif change == "wrapped":
        return {"type": "function", "function": new}, change
    elif change != "none":
        change = "none"  # not applicable to this tool: a description-only rewrite
    return new, change


# -- what "only descriptions changed" means -------------------------------------------------


def skeleton(node: Any) -> Any:
    """A parameters schema without the description texts of its schema nodes (a property
    *named* `description` is a parameter, not a text, and is kept)."""
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "description" and isinstance(value, str):
            continue
        if key == "properties" and isinstance(value, dict):
            out[key] = {name: skeleton(sub) for name, sub in value.items()}
        elif key in ("items", "additionalProperties"):
            out[key] = skeleton(value)
        else:
            out[key] = value
    return out


def tool_skeleton(tool: dict[str, Any]) -> dict[str, Any]:
    fn = tool["function"]
    rest = {k: v for k, v in fn.items() if k not in ("description", "parameters")}
    return {**tool, "function": {**rest, "parameters": skeleton(fn.get("parameters"))}}


# -- driving the strategy -------------------------------------------------------------------


def failing_example(tool_name: str) -> Example:
    """A failed train task in which the chosen tool failed: the strategy picks that tool."""
    task = Task(
        name="t1",
        turns=[Turn(query="help", criteria=[Criterion(name="c", instruction="Be right.")])],
    )
    record = {
        "response": "sorry",
        "tool_calls": [{"name": tool_name, "arguments": {}, "error": "bad arguments"}],
        "evaluators": [],
    }
    return Example(task=task, score=0.0, status="fail", record=record)


def propose(folder: Path, tools: list[dict[str, Any]], chosen: str) -> Proposal:
    ex = failing_example(chosen)
    return run_tools_strategy(folder, tools, [ex], f"mock:{REFLECT}", number=1)


def run_tools_strategy(
    folder: Path, tools: list[dict[str, Any]], examples: list[Example], model: str, number: int
) -> Proposal:
    """The `tools` strategy's proposal for an agent folder holding `tools`."""
    folder.mkdir(parents=True)
    (folder / "tools.json").write_text(json.dumps(tools, indent=2), encoding="utf-8")
    (folder / "metadata.yaml").write_text(
        "model: mock:echo\ninstruction_file: instructions.md\ntools_file: tools.json\n"
    )
    (folder / "instructions.md").write_text("Help the user.\n")
    parent, _ = load_agent_config(folder, name="agent", project=folder)

    async def go() -> Proposal:
        layer = CallLayer(folder, CallSettings(cache_enabled=False, max_attempts=1))
        try:
            ctx = ProposalContext(
                number=number,
                parent_id="baseline",
                parent=parent,
                examples=examples,
                train=examples,
                tried_models=set(),
                search_space=[],
                layer=layer,
                optimization_model=model,
                seed=0,
            )
            return await make_strategy("tools").propose(ctx)
        finally:
            await layer.aclose()

    return asyncio.run(go())


@pytest.fixture(scope="module")
def reflection() -> Iterator[dict[str, Any]]:
    """The scripted reflection model: answers with whatever rewrite the example put here."""
    holder: dict[str, Any] = {}
    register_mock(REFLECT, lambda req: json.dumps({"tool": holder["tool"], "rationale": "r"}))
    yield holder
    unregister_mock(REFLECT)


def check_rewrite(
    reflection: dict[str, Any],
    tools: list[dict[str, Any]],
    chosen: dict[str, Any],
    reply: dict[str, Any],
    change: str,
) -> None:
    """Propose with `reply` as the model's answer; check what an accepted candidate holds."""
    reflection["tool"] = reply
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        try:
            proposal = propose(folder / "baseline", tools, chosen["name"])
        except MutationRejected:
            assert change in STRUCTURAL, f"a {change!r} rewrite was refused"
            return
        except NoProposal as exc:
            # Only when the model changed nothing at all (the drawn texts were the old ones).
            assert "came back unchanged" in exc.reason and change not in STRUCTURAL, exc.reason
            return
        parent, _ = load_agent_config(folder / "baseline", name="agent", project=folder)
        write_agent_config(folder / "child", proposal.definition)
        written = json.loads((folder / "child" / "tools.json").read_text(encoding="utf-8"))
    # The accepted candidate's tools.json differs from the input in description texts only.
    assert [tool_skeleton(t) for t in written] == [tool_skeleton(t) for t in parent.tools], (
        f"accepted a {change!r} rewrite that changed the tool's structure"
    )
    changed = [t for t, p in zip(written, parent.tools, strict=True) if t != p]
    assert [t["function"]["name"] for t in changed] == [chosen["name"]]
    # And the structural part of the reply was not silently dropped: it was refused.
    assert change not in STRUCTURAL, f"a {change!r} rewrite was accepted"


@settings(
    max_examples=8,  # per kind of rewrite: ~120 random tools.json files in all
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data(), tools=tools_files())
@pytest.mark.parametrize("kind", STRUCTURAL + HARMLESS)
def test_a_tool_rewrite_changes_descriptions_only(
    reflection: dict[str, Any], kind: str, data: Any, tools: list[dict[str, Any]]
) -> None:
    chosen = data.draw(st.sampled_from([t["function"] for t in tools]))
    reply, change = data.draw(rewrites(chosen, kind))
    check_rewrite(reflection, tools, chosen, reply, change)


def test_a_parameter_named_description_cannot_be_replaced_by_text(
    reflection: dict[str, Any],
) -> None:
    fn: dict[str, Any] = {
        "name": "note",
        "description": "Save a note.",
        "parameters": {
            "type": "object",
            "properties": {"description": {"type": "string", "description": "The note."}},
            "required": ["description"],
        },
    }
    bad = copy.deepcopy(fn)
    bad["description"] = "Save one note for later."
    bad["parameters"]["properties"]["description"] = "What the note says."
    tools = [{"type": "function", "function": fn}]
    check_rewrite(reflection, tools, fn, bad, "param_as_text")


def _function(name: str, description: str) -> dict[str, Any]:
    parameters = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}
    return {"name": name, "description": description, "parameters": parameters}


def test_a_tool_that_comes_back_unchanged_passes_the_turn_to_the_next_tool() -> None:
    # Two tools equally implicated: the reflection model has nothing to say about the one
    # asked first, and the misleading description is the other's. The same proposal asks
    # about the second tool instead of ending with no candidate.
    tools = [
        {"type": "function", "function": _function("search_policies", "Search the policies.")},
        {"type": "function", "function": _function("order_status", "Search the policies too.")},
    ]
    asked: list[str] = []

    def reply(req: Any) -> str:
        prompt = "\n".join(str(m.content or "") for m in req.messages)
        name = next(n for n in ("order_status", "search_policies") if f'"name": "{n}"' in prompt)
        asked.append(name)
        if name == "order_status":
            return json.dumps(
                {"tool": _function(name, "Look up an order's status."), "rationale": "r"}
            )
        return json.dumps({"tool": _function(name, "Search the policies."), "rationale": "r"})

    register_mock("acceptance_tool_turns", reply)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp) / "baseline"
            proposal = run_tools_strategy(folder, tools, [], "mock:acceptance_tool_turns", 0)
    finally:
        unregister_mock("acceptance_tool_turns")
    assert asked == ["search_policies", "order_status"]
    assert proposal.strategy == "tools:order_status"
    described = {
        t["function"]["name"]: t["function"]["description"] for t in proposal.definition.tools
    }
    assert described == {
        "search_policies": "Search the policies.",
        "order_status": "Look up an order's status.",
    }


def _judged(name: str, called: str, reason: str) -> Example:
    """A failed task: the agent called `called`, and the judge's reason is `reason`."""
    task = Task(name=name, turns=[Turn(query="q", criteria=[Criterion(name="c", instruction="i")])])
    verdict = {"name": "c", "instruction": "i", "passed": False, "reason": reason}
    record = {
        "response": "sorry",
        "tool_calls": [{"name": called, "arguments": {}}],
        "evaluators": [
            {
                "evaluator": "builtin.task_adherence",
                "status": "fail",
                "details": {"verdicts": [verdict]},
            }
        ],
    }
    return Example(task=task, score=0.0, status="fail", record=record)


def test_two_tools_the_agent_confuses_are_rewritten_in_one_proposal() -> None:
    # The judges say which tool each failed task needed, and the agent called the other one:
    # both descriptions are rewritten together (fixing one leaves the other claiming the same
    # tasks), at one reflection call each, and neither is asked again from this parent.
    tools = [
        {"type": "function", "function": _function("search_policies", "Search the policies.")},
        {"type": "function", "function": _function("order_status", "Search the policies too.")},
        {"type": "function", "function": _function("get_weather", "Today's weather.")},
    ]
    examples = [
        _judged("t1", "search_policies", "order questions need order_status"),
        _judged("t2", "order_status", "the agent used order_status; policy questions need it"),
    ]
    asked: list[str] = []
    new = {"order_status": "Look up an order's status.", "search_policies": "Store policies."}

    def reply(req: Any) -> str:
        prompt = "\n".join(str(m.content or "") for m in req.messages)
        name = prompt.split("definition of the tool `", 1)[1].split("`", 1)[0]
        asked.append(name)
        return json.dumps({"tool": _function(name, new[name]), "rationale": f"fix {name}"})

    register_mock("acceptance_tool_pair", reply)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp) / "baseline"
            proposal = run_tools_strategy(folder, tools, examples, "mock:acceptance_tool_pair", 0)
    finally:
        unregister_mock("acceptance_tool_pair")
    assert sorted(asked) == ["order_status", "search_policies"] and len(asked) == 2
    assert proposal.strategy == f"tools:{asked[0]}+{asked[1]}"
    described = {
        t["function"]["name"]: t["function"]["description"] for t in proposal.definition.tools
    }
    assert described == {**new, "get_weather": "Today's weather."}
    assert proposal.mutation["descriptions"] == new
    assert rewritten_tools([proposal.strategy, "toolset:-x"]) == set(new)
