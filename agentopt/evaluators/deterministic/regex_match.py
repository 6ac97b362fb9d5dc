"""builtin.regex_match: the response matches regular expressions (all of them, or any)."""

from __future__ import annotations

import re
from functools import cache
from typing import Any, Literal

from agentopt.contracts.eval_result import EvalResult
from agentopt.evaluators.base import (
    EvalSample,
    EvaluatorBase,
    missing_input,
    option_error,
    pass_fail,
)
from agentopt.evaluators.options import EvaluatorOptions
from agentopt.evaluators.registry import evaluator

PLACEHOLDERS = ("ground_truth", "query", "context")
MODES = ("all", "any")


class PatternError(ValueError):
    """A pattern's placeholders did not render (jinja2's error, as text)."""


class MissingPlaceholder(PatternError):
    """A placeholder the sample has no value for."""


@cache
def _environment() -> Any:
    # Every value a placeholder inserts is re.escape'd, so an expected answer like
    # "$4.99 (USD)" matches literally instead of breaking or widening the user's pattern.
    # jinja2 loads only for a pattern with placeholders.
    from jinja2 import StrictUndefined
    from jinja2.sandbox import SandboxedEnvironment

    return SandboxedEnvironment(
        undefined=StrictUndefined,
        autoescape=False,
        finalize=lambda value: re.escape(str(value)),
    )


def render_pattern(pattern: str, values: dict[str, Any]) -> str:
    """The pattern with `{{ground_truth}}`-style placeholders filled in, values escaped."""
    if "{{" not in pattern and "{%" not in pattern:
        return pattern
    from jinja2 import TemplateError, UndefinedError

    try:
        return str(_environment().from_string(pattern).render(**values))
    except UndefinedError as exc:
        raise MissingPlaceholder(str(exc)) from exc
    except TemplateError as exc:
        raise PatternError(str(exc)) from exc


class RegexMatchOptions(EvaluatorOptions):
    patterns: Any = None
    """A list of regular expressions, or one (checked to compile when built)."""
    pattern: Any = None
    """One regular expression (the singular spelling of `patterns`)."""
    mode: Literal["all", "any"] = "all"


@evaluator("builtin.regex_match", needs=("response",), options=RegexMatchOptions)
class RegexMatch(EvaluatorBase):
    """Response matches regular expressions (patterns, mode all|any).

    Options: `patterns` (a list, or one string), `mode: all` (default) or `any`.

    Placeholders `{{ground_truth}}`, `{{query}}`, `{{context}}` take the sample's values.
    """

    def check_options(self, options: dict[str, Any]) -> None:
        self._check(options)

    def _check(self, opts: dict[str, Any]) -> list[str]:
        patterns = opts.get("patterns", opts.get("pattern"))
        if isinstance(patterns, str):
            patterns = [patterns]
        if not patterns or not all(isinstance(p, str) for p in patterns):
            raise option_error(self.name, "patterns", "a list of regular expressions", patterns)
        if opts.get("mode", "all") not in MODES:
            raise option_error(self.name, "mode", " or ".join(MODES), opts.get("mode"))
        for p in patterns:
            try:
                re.compile(render_pattern(p, {k: "x" for k in PLACEHOLDERS}))
            except (re.error, PatternError) as exc:
                raise option_error(
                    self.name, "patterns", f"a valid regular expression ({exc})", p
                ) from exc
        return list(patterns)

    async def evaluate(self, sample: EvalSample) -> EvalResult:
        opts = self.options_for(sample)
        patterns = self._check(opts)
        mode = opts.get("mode", "all")
        values = {k: v for k in PLACEHOLDERS if (v := getattr(sample, k)) is not None and v != ""}
        matched: list[str] = []
        missing: list[str] = []
        for p in patterns:
            try:
                rendered = render_pattern(p, values)
            except MissingPlaceholder as exc:
                return missing_input(self.name, f"a value for the placeholder in {p!r} ({exc})")
            (matched if re.search(rendered, sample.response) else missing).append(rendered)
        ok = not missing if mode == "all" else bool(matched)
        if ok:
            reason = f"{len(matched)} of {len(patterns)} patterns matched (mode {mode})."
        else:
            reason = f"Not matched (mode {mode}): " + ", ".join(repr(m) for m in missing)
        details = {"mode": mode, "matched": matched, "missing": missing}
        return pass_fail(self.name, ok, reason=reason, details=details)
