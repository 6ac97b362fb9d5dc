"""How long one model call may take, fitted to the model (models.md §3, issue: deadlines that
fit the model).

Hosted APIs answer in seconds: a fixed call deadline (120 s, or `--call-timeout` /
`options.call_timeout_seconds`) and a per-attempt timeout catch a hung connection. The embedded
model and self-hosted servers run on CPUs that may be busy: there the deadline is the larger of
the default and what the tokens asked need at the speed measured on this machine (with a
margin), unless the user fixed it; and an attempt is cut only when its stream shows no token
for the stall window, never by the wall clock alone. The first token's window allows for
reading the prompt at the measured prompt speed.

Streaming is what lets the stall rule watch an answer, and it costs the client (SSE parsing,
a tick per event). It adds nothing when the whole answer comes well inside the window a stream
would get before its first token: then the call is asked plainly, its attempt cut after that
same window, so a dead server is cut no later than a silent stream was (`plain_window`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic_core import to_json

from agentopt.models.call_progress import CallProgress
from agentopt.models.providers.registry import capabilities_of
from agentopt.models.settings import CallSettings
from agentopt.models.speed_memory import EWMA, SpeedMemory
from agentopt.models.types import ChatRequest, ChatResponse

MARGIN = 3.0
"""A call may take this many times what its size needs at the remembered speed."""
DEFAULT_OUTPUT_TOKENS = 512
"""Output tokens assumed for a request without `max_tokens` (the embedded model's default)."""
CHARS_PER_TOKEN = 3.5
"""Prompt size estimate before the server counts it (on the low side: more tokens, more time)."""
MIN_MEASURED_TOKENS = 16
"""A shorter answer says too little about the speed to be folded in."""
PLAIN_SHARE = 0.25
"""A call is asked without streaming when its whole answer should take at most this share of
the stall window: a 4x margin on the estimate before a healthy answer could be cut."""


class ModelSpeed(SpeedMemory):
    """The remembered speed, plus what this command's whole answers showed of it.

    An answer of `i` prompt and `o` output tokens that took `t` seconds proves the server
    reads at least `i / t` and writes at least `o / t` tokens a second, however short it was
    (`MIN_MEASURED_TOKENS` guards the speed fitting against bursts that overstate a speed;
    these figures can only understate it). Their sum for the same call is `2 t`: an estimate
    that errs slow. Kept for this command only; before its first answer, the remembered
    speed (measured on long streamed answers) decides, and with neither the call streams."""

    def __init__(self, provider_type: str, key: tuple[str, str, str], store: Any) -> None:
        super().__init__(provider_type, key, store)
        self.proven: tuple[float, float] | None = None
        """Prompt and output tokens/s that whole answers proved (a moving average)."""
        self.streams_only = False
        """Set when an answer asked plainly did not come: every later call streams."""

    def prove(self, input_tokens: int, output_tokens: int, latency_s: float) -> None:
        if input_tokens <= 0 or output_tokens <= 0 or latency_s <= 0:
            return  # a server that counts no tokens proves nothing
        now = (input_tokens / latency_s, output_tokens / latency_s)
        old = self.proven
        self.proven = now if old is None else (_mix(old[0], now[0]), _mix(old[1], now[1]))

    def whole_answer_s(self, prompt_tokens: int, output_tokens: int) -> float | None:
        """Seconds a whole answer of this size should take; None: nothing measured yet."""
        if self.streams_only:
            return None
        if self.proven is not None:
            reading, writing = self.proven
            return prompt_tokens / reading + output_tokens / writing
        return self.seconds(prompt_tokens, output_tokens) if self.measured else None


def _mix(old: float, new: float) -> float:
    return (1 - EWMA) * old + EWMA * new


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
    plain_s: float | None = None
    """Set when the call may be asked without streaming: its attempt is then cut after this
    long (`plain_window`)."""


_TOOL_FRAME = len('{"type":"function","function":}')
"""What a tool's JSON adds around its function (its bytes stand for its characters)."""


def prompt_tokens(request: ChatRequest) -> int:
    chars = sum(
        len(m.content or "") if isinstance(m.content, str) else 200 for m in request.messages
    )
    if request.tools:
        chars += sum(_TOOL_FRAME + len(to_json(t.function)) for t in request.tools)
    return int(chars / CHARS_PER_TOKEN) + 8 * len(request.messages)


def windows(
    provider_type: str,
    settings: CallSettings,
    request: ChatRequest | None,
    speed: ModelSpeed | None,
) -> CallWindows:
    """The deadline, attempt timeout and stall windows of one call."""
    if not watched(provider_type) or speed is None or request is None:
        attempt = None if provider_type == "mock" else settings.attempt_timeout()
        return CallWindows(settings.call_deadline_s, attempt)
    asked = prompt_tokens(request)
    output = request.max_tokens or DEFAULT_OUTPUT_TOKENS
    if settings.call_timeout_s is not None:
        # The user said how slow calls are: the deadline is theirs, and an answer may take
        # that long to start (a stream is still cut when its tokens stop). Such calls always
        # stream: there is no first-token window to bound a plain attempt by.
        return CallWindows(settings.call_timeout_s, settings.attempt_timeout_s,
                           settings.stall_timeout_s)  # fmt: skip
    deadline = max(settings.default_call_timeout_s, MARGIN * speed.seconds(asked, output))
    first_token = max(settings.stall_timeout_s, MARGIN * speed.seconds(asked, 0))
    # A server that does not stream cannot be watched: its attempt may use the whole deadline
    # (slow is normal there; `attempt_timeout_seconds` still caps it when set).
    plain = plain_window(settings, speed.whole_answer_s(asked, output), first_token)
    return CallWindows(
        deadline, settings.attempt_timeout_s, settings.stall_timeout_s, first_token, plain
    )


def plain_window(
    settings: CallSettings, whole_answer_s: float | None, first_token_s: float
) -> float | None:
    """The attempt limit of a call asked without streaming, or None: stream it.

    The stall rule only matters for an answer that may take about as long as the stall
    window. When the server's speed says the whole answer takes at most `PLAIN_SHARE` of it,
    the stream shows nothing the answer's arrival does not, and the call is asked plainly
    under the window a stream gets before its first token (`first_token_s`): a server that
    says nothing is cut exactly as late as a silent stream was, never later. Before anything
    was measured (`whole_answer_s` None) the call streams. A plain attempt that is cut or fails
    is retried streaming, and the model's later calls stream too (`ModelSpeed.streams_only`)."""
    if whole_answer_s is None or whole_answer_s > PLAIN_SHARE * settings.stall_timeout_s:
        return None
    return first_token_s


def measure(
    speed: ModelSpeed, progress: CallProgress, response: ChatResponse, latency_s: float
) -> None:
    """Fold what one successful call showed into the speed memory."""
    out = response.usage.output_tokens
    speed.prove(response.usage.input_tokens, out, latency_s)
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
