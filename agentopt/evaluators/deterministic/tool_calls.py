"""builtin.tool_call_selection / builtin.tool_call_execution (M365 `ToolCallSelection` /
`ToolCallExecution`, schema 1.11): did the agent pick the expected tools, and did they run?

Both read the turn's tool-call evidence in the schema's `diagnostics.tool_calls` shape: what
the agent's protocol or the captured document reported, else what agentopt saw the agent do
(`tool_evidence`). An identity is `{plugin_name, function_name}`, compared trimmed and
case-insensitively; the plugin of an agent's own function tools is the agent's name, of an
MCP tool its server's name.

As the schema describes them:
- Selection: the expected identities are de-duplicated — it asserts which tools were
  selected, not how often; with `allow_additional_calls: false` (default true) any other
  selected tool fails it.
- Execution: repeating an identity requires that many successful (2xx) executions.
- Evidence `null` means unavailable, `[]` is an authoritative "none". An entry whose name is
  null was observed but unreadable: the verdict is worked out with it counting for and against
  the expectations, and when the two differ the result is the `toolCallEvidenceIndeterminate`
  error — never a guess. Score 1.0 on pass, 0.0 on fail; the threshold is pinned at 1.0.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from agentopt.contracts.diagnostics import (
    EVIDENCE_ERROR,
    OK_STATUSES,
    TOOL_CALLS,
    tool_call_evidence,
)
from agentopt.contracts.eval_result import EvalResult
from agentopt.evaluators.base import EvalSample, option_error, pass_fail
from agentopt.evaluators.deterministic.retrieval_options import PINNED_THRESHOLD, PinnedCheck
from agentopt.evaluators.options import EvaluatorOptions
from agentopt.evaluators.registry import evaluator

INDETERMINATE = "toolCallEvidenceIndeterminate"


@dataclass(frozen=True)
class Identity:
    """A tool identity; None = observed but unreadable (evidence only)."""

    plugin: str | None
    function: str | None

    @classmethod
    def of(cls, raw: Mapping[str, Any]) -> Identity:
        return cls(_fold(raw.get("plugin_name")), _fold(raw.get("function_name")))

    @property
    def known(self) -> bool:
        return self.plugin is not None and self.function is not None

    def could_be(self, other: Identity) -> bool:
        return self.plugin in (None, other.plugin) and self.function in (None, other.function)

    def label(self) -> str:
        return f"{self.plugin or '?'}/{self.function or '?'}"


@dataclass(frozen=True)
class Expected:
    identity: Identity
    label: str


def tool_evidence(sample: EvalSample) -> dict[str, Any] | None:
    """The turn's `tool_calls` evidence: reported (diagnostics), else derived from the calls
    agentopt saw; None when neither exists (captured answers without diagnostics)."""
    reported = (sample.diagnostics or {}).get(TOOL_CALLS)
    if isinstance(reported, dict):
        return reported
    if not sample.tool_calls_known:
        return None
    return tool_call_evidence(sample.tool_calls, sample.agent_name or None)


def _fold(value: Any) -> str | None:
    return value.strip().casefold() if isinstance(value, str) and value.strip() else None


def expected_calls(evaluator_name: str, options: Mapping[str, Any]) -> list[Expected]:
    """`calls`: a non-empty list of `{id?, tool: {plugin_name, function_name}}`."""
    calls = options.get("calls")
    if not isinstance(calls, list) or not calls:
        raise option_error(
            evaluator_name,
            "calls",
            "a non-empty list of {tool: {plugin_name, function_name}}",
            calls,
        )
    out: list[Expected] = []
    for i, raw in enumerate(calls):
        tool = raw.get("tool") if isinstance(raw, Mapping) else None
        names = [
            tool.get(k) if isinstance(tool, Mapping) else None
            for k in ("plugin_name", "function_name")
        ]
        if not all(isinstance(n, str) and n.strip() for n in names):
            raise option_error(
                evaluator_name, f"calls[{i}].tool", "{plugin_name, function_name} (both text)", tool
            )
        ident = Identity(_fold(names[0]), _fold(names[1]))
        label = raw.get("id") if isinstance(raw.get("id"), str) and raw["id"] else None
        out.append(Expected(ident, label or f"{names[0]}/{names[1]}"))
    return out


Entries = list[tuple[Identity, Mapping[str, Any]]]
"""The turn's evidence entries, each with the identity read from it."""
Options = Mapping[str, Any]
"""The evaluator's options for this sample."""
Outcome = tuple[bool | None, str]
"""Pass, fail or None (the evidence cannot decide), and why."""


def _matches(slots: list[Identity], entries: list[Identity]) -> bool:
    """Whether each slot can take a distinct entry that could be it (bipartite matching)."""
    owner: dict[int, int] = {}

    def place(slot: int, seen: set[int]) -> bool:
        for e, entry in enumerate(entries):
            if e in seen or not entry.could_be(slots[slot]):
                continue
            seen.add(e)
            if e not in owner or place(owner[e], seen):
                owner[e] = slot
                return True
        return False

    return all(place(s, set()) for s in range(len(slots)))


