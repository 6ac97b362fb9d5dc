"""What one source of an agent definition says: inline azure.yaml service keys, a `config:`
block, or an agent.yaml (files.md §1).

Each source is read into a `KeyLayer` holding only the fields it really sets, so that
`azure_yaml.merge_layers` can layer them the way azd does (the definition from the first
source that has a `kind`, deployment settings from wherever they are) and warn only where two
sources disagree. Keys are read in both casings azd accepts: camelCase in azure.yaml,
snake_case in the older agent.yaml (`startupCommand`/`startup_command`,
`codeConfiguration.entryPoint`/`code_configuration.entry_point`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentopt.core.files import bounded
from agentopt.core.files.agent_definition import Skill
from agentopt.core.files.problems import Collector, KeyPath, describe
from agentopt.core.files.tools_json import check_tools
from agentopt.core.files.yaml_source import read_text

PROMPT_KINDS = ("prompt", "managed")
"""`managed` is what azd writes for a prompt agent whose model Foundry runs."""
HOSTED_KINDS = ("hosted", "workflow", "prompt-voice")
DEFINITION_FIELDS = ("name", "kind", "description", "model", "instructions", "tools")
DEPLOYMENT_FIELDS = (
    "startup_command",
    "port",
    "code_runtime",
    "code_entry_point",
    "protocols",
    "invocations_io",
)
_TEXT_SUFFIXES = (".md", ".markdown", ".txt")

SkillLookup = Callable[[Collector, Any, KeyPath], list[Skill]]


@dataclass
class KeyLayer:
    """The fields one source sets (absent = not set) and where it is, for messages."""

    source: str
    """How the target block and warnings name it: `azure.yaml (inline)`, `agent.yaml`, …"""
    fields: dict[str, Any] = field(default_factory=dict)
    locations: dict[str, str] = field(default_factory=dict)
    """Field → key path in its file, for conflict warnings."""


def has_kind(keys: Any) -> bool:
    """azd's marker of an agent definition: a non-empty string `kind`."""
    return isinstance(keys, dict) and isinstance(keys.get("kind"), str) and bool(keys["kind"])


def read_layer(
    c: Collector,
    keys: dict[str, Any],
    where: KeyPath,
    source: str,
    *,
    bases: list[Path],
    definition: bool,
    skills: SkillLookup | None = None,
    fallback: dict[str, Any] | None = None,
) -> KeyLayer:
    """Read one source. `definition=False` reads only the deployment settings (a `config:`
    block or service keys without `kind`); `fallback` holds keys of the enclosing document
    (agent.yaml's top level around its `template:`) that fill what the agent keys lack."""
    layer = KeyLayer(source)

    def put(name: str, value: Any, key: str) -> None:
        if value is not None and value != [] and value != "":
            layer.fields[name] = value
            layer.locations[name] = ".".join(str(p) for p in (*where, key))

    if definition:
        put("kind", _kind(c, keys.get("kind"), (*where, "kind")), "kind")
        name = keys.get("name")
        put("name", name.strip() if isinstance(name, str) and name.strip() else None, "name")
        desc = keys.get("description", (fallback or {}).get("description"))
        put("description", desc.strip() if isinstance(desc, str) else None, "description")
        put("model", model_name(keys) or model_name(fallback or {}), "model")
        put("instructions", instructions(c, keys.get("instructions"), where, bases), "instructions")
        put("tools", check_tools(c, (*where, "tools"), keys.get("tools")), "tools")
        put("temperature", _temperature(c, keys, where), "temperature")
        if skills is not None:
            put("skills", skills(c, keys.get("skills", keys.get("skill")), where), "skill")
    startup = keys.get("startupCommand", keys.get("startup_command"))
    put("startup_command", startup if isinstance(startup, str | list) else None, "startupCommand")
    port = keys.get("port")
    put("port", port if isinstance(port, int) and not isinstance(port, bool) else None, "port")
    code = keys.get("codeConfiguration", keys.get("code_configuration"))
    if isinstance(code, dict):
        runtime = code.get("runtime")
        entry = code.get("entryPoint", code.get("entry_point"))
        put("code_runtime", runtime if isinstance(runtime, str) else None, "codeConfiguration")
        put("code_entry_point", entry if isinstance(entry, str) else None, "codeConfiguration")
    stack = keys.get("runtime")
    if isinstance(stack, dict) and isinstance(stack.get("stack"), str):
        put("code_runtime", layer.fields.get("code_runtime") or stack["stack"], "runtime")
    put("protocols", protocols(keys), "protocols")
    put("invocations_io", invocations_io(keys), "policies")
    return layer


