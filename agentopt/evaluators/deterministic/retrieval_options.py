"""Options of the retrieval evaluators, checked when the evaluator is built.

They follow the official M365 schema (`RetrievalQueryOptions`, `RetrievalResultOptions`): the
same keys, the threshold pinned at 1.0, no `webUrl` in expected items. M365 documents are
already schema-checked when loaded; these checks give eval.yaml and `--evaluator` users the same
rules, as a ConfigError naming the evaluator and the option — a typo in an assertion must not
silently assert nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from agentopt.contracts.eval_result import EvalResult
from agentopt.core.errors import ConfigError, Problem
from agentopt.evaluators.base import EvalSample, EvaluatorBase, missing_input
from agentopt.evaluators.deterministic.retrieval_executions import (
    NO_EVIDENCE,
    Execution,
    sample_executions,
)
from agentopt.evaluators.options import EvaluatorOptions

PINNED_THRESHOLD = 1.0
DEFAULT_MAX_RANK = 10
EXTRACT_KEY = "retrievalExtract_contains"


@dataclass(frozen=True)
class QueryOptions:
    """RetrievalQuery: which executions, which query, which terms."""

    capability: str
    selector: str
    includes: tuple[str, ...] = ()
    excludes: tuple[str, ...] = ()


@dataclass(frozen=True)
class ResultOptions:
    """RetrievalResult: which executions, how deep, what must be found."""

    capability: str
    max_rank: int = DEFAULT_MAX_RANK
    min_expected_count: int | None = None
    expected_items: tuple[str, ...] = ()
    model: str | None = None
    """Judge model for the entailment fallback (an agentopt extension; default: eval_model)."""


def _error(evaluator: str, key: str, message: str) -> ConfigError:
    return ConfigError(problems=[Problem("", f"{evaluator}.{key}", message)])


class RetrievalQueryOptions(EvaluatorOptions):
    """The keys RetrievalQuery accepts (values checked by `query_options`)."""

    capability: Any = None
    selector: Any = None
    includes: Any = None
    excludes: Any = None


class RetrievalResultOptions(EvaluatorOptions):
    """The keys RetrievalResult accepts (values checked by `result_options`)."""

    capability: Any = None
    max_rank: Any = None
    min_expected_count: Any = None
    expected_items: Any = None
    model: Any = None


def pinned_threshold(evaluator: str, options: Mapping[str, Any]) -> float:
    """The threshold is fixed at 1.0 (every configured check must pass); writing 1 is allowed,
    any other value is refused rather than silently ignored."""
    value = options.get("threshold", PINNED_THRESHOLD)
    if isinstance(value, bool) or not isinstance(value, int | float) or value != PINNED_THRESHOLD:
        raise _error(
            evaluator,
            "threshold",
            f"the threshold of this evaluator is pinned at 1.0 (every check must pass), found "
            f"{value!r}; remove the option",
        )
    return PINNED_THRESHOLD


class PinnedCheck(EvaluatorBase):
    """An evaluator whose every configured check must pass: pass or fail, the threshold
    pinned at 1.0 (`pinned_threshold`). The tool-call and retrieval evaluators."""

    default_threshold = PINNED_THRESHOLD

    def _threshold(self, options: dict[str, Any]) -> float:
        return pinned_threshold(self.name, options)


class RetrievalCheck(PinnedCheck):
    """RetrievalQuery and RetrievalResult: both check the executions of one capability."""

    def executions(
        self, sample: EvalSample, capability: str
    ) -> tuple[list[Execution], str] | EvalResult:
        """The sample's executions of `capability` and where they were read (see
        `sample_executions`), or the missingInput error when there is no evidence at all."""
        executions, source = sample_executions(
            sample.diagnostics,
            sample.tool_calls,
            capability,
            calls_known=sample.tool_calls_known,
        )
        if executions is None:
            return missing_input(self.name, f"retrieval evidence: {NO_EVIDENCE}")
        return executions, source


def _text(evaluator: str, options: Mapping[str, Any], key: str, what: str) -> str:
    value = options.get(key)
    if not isinstance(value, str) or not value.strip():
        found = "nothing" if key not in options else repr(value)
        raise _error(evaluator, key, f"expected {what}, found {found}")
    return value


def _terms(evaluator: str, options: Mapping[str, Any], key: str) -> tuple[str, ...]:
    value = options.get(key)
    if value is None:
        return ()
    if not isinstance(value, list):
        raise _error(evaluator, key, f"expected a list of non-empty strings, found {value!r}")
    for i, term in enumerate(value):
        if not isinstance(term, str) or not term.strip():
            raise _error(evaluator, f"{key}[{i}]", f"expected a non-empty string, found {term!r}")
    return tuple(value)


def _count(evaluator: str, options: Mapping[str, Any], key: str) -> int | None:
    value = options.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise _error(evaluator, key, f"expected an integer of at least 1, found {value!r}")
    return value


def query_options(evaluator: str, options: Mapping[str, Any]) -> QueryOptions:
    """Checked RetrievalQuery options (ConfigError naming the option otherwise)."""
    pinned_threshold(evaluator, options)
    return QueryOptions(
        capability=_text(evaluator, options, "capability", "the capability name (a tool name)"),
        selector=_text(evaluator, options, "selector", "a text the query must contain"),
        includes=_terms(evaluator, options, "includes"),
        excludes=_terms(evaluator, options, "excludes"),
    )


def result_options(evaluator: str, options: Mapping[str, Any]) -> ResultOptions:
    """Checked RetrievalResult options (ConfigError naming the option otherwise)."""
    pinned_threshold(evaluator, options)
    capability = _text(evaluator, options, "capability", "the capability name (a tool name)")
    max_rank = _count(evaluator, options, "max_rank") or DEFAULT_MAX_RANK
    min_count = _count(evaluator, options, "min_expected_count")
    items = _expected_items(evaluator, options.get("expected_items"))
    if not items and min_count is None:
        raise _error(
            evaluator,
            "expected_items",
            "expected at least one of expected_items or min_expected_count, found neither",
        )
    model = options.get("model")
    if model is not None and (not isinstance(model, str) or not model.strip()):
        raise _error(evaluator, "model", f"expected a model name, found {model!r}")
    return ResultOptions(
        capability=capability,
        max_rank=max_rank,
        min_expected_count=min_count,
        expected_items=items,
        model=model,
    )


def _expected_items(evaluator: str, value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not value:
        raise _error(
            evaluator,
            "expected_items",
            f'expected a non-empty list of {{"{EXTRACT_KEY}": "..."}} objects, found {value!r}',
        )
    out: list[str] = []
    for i, item in enumerate(value):
        where = f"expected_items[{i}]"
        if not isinstance(item, Mapping):
            raise _error(evaluator, where, f'expected {{"{EXTRACT_KEY}": "..."}}, found {item!r}')
        if "webUrl" in item:
            raise _error(
                evaluator,
                f"{where}.webUrl",
                "matching by URL is not supported (M365 schema v1): use a distinctive phrase "
                f"from the expected resource's content as {EXTRACT_KEY}",
            )
        for key in item:
            if key != EXTRACT_KEY:
                raise _error(evaluator, f"{where}.{key}", f"unknown key; expected {EXTRACT_KEY}")
        text = item.get(EXTRACT_KEY)
        if not isinstance(text, str) or not text.strip():
            found = "nothing" if EXTRACT_KEY not in item else repr(text)
            raise _error(
                evaluator, f"{where}.{EXTRACT_KEY}", f"expected a non-empty string, found {found}"
            )
        out.append(text)
    return tuple(out)
