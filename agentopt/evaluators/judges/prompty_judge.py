"""A `.prompty` LLM-judge evaluator (runevals `custom-evaluators/<name>/<name>.prompty`,
azure-ai-evaluation prompty evaluators), run through the one judge path.

runevals pairs the prompty with a Python wrapper that calls it through promptflow with Azure
OpenAI settings; agentopt renders the prompty itself and calls the configured judge model, with
structured output, re-asks on unusable replies and error results (never a score) when the judge
fails. The prompty's own `model.parameters` are not used: judge calls keep temperature 0 and the
fixed seed (evaluators.md §3), so a prompty that samples on purpose (consistency_check) is
judged once, deterministically.

Inputs bind by name to the sample: `user_prompt` / `prompt` / `query` / `question` → the user's
message, `response` / `answer`, `expected_response` / `ground_truth`, `context`, `history`,
`tool_calls`, `tool_definitions`, `instructions`; any other input takes its value from the
evaluator's `options` (the M365 `{"options": {...}}`), else its `default`, else it is a
configuration error naming the input's line. Scores are integers 1–5 as runevals requires of
LLM-judge custom evaluators; the threshold (default 3) is on that scale.
"""

from __future__ import annotations

from typing import Any

from agentopt.contracts.eval_result import EvalResult
from agentopt.core.errors import ConfigError, Problem
from agentopt.core.files.prompty import Prompty
from agentopt.evaluators.base import BuildContext, EvalSample, flat_options
from agentopt.evaluators.judges.judge_base import sample_texts
from agentopt.evaluators.judges.prompt_judge import RangeJudge, scale_schema
from agentopt.evaluators.judges.prompting import render_user_sections

LOW, HIGH = 1, 5
SAMPLE_INPUTS = {
    "user_prompt": "query",
    "prompt": "query",
    "query": "query",
    "question": "query",
    "response": "response",
    "answer": "response",
    "expected_response": "ground_truth",
    "ground_truth": "ground_truth",
    "context": "context",
    "history": "history",
    "conversation": "history",
    "tool_calls": "tool_calls",
    "tool_definitions": "tool_definitions",
    "instructions": "instructions",
}
SCHEMA = scale_schema(LOW, HIGH)


class PromptyJudge(RangeJudge):
    default_threshold = 3.0
    lo, hi = LOW, HIGH
    example_reason = "<one sentence>"

    def __init__(
        self,
        *,
        name: str,
        prompty: Prompty,
        options: dict[str, Any] | None = None,
        context: BuildContext | None = None,
    ) -> None:
        super().__init__(name=name, options=options, context=context)
        self.prompty = prompty
        self.fixed = self._fixed_inputs(flat_options(self.options))

    def _fixed_inputs(self, options: dict[str, Any]) -> dict[str, str]:
        """Values of the inputs that are not sample texts (checked when the run starts); they
        are the evaluator author's configuration, so they render as plain text."""
        fixed: dict[str, str] = {}
        problems = []
        for name, spec in self.prompty.inputs.items():
            if name in SAMPLE_INPUTS:
                continue
            value = options.get(name, spec.default)
            if value is None:
                where = f"line {spec.line}" if spec.line else f"inputs.{name}"
                problems.append(
                    Problem(
                        self.prompty.file,
                        where,
                        f'input "{name}" has no value: give it in the evaluator\'s options '
                        f'({{"options": {{"{name}": ...}}}}) or as `default:` in the prompty',
                    )
                )
            else:
                fixed[name] = str(value)
        if problems:
            raise ConfigError(problems=problems)
        return fixed

    def _data(self, sample: EvalSample) -> dict[str, str | None]:
        """The sample texts the prompty declares (fenced as untrusted data when rendered)."""
        texts = sample_texts(sample)
        return {n: texts[SAMPLE_INPUTS[n]] for n in self.prompty.inputs if n in SAMPLE_INPUTS}

    async def evaluate(self, sample: EvalSample) -> EvalResult:
        from jinja2 import TemplateError  # loaded by the first prompt judged

        footer = self.footer()
        sections = [(s.role, s.template) for s in self.prompty.sections]
        last_user = max(i for i, (role, _) in enumerate(sections) if role == "user")
        role, text = sections[last_user]
        sections[last_user] = (role, text.rstrip() + "\n\n" + footer)
        try:
            messages = render_user_sections(sections, data=self._data(sample), params=self.fixed)
        except TemplateError as exc:
            return EvalResult.failed_to_evaluate(
                self.name, "promptRenderFailed", f"{self.prompty.file}: failed to render: {exc}"
            )
        outcome = await self.ask(sample, messages)
        if outcome.value is None:
            return outcome.error_result(self.name, judge_model=self.model)
        score = float(outcome.value.score)
        threshold = self.threshold_for(sample)
        threshold = self.default_threshold if threshold is None else threshold
        return self.judged(
            outcome,
            score,
            threshold,
            normalized=(score - LOW) / (HIGH - LOW),
            reason=outcome.value.reason.strip(),
            details={"prompty": self.prompty.file},
        )
