"""Token usage, recorded by the call layer on every model answer and by agent targets on every
turn of a transcript; shared by both, so it lives below them."""

from __future__ import annotations

from pydantic import ConfigDict

from agentopt.core.lazy_model import LazyModel


class Usage(LazyModel):
    """Token usage of one call (0 when the provider did not report it)."""

    model_config = ConfigDict(extra="forbid")

    input_tokens: int = 0
    output_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
        )
