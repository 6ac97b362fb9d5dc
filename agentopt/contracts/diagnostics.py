"""Diagnostics: the evidence beside an agent's answer, in the shape of the M365 output schema's
`Diagnostics` (1.6 `retrieval_executions`, 1.11 `tool_calls`).

runevals reads them from Copilot's Developer Info and writes them next to `scores`, so that
`--evaluate-only` can replay the retrieval and tool-call evaluators without the agent. agentopt
reads the same block from a captured document, from a protocol that returns one (a command's
JSON, an endpoint's response body), and derives it from the tool calls of agents whose tools
it ran itself. `read_diagnostics` keeps exactly what the schema allows, so an output document
carrying them always validates.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from agentopt.contracts.transcript import ToolCallRecord

RETRIEVAL = "retrieval_executions"
TOOL_CALLS = "tool_calls"
EVIDENCE_ERROR = (
    "Multiple Developer Info artifacts were returned; no authoritative telemetry snapshot "
    "could be identified."
)
"""The one `evidence_error` text the 1.11 schema allows."""
OK_STATUSES = range(200, 300)
"""An execution whose `response_status` is 2xx succeeded."""
RAN_LOCALLY = frozenset({"mock", "python", "mcp", "skill"})
"""`ToolCallRecord.source` values of tools agentopt ran itself: they executed."""


def read_diagnostics(raw: Any) -> dict[str, Any] | None:
    """A protocol's diagnostics in the schema's shape: known keys with the right types only
    (an unusable entry is dropped, not guessed at); None when nothing usable is left."""
    if not isinstance(raw, Mapping):
        return None
    out: dict[str, Any] = {}
    executions = raw.get(RETRIEVAL)
    if isinstance(executions, list):
        out[RETRIEVAL] = [e for e in map(_execution, executions) if e is not None]
    tools = _tool_calls(raw.get(TOOL_CALLS))
    if tools is not None:
        out[TOOL_CALLS] = tools
    return out or None


def identity(plugin: Any, function: Any) -> dict[str, str | None]:
    """A `ToolCallDiagnosticIdentity`: a missing or unusable name is None (observed, unknown)."""
    return {"plugin_name": _name(plugin), "function_name": _name(function)}


def tool_call_evidence(calls: Sequence[ToolCallRecord], agent: str | None) -> dict[str, Any]:
    """The `tool_calls` evidence of the calls agentopt saw an agent make. Every call was
    selected; a call ran with 200 when its tool answered, 500 when the tool failed, 501 when
    nothing implements it; a refused call, or a remote call whose outcome the protocol did not
    return, did not run (it is no execution). The plugin of the agent's own tools is `agent`."""
    rows = [(call.plugin or agent, call.name, call_status(call)) for call in calls]
    return {
        "selected_functions": [identity(p, f) for p, f, _ in rows],
        "executions": [
            {**identity(p, f), "response_status": status}
            for p, f, status in rows
            if status is not None
        ],
    }


def call_status(call: ToolCallRecord) -> int | None:
    """The HTTP-like outcome of one call's execution (None: it did not run)."""
    if call.source == "refused":
        return None
    if call.source == "none":
        return 501
    if call.error:
        return 500
    if call.source in RAN_LOCALLY or call.result is not None:
        return 200
    return None


def merge_diagnostics(blocks: list[dict[str, Any] | None]) -> dict[str, Any] | None:
    """The diagnostics of several turns as one block (a conversation scored whole): their
    retrieval executions in turn order; their tool calls when every turn has that evidence."""
    present = [b for b in blocks if b]
    if not present:
        return None
    out: dict[str, Any] = {}
    if any(RETRIEVAL in b for b in present):
        out[RETRIEVAL] = [e for b in present for e in b.get(RETRIEVAL) or []]
    tools = [(b or {}).get(TOOL_CALLS) for b in blocks]
    if all(isinstance(t, dict) for t in tools):
        out[TOOL_CALLS] = {
            key: None
            if any(t[key] is None for t in tools if t)
            else [e for t in tools if t for e in t[key]]
            for key in ("selected_functions", "executions")
        }
    return out or None


def _name(value: Any) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _execution(raw: Any) -> dict[str, Any] | None:
    if not isinstance(raw, Mapping):
        return None
    out: dict[str, Any] = {
        "capability": _text(raw.get("capability")),
        "status": _text(raw.get("status")),
        "totalResultCount": _int(raw.get("totalResultCount")),
    }
    queries = raw.get("queries")
    if isinstance(queries, list):
        out["queries"] = [
            {
                "queryString": _text(q.get("queryString")),
                "filterExpression": _text(q.get("filterExpression")),
            }
            for q in queries
            if isinstance(q, Mapping)
        ]
    hits = raw.get("retrievalHits")
    if isinstance(hits, list):
        out["retrievalHits"] = [_hit(h) for h in hits if isinstance(h, Mapping)]
    return out


def _hit(raw: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"rank": _int(raw.get("rank")), "webUrl": _text(raw.get("webUrl"))}
    extracts = raw.get("extracts")
    if isinstance(extracts, list):
        out["extracts"] = [
            {"text": e["text"]} for e in extracts if isinstance(e, Mapping) and _text(e.get("text"))
        ]
    return out


def _tool_calls(raw: Any) -> dict[str, Any] | None:
    if not isinstance(raw, Mapping) or not {"selected_functions", "executions"} <= set(raw):
        return None
    selected = raw["selected_functions"]
    executions = raw["executions"]
    out: dict[str, Any] = {
        "selected_functions": (
            [
                identity(s.get("plugin_name"), s.get("function_name"))
                for s in selected
                if isinstance(s, Mapping)
            ]
            if isinstance(selected, list)
            else None
        ),
        "executions": (
            [
                {
                    **identity(e.get("plugin_name"), e.get("function_name")),
                    "response_status": _int(e.get("response_status")),
                }
                for e in executions
                if isinstance(e, Mapping)
            ]
            if isinstance(executions, list)
            else None
        ),
    }
    if raw.get("evidence_error") == EVIDENCE_ERROR:
        out["evidence_error"] = EVIDENCE_ERROR
    return out
