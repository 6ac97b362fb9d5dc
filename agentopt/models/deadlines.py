"""How long one model call may take, fitted to the model (models.md §3, issue: deadlines that
fit the model).

Hosted APIs answer in seconds: a fixed call deadline (120 s, or `--call-timeout` /
`options.call_timeout_seconds`) and a per-attempt timeout catch a hung connection. The embedded
model and self-hosted servers run on CPUs that may be busy: there the deadline is the larger of
the default and what the tokens asked need at the speed measured on this machine (with a
margin), unless the user fixed it; and an attempt is cut only when its stream shows no token
for the stall window, never by the wall clock alone. The first token's window allows for
reading the prompt at the measured prompt speed.
"""

from __future__ import annotations

from dataclasses import dataclass

from agentopt.models.call_progress import CallProgress
from agentopt.models.capabilities import SpeedMemory
from agentopt.models.providers.registry import capabilities_of
from agentopt.models.settings import CallSettings
from agentopt.models.types import ChatRequest, ChatResponse

MARGIN = 3.0
"""A call may take this many times what its size needs at the remembered speed."""
DEFAULT_OUTPUT_TOKENS = 512
"""Output tokens assumed for a request without `max_tokens` (the embedded model's default)."""
CHARS_PER_TOKEN = 3.5
"""Prompt size estimate before the server counts it (on the low side: more tokens, more time)."""
MIN_MEASURED_TOKENS = 16
"""A shorter answer says too little about the speed to be folded in."""


def watched(provider_type: str) -> bool:
    """Whether calls to this provider type get speed-fitted deadlines and the stall rule."""
    return capabilities_of(provider_type).measured_speed


@dataclass(frozen=True)
class CallWindows:
    """The limits of one call (see `models.attempts.run_attempts`)."""

    call_timeout_s: float
    attempt_s: float | None
    stall_s: float | None = None
    first_token_s: float | None = None


def prompt_tokens(request: ChatRequest) -> int:
    chars = sum(
        len(m.content or "") if isinstance(m.content, str) else 200 for m in request.messages
    )
    if request.tools:
        chars += sum(len(t.model_dump_json()) for t in request.tools)
    return int(chars / CHARS_PER_TOKEN) + 8 * len(request.messages)


def windows(
    provider_type: str,
    settings: CallSettings,
    request: ChatRequest | None,
    speed: SpeedMemory | None,
) -> CallWindows:
    """The deadline, attempt timeout and stall windows of one call."""
    if not watched(provider_type) or speed is None or request is None:
        attempt = None if provider_type == "mock" else settings.attempt_timeout()
        return CallWindows(settings.call_deadline_s, attempt)
    asked = prompt_tokens(request)
    output = request.max_tokens or DEFAULT_OUTPUT_TOKENS
    if settings.call_timeout_s is not None:
        # The user said how slow calls are: the deadline is theirs, and an answer may take
        # that long to start (a stream is still cut when its tokens stop).
        return CallWindows(settings.call_timeout_s, settings.attempt_timeout_s,
                           settings.stall_timeout_s)  # fmt: skip
    deadline = max(settings.default_call_timeout_s, MARGIN * speed.seconds(asked, output))
    first_token = max(settings.stall_timeout_s, MARGIN * speed.seconds(asked, 0))
    # A server that does not stream cannot be watched: its attempt may use the whole deadline
    # (slow is normal there; `attempt_timeout_seconds` still caps it when set).
    return CallWindows(deadline, settings.attempt_timeout_s, settings.stall_timeout_s, first_token)


def measure(
    speed: SpeedMemory, progress: CallProgress, response: ChatResponse, latency_s: float
) -> None:
    """Fold what one successful call showed into the speed memory."""
    out = response.usage.output_tokens
    if out < MIN_MEASURED_TOKENS or latency_s <= 0:
        return
    if progress.streams and progress.first_at is not None and progress.tokens >= 2:
        making = progress.last - progress.first_at
        reading = progress.first_at - progress.started_at
        generation = (progress.tokens - 1) / making if making > 0 else None
        prompt = response.usage.input_tokens / reading if reading > 0.05 else None
        speed.observe(generation=generation, prompt=prompt)
        return
    speed.observe(generation=out / latency_s, prompt=None)
