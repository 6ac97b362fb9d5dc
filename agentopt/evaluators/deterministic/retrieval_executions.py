"""Reading an agent's retrieval executions out of its diagnostics or its tool calls (M365
RetrievalQuery and RetrievalResult).

Copilot reports retrievals as `CapabilityExecution`s, which runevals writes to
`diagnostics.retrieval_executions`; when the agent's protocol (or a captured document) reports
that block, those are the executions (`executions_from_diagnostics`). Otherwise — agentopt
runs any agent — a retrieval execution is a TOOL CALL whose name names the capability:
`OneDriveAndSharePoint` matches the tools `OneDriveAndSharePoint`, `search_OneDriveAndSharePoint`
and `onedrive_and_sharepoint_search` (case, `_`, `-` and spaces ignored; the capability may be
part of the tool name). From each call we read the query the agent sent and the hits the tool
returned, in the shapes search tools commonly use: a list, `{"results"|"hits"|"value"|
"documents": [...]}`, Microsoft Graph search's `value[].hitsContainers[].hits[]`, JSON text of
any of these, or plain text (one hit).
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agentopt.contracts.diagnostics import RETRIEVAL
from agentopt.contracts.transcript import ToolCallRecord

QUERY_KEYS = ("queryString", "query", "q", "search", "searchQuery", "queries")
"""Argument names holding the query, in order of preference (case-insensitive)."""
HIT_LIST_KEYS = ("results", "hits", "value", "documents", "items")
"""Keys of a tool result dict that hold the list of hits (case-insensitive)."""
TEXT_KEYS = ("extract", "content", "text", "snippet", "summary")
"""Keys of a hit holding its text, in order of preference (case-insensitive)."""
URL_KEYS = ("webUrl", "url")
_DASHES = dict.fromkeys(map(ord, "\u2010\u2011\u2012\u2013\u2014\u2015\u2212"), "-")
_QUOTES = {ord("\u2018"): "'", ord("\u2019"): "'", ord("\u201c"): '"', ord("\u201d"): '"'}
_SPACE = re.compile(r"\s+")
_NOT_ALNUM = re.compile(r"[^0-9a-z]+")


@dataclass(frozen=True)
class Hit:
    """One retrieved item.

    Attributes:
        rank: 1-based rank within its execution (the hit's own `rank` when it has one).
        text: the extract the assertions are checked against.
        url: the item's `webUrl`/`url`, when the tool gave one.
    """

    rank: int
    text: str
    url: str | None = None


@dataclass(frozen=True)
class Execution:
    """One call of a retrieval tool.

    Attributes:
        tool: the tool's name as the agent called it.
        queries: the query strings it sent (usually one; none when it sent no text).
        hits: what it returned, in rank order (empty when the call failed).
        error: the tool's error, when the call failed.
    """

    tool: str
    queries: tuple[str, ...]
    hits: tuple[Hit, ...]
    error: str | None = None

    def summary(self) -> dict[str, Any]:
        """A small record for result details (no hit texts: those can be large)."""
        out: dict[str, Any] = {"tool": self.tool, "queries": list(self.queries)}
        out["hits"] = len(self.hits)
        if self.error:
            out["error"] = self.error
        return out


def normalize(text: str) -> str:
    """Text for case-insensitive, whitespace-insensitive containment: NFKC, typographic dashes
    and quotes folded to ASCII, case-folded, runs of white space collapsed."""
    folded = unicodedata.normalize("NFKC", text).translate(_DASHES).translate(_QUOTES)
    return _SPACE.sub(" ", folded.casefold()).strip()


def contains(text: str, term: str) -> bool:
    """True when `term` occurs in `text` (both normalized)."""
    needle = normalize(term)
    return bool(needle) and needle in normalize(text)


def matches_capability(tool_name: str, capability: str) -> bool:
    """The tool is an execution of the capability: equal or containing it, ignoring case and
    separators (`search_OneDriveAndSharePoint`, `onedrive-and-sharepoint`)."""
    tool = _NOT_ALNUM.sub("", tool_name.casefold())
    cap = _NOT_ALNUM.sub("", capability.casefold())
    return bool(cap) and cap in tool


def find_executions(calls: Iterable[ToolCallRecord], capability: str) -> list[Execution]:
    """The calls of tools matching `capability`, in call order."""
    return [
        Execution(
            tool=call.name,
            queries=tuple(query_strings(call.arguments)),
            hits=() if call.error else tuple(read_hits(call.result)),
            error=call.error,
        )
        for call in calls
        if matches_capability(call.name, capability)
    ]


FAILED_STATUSES = frozenset({"failed", "failure", "error"})
"""A diagnostics execution `status` that says the retrieval did not run (compared folded)."""


def executions_from_diagnostics(
    diagnostics: Mapping[str, Any] | None, capability: str
) -> list[Execution] | None:
    """The capability's executions a `diagnostics.retrieval_executions` block reports (the
    capability named alike, ignoring case and separators); None when the block is absent, so
    the tool calls are read instead."""
    listed = (diagnostics or {}).get(RETRIEVAL)
    if not isinstance(listed, list):
        return None
    wanted = _NOT_ALNUM.sub("", capability.casefold())
    out: list[Execution] = []
    for raw in listed:
        name = raw.get("capability") if isinstance(raw, Mapping) else None
        if not isinstance(name, str) or _NOT_ALNUM.sub("", name.casefold()) != wanted:
            continue
        queries = [q.get("queryString") for q in raw.get("queries") or [] if isinstance(q, Mapping)]
        hits = [
            _diagnostic_hit(h, position)
            for position, h in enumerate(raw.get("retrievalHits") or [], start=1)
            if isinstance(h, Mapping)
        ]
        status = raw.get("status")
        failed = isinstance(status, str) and status.casefold() in FAILED_STATUSES
        out.append(
            Execution(
                tool=name,
                queries=tuple(q for q in queries if isinstance(q, str) and q.strip()),
                hits=() if failed else tuple(hits),
                error=f"the execution's status is {status!r}" if failed else None,
            )
        )
    return out


def sample_executions(
    diagnostics: Mapping[str, Any] | None,
    calls: Iterable[ToolCallRecord],
    capability: str,
    *,
    calls_known: bool = True,
) -> tuple[list[Execution] | None, str]:
    """The executions the retrieval evaluators check, and where they were read: the
    diagnostics the agent's protocol (or the captured document) reported, else its tool
    calls. (None, "none") when there is no evidence at all: answers replayed from a document
    that captured no `retrieval_executions`."""
    reported = executions_from_diagnostics(diagnostics, capability)
    if reported is not None:
        return reported, "diagnostics"
    if not calls_known:
        return None, "none"
    return find_executions(calls, capability), "tool_calls"


NO_EVIDENCE = (
    "the captured turn reports no diagnostics.retrieval_executions, so whether the agent "
    "searched is unknown"
)


def execution_diagnostics(executions: Sequence[Execution], capability: str) -> list[dict[str, Any]]:
    """Executions read from tool calls, as `diagnostics.retrieval_executions` entries for an
    output document (what runevals writes from Developer Info)."""
    return [
        {
            "capability": capability,
            "status": "failure" if e.error else "success",
            "totalResultCount": len(e.hits),
            "queries": [{"queryString": q, "filterExpression": None} for q in e.queries],
            "retrievalHits": [
                {"rank": h.rank, "webUrl": h.url, "extracts": [{"text": h.text}]} for h in e.hits
            ],
        }
        for e in executions
    ]


def _diagnostic_hit(raw: Mapping[str, Any], position: int) -> Hit:
    extracts = raw.get("extracts")
    texts = [e.get("text") for e in extracts or [] if isinstance(e, Mapping)]
    text = "\n".join(t for t in texts if isinstance(t, str) and t.strip())
    rank = raw.get("rank")
    if isinstance(rank, bool) or not isinstance(rank, int) or rank < 1:
        rank = position
    url = raw.get("webUrl")
    return Hit(rank=rank, text=text, url=url if isinstance(url, str) and url else None)


def query_strings(arguments: Mapping[str, Any]) -> list[str]:
    """The queries a call sent: the first argument named like a query (a string, a list of
    strings, or a list of `{queryString}` objects), else the first string argument."""
    if not isinstance(arguments, Mapping):
        return []
    for key in QUERY_KEYS:
        value = _get(arguments, key)
        found = _strings(value)
        if found:
            return found
    for value in arguments.values():
        if isinstance(value, str) and value.strip():
            return [value]
    return []


def read_hits(result: Any) -> list[Hit]:
    """The hits of one tool result, ranked."""
    hits: list[Hit] = []
    for position, item in enumerate(_hit_items(result), start=1):
        hit = _hit(item, position)
        if hit is not None:
            hits.append(hit)
    return hits


def within_rank(executions: Sequence[Execution], max_rank: int) -> list[Hit]:
    """Every hit of every execution ranked `max_rank` or better, best rank first."""
    kept = [h for e in executions for h in e.hits if h.rank <= max_rank]
    return sorted(kept, key=lambda h: h.rank)


def _get(mapping: Mapping[str, Any], key: str) -> Any:
    if key in mapping:
        return mapping[key]
    lowered = key.casefold()
    for k, v in mapping.items():
        if isinstance(k, str) and k.casefold() == lowered:
            return v
    return None


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value] if value.strip() else []
    if isinstance(value, list):
        out: list[str] = []
        for v in value:
            if isinstance(v, Mapping):
                v = _get(v, "queryString") or _get(v, "query")
            if isinstance(v, str) and v.strip():
                out.append(v)
        return out
    return []


def _hit_items(result: Any) -> list[Any]:
    value = result
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return []
        if text[0] in "[{":
            try:
                value = json.loads(text)
            except json.JSONDecodeError:
                return [value]
        else:
            return [value]
    if isinstance(value, list):
        return _flatten_graph(value)
    if isinstance(value, Mapping):
        if isinstance(_get(value, "hitsContainers"), list):
            return _flatten_graph([value])
        for key in HIT_LIST_KEYS:
            listed = _get(value, key)
            if isinstance(listed, list):
                return _flatten_graph(listed)
        return [value]  # one document
    if value is None or isinstance(value, bool):
        return []
    return [str(value)]


def _flatten_graph(items: list[Any]) -> list[Any]:
    """Microsoft Graph search nests hits: value[].hitsContainers[].hits[]."""
    out: list[Any] = []
    for item in items:
        containers = _get(item, "hitsContainers") if isinstance(item, Mapping) else None
        if isinstance(containers, list):
            for container in containers:
                hits = _get(container, "hits") if isinstance(container, Mapping) else None
                if isinstance(hits, list):
                    out.extend(hits)
        else:
            out.append(item)
    return out


def _hit(item: Any, position: int) -> Hit | None:
    if isinstance(item, str):
        return Hit(rank=position, text=item) if item.strip() else None
    if not isinstance(item, Mapping):
        return None if item is None else Hit(rank=position, text=json.dumps(item, default=str))
    rank = _get(item, "rank")
    if isinstance(rank, bool) or not isinstance(rank, int) or rank < 1:
        rank = position
    return Hit(rank=rank, text=_hit_text(item), url=_hit_url(item))


def _hit_text(item: Mapping[str, Any]) -> str:
    extracts = _get(item, "extracts")
    if isinstance(extracts, list):
        parts = [e if isinstance(e, str) else _get(e, "text") for e in extracts if e]
        joined = "\n".join(p for p in parts if isinstance(p, str))
        if joined.strip():
            return joined
    for key in TEXT_KEYS:
        value = _get(item, key)
        if isinstance(value, Mapping):  # {"content": {"text": "..."}}
            value = _get(value, "text")
        if isinstance(value, str) and value.strip():
            return value
    return json.dumps(item, ensure_ascii=False, default=str)


def _hit_url(item: Mapping[str, Any]) -> str | None:
    for holder in (item, _get(item, "resource")):
        if isinstance(holder, Mapping):
            for key in URL_KEYS:
                value = _get(holder, key)
                if isinstance(value, str) and value:
                    return value
    return None
