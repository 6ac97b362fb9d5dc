"""builtin.retrieval_query (M365 `RetrievalQuery`): did the agent search with the right query?

Among the agent's executions of the capability (its reported diagnostics, else its tool calls:
see `retrieval_executions`), the
queries containing `selector` are the matched queries. Every `includes` term must occur in some
matched query and no `excludes` term in any (case- and whitespace-insensitive). Pass/fail, with
a diagnostic code saying which check failed, so a failing run tells the optimizer what to fix
in the agent's search behaviour. The codes are the M365 schema's (`RETRIEVAL_CODES` of
`reports/m365_output.py`, which checks them when it writes an output document).
"""

from __future__ import annotations

from typing import Any

from agentopt.contracts.eval_result import EvalResult
from agentopt.evaluators.base import EvalSample, pass_fail
from agentopt.evaluators.deterministic.retrieval_executions import Execution, contains
from agentopt.evaluators.deterministic.retrieval_options import (
    PINNED_THRESHOLD,
    QueryOptions,
    RetrievalCheck,
    RetrievalQueryOptions,
    query_options,
)
from agentopt.evaluators.registry import evaluator


def _quoted(values: list[str] | tuple[str, ...]) -> str:
    return ", ".join(f"'{v}'" for v in values)


@evaluator(
    "builtin.retrieval_query",
    m365=True,
    description="The agent's search query for a capability contains the required terms "
    "(capability, selector, includes, excludes).",
    needs=("tool_calls",),
    options=RetrievalQueryOptions,
)
class RetrievalQuery(RetrievalCheck):
    """Score 1.0 when every configured check passes, else 0.0; the threshold is pinned at 1.0."""

    def check_options(self, options: dict[str, Any]) -> None:
        query_options(self.name, options)

    async def evaluate(self, sample: EvalSample) -> EvalResult:
        opts = query_options(self.name, self.options_for(sample))
        evidence = self.executions(sample, opts.capability)
        if isinstance(evidence, EvalResult):
            return evidence
        executions, source = evidence
        queries = [q for e in executions for q in e.queries]
        matched = [q for q in queries if contains(q, opts.selector)]
        missing = [t for t in opts.includes if not any(contains(q, t) for q in matched)]
        found = [t for t in opts.excludes if any(contains(q, t) for q in matched)]
        if not executions:
            code = "retrieval_failure"
        elif not matched:
            code = "no_matching_query"
        elif missing and found:
            code = "mixed_term_failure"
        elif missing:
            code = "required_terms_missing"
        elif found:
            code = "excluded_terms_found"
        else:
            code = "pass"
        ok = code == "pass"
        details: dict[str, Any] = {
            "diagnostic_code": code,
            "result": "pass" if ok else "fail",
            "matched_queries": matched,
            "includes_missing": missing,
            "excludes_found": found,
            "capability": opts.capability,
            "selector": opts.selector,
            "executions": [e.summary() for e in executions],
            "source": source,
        }
        return pass_fail(
            self.name,
            ok,
            reason=_reason(
                code, opts, executions, queries, matched, missing, found, sample, source
            ),
            details=details,
            threshold=PINNED_THRESHOLD,
        )


def _reason(
    code: str,
    opts: QueryOptions,
    executions: list[Execution],
    queries: list[str],
    matched: list[str],
    missing: list[str],
    found: list[str],
    sample: EvalSample,
    source: str,
) -> str:
    cap = opts.capability
    if code == "retrieval_failure" and source == "diagnostics":
        listed = (sample.diagnostics or {}).get("retrieval_executions") or []
        names = sorted({str(e.get("capability")) for e in listed if isinstance(e, dict)})
        ran = f"executions reported: {', '.join(names)}" if names else "none was reported"
        return f"The agent's diagnostics show no {cap} retrieval ({ran})."
    if code == "retrieval_failure":
        called = sorted({c.name for c in sample.tool_calls})
        tools = f"tools called: {', '.join(called)}" if called else "no tool was called"
        return f"The agent made no {cap} retrieval (no call to a tool named like it; {tools})."
    if code == "no_matching_query":
        if not queries:
            return f"The {len(executions)} {cap} call(s) sent no query text."
        return (
            f"None of the {len(queries)} {cap} queries contains the selector "
            f"'{opts.selector}': {_quoted(queries)}."
        )
    parts = []
    if missing:
        parts.append(f"required terms missing from the matched queries: {_quoted(missing)}")
    if found:
        parts.append(f"excluded terms found in them: {_quoted(found)}")
    if parts:
        return f"Matched queries {_quoted(matched)}: " + "; ".join(parts) + "."
    return (
        f"Query {_quoted(matched)} matches the selector '{opts.selector}', "
        "contains every required term and no excluded one."
    )