def protocols(keys: dict[str, Any]) -> list[str]:
    """The declared hosted protocols, as azd reads them (`ContainerAgent.Protocols`:
    `[{protocol, version}]`; a bare name list and a single `protocol:` are read too).
    `activity_protocol` is the pre-rename name of `activity` (azd `IsActivityProtocolName`)."""
    raw = keys.get("protocols", keys.get("protocol"))
    items = raw if isinstance(raw, list) else [raw] if raw is not None else []
    names: list[str] = []
    for item in items:
        name = item.get("protocol") if isinstance(item, dict) else item
        if isinstance(name, str) and name.strip():
            text = name.strip().lower()
            text = "activity" if text == "activity_protocol" else text
            if text not in names:
                names.append(text)
    return names


def invocations_io(keys: dict[str, Any]) -> dict[str, Any] | None:
    """A `rai_policy`'s `invocationsModeration` (azd `InvocationsModeration`, camelCase in
    azure.yaml, snake_case in agent.yaml): the JSON paths of an invocations agent's request
    and answer text, which is exactly what agentopt needs to play a task through it."""
    for policy in keys.get("policies") or []:
        if not isinstance(policy, dict):
            continue
        io = policy.get("invocationsModeration", policy.get("invocations_moderation"))
        if not isinstance(io, dict):
            continue
        selectors = []
        for sel in io.get("streamSelectors", io.get("stream_selectors")) or []:
            if isinstance(sel, dict):
                event = sel.get("eventType", sel.get("event_type"))
                field_ = sel.get("textField", sel.get("text_field"))
                if isinstance(event, str):
                    selectors.append({"event_type": event, "text_field": field_ or "text"})
        kind = io.get("inputContentType", io.get("input_content_type"))
        return {
            "input_content_type": kind if kind in ("json", "text") else "json",
            "input_paths": _strings(io.get("inputPaths", io.get("input_paths"))),
            "output_paths": _strings(io.get("outputPaths", io.get("output_paths"))),
            "stream_selectors": selectors,
        }
    return None


def _strings(raw: Any) -> list[str]:
    return [s for s in raw if isinstance(s, str)] if isinstance(raw, list) else []


def deployment_model(keys: dict[str, Any]) -> str | None:
    """The first model deployment's name (`deployments: [{name: gpt-4o-mini, ...}]`): what a
    prompt agent of the pre-split azd shape runs on when its definition names no model."""
    for item in keys.get("deployments") or []:
        if isinstance(item, dict) and isinstance(item.get("name"), str) and item["name"].strip():
            return str(item["name"]).strip()
    return None


def model_name(keys: dict[str, Any]) -> str | None:
    """`model: NAME`, `model: {id|name|deployment: NAME}`, or a `kind: model` resource."""
    model = keys.get("model")
    if isinstance(model, str) and model.strip():
        return model.strip()
    if isinstance(model, dict):
        for key in ("id", "name", "deployment"):
            if isinstance(model.get(key), str):
                return str(model[key])
    for res in keys.get("resources") or []:
        if isinstance(res, dict) and res.get("kind") == "model" and isinstance(res.get("id"), str):
            return str(res["id"])
    return None


def instructions(c: Collector, raw: Any, where: KeyPath, bases: list[Path]) -> str | None:
    """Inline text, or a path (one line ending in .md/.txt) read relative to `bases`."""
    path = (*where, "instructions")
    if raw is None:
        return None
    if not isinstance(raw, str):
        c.error(path, f"expected text or a path to a .md file, found {describe(raw)}")
        return None
    text = raw.strip()
    if "\n" in text or not text.lower().endswith(_TEXT_SUFFIXES):
        return raw.rstrip() or None
    for base in bases:
        candidate = base / text
        if bounded.is_file(candidate):
            return read_text(candidate, kind="text").rstrip()
    c.error(path, f'expected the instructions file "{text}", found nothing (looked in {bases[0]})')
    return None


def _kind(c: Collector, raw: Any, path: KeyPath) -> str:
    kind = raw or "prompt"
    if kind in PROMPT_KINDS:
        return "prompt"
    if kind in HOSTED_KINDS:
        return "hosted"
    c.error(
        path,
        f"expected prompt, managed, hosted, workflow or prompt-voice, found {describe(kind)}",
    )
    return "prompt"


def _temperature(c: Collector, keys: dict[str, Any], where: KeyPath) -> float | None:
    temperature = keys.get("temperature")
    if temperature is None and isinstance(keys.get("model"), dict):
        temperature = (keys["model"].get("options") or {}).get("temperature")
    if temperature is None:
        return None
    if isinstance(temperature, bool) or not isinstance(temperature, int | float):
        c.error((*where, "temperature"), f"expected a number 0–2, found {describe(temperature)}")
        return None
    return float(temperature)