class _ToolCallEvaluator(PinnedCheck):
    evidence_key = ""

    def check_options(self, options: dict[str, Any]) -> None:
        expected_calls(self.name, options)

    async def evaluate(self, sample: EvalSample) -> EvalResult:
        options = self.options_for(sample)
        expected = expected_calls(self.name, options)
        evidence = tool_evidence(sample)
        listed = (evidence or {}).get(self.evidence_key)
        if not isinstance(listed, list):
            why = (evidence or {}).get("evidence_error")
            detail = why if why == EVIDENCE_ERROR else "no tool-call evidence for this turn"
            return EvalResult.failed_to_evaluate(
                self.name, INDETERMINATE, f"{detail} ({self.evidence_key} unavailable)"
            )
        entries = [(Identity.of(e), e) for e in listed if isinstance(e, Mapping)]
        outcome, reason = self.judge(expected, entries, options)
        details = {"expected": [e.label for e in expected], self.evidence_key: listed}
        if outcome is None:
            return EvalResult.failed_to_evaluate(self.name, INDETERMINATE, reason, details=details)
        return pass_fail(
            self.name,
            outcome,
            reason=reason,
            details={**details, "result": "pass" if outcome else "fail"},
            threshold=PINNED_THRESHOLD,
        )

    def judge(self, expected: list[Expected], entries: Entries, options: Options) -> Outcome:
        raise NotImplementedError  # pragma: no cover - abstract


class ToolCallOptions(EvaluatorOptions):
    calls: Any = None
    """The expected calls, `[{id?, tool: {plugin_name, function_name}}]` (checked when built)."""


class ToolCallSelectionOptions(ToolCallOptions):
    allow_additional_calls: bool = True


@evaluator(
    "builtin.tool_call_selection",
    m365=True,
    description="The agent selected every expected tool {plugin_name, function_name} (and, "
    "with allow_additional_calls: false, no other).",
    needs=("tool_calls",),
    options=ToolCallSelectionOptions,
)
class ToolCallSelection(_ToolCallEvaluator):
    """Which tools were selected, not how often."""

    evidence_key = "selected_functions"

    def judge(self, expected: list[Expected], entries: Entries, options: Options) -> Outcome:
        allow = options.get("allow_additional_calls", True)
        if not isinstance(allow, bool):
            raise option_error(self.name, "allow_additional_calls", "true or false", allow)
        wanted = list(dict.fromkeys(e.identity for e in expected))
        labels = {e.identity: e.label for e in reversed(expected)}
        seen = [ident for ident, _ in entries]
        missing = [w for w in wanted if w not in seen]  # an exact, fully known entry
        extra = [s for s in seen if not any(s.could_be(w) for w in wanted)]
        unsure = [s for s in seen if not s.known]
        worst = not missing and (allow or all(s.known and s in wanted for s in seen))
        best = _matches(wanted, seen) and (allow or not extra)
        if worst:
            return True, "Selected every expected tool: " + ", ".join(
                labels[w] for w in wanted
            ) + "."
        if not best:
            parts = []
            if missing:
                parts.append("not selected: " + ", ".join(labels[w] for w in missing))
            if extra and not allow:
                parts.append(
                    "selected but not expected (allow_additional_calls is false): "
                    + ", ".join(s.label() for s in extra)
                )
            text = "; ".join(parts)
            return False, text[:1].upper() + text[1:] + "."
        return None, (
            f"{len(unsure)} selected tool(s) with an unreadable name ("
            + ", ".join(s.label() for s in unsure)
            + ") could decide whether "
            + ", ".join(labels[w] for w in missing or wanted)
            + " was selected"
        )


@evaluator(
    "builtin.tool_call_execution",
    m365=True,
    description="Each expected tool {plugin_name, function_name} executed successfully (2xx), "
    "as many times as it is listed.",
    needs=("tool_calls",),
    options=ToolCallOptions,
)
class ToolCallExecution(_ToolCallEvaluator):
    """Successful executions, counted."""

    evidence_key = "executions"

    def judge(self, expected: list[Expected], entries: Entries, options: Options) -> Outcome:
        required = Counter(e.identity for e in expected)
        labels = {e.identity: e.label for e in reversed(expected)}
        status = [raw.get("response_status") for _, raw in entries]
        ok = [isinstance(s, int) and not isinstance(s, bool) and s in OK_STATUSES for s in status]
        maybe = [ok[i] or status[i] is None for i in range(len(entries))]
        idents = [ident for ident, _ in entries]
        counted = Counter(idents[i] for i in range(len(entries)) if ok[i] and idents[i].known)
        short = {w: n for w, n in required.items() if counted[w] < n}
        slots = [w for w, n in required.items() for _ in range(n)]
        hopeful = [idents[i] for i in range(len(entries)) if maybe[i]]
        tally = ", ".join(f"{labels[w]} {min(counted[w], n)} of {n}" for w, n in required.items())
        if not short:
            return True, f"Every expected execution succeeded ({tally})."
        if not _matches(slots, hopeful):
            failed = [
                f"{idents[i].label()} HTTP {status[i]}"
                for i in range(len(entries))
                if not maybe[i] and any(idents[i].could_be(w) for w in short)
            ]
            why = f"; failed: {', '.join(failed)}" if failed else ""
            return False, f"Successful executions short of the expected ({tally}){why}."
        return None, (
            f"executions with an unreadable name or status could make up the missing ones ({tally})"
        )
