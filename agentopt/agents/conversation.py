"""Drives the turns of one task through a target's `send`, the same way for every target.

Why one driver: the rules that make a transcript trustworthy — a per-turn deadline, a failed
turn stops the conversation (later turns are recorded as skipped, never sent), cooperative
cancellation, latency measured the same way, and secrets masked before anything is kept —
must not depend on which target ran the agent.
"""

from __future__ import annotations

import asyncio
import time
import weakref
from collections.abc import Awaitable, Callable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from agentopt.agents.base import RunConfig
from agentopt.contracts.task import MAX_TURNS, Task
from agentopt.contracts.transcript import TurnError, TurnResult
from agentopt.core import alarms, limits
from agentopt.core.errors import (
    AgentError,
    AgentoptError,
    BudgetExceeded,
    InputError,
    Interrupted,
    ModelCallError,
    TooManyErrors,
)
from agentopt.core.redaction import redact, redact_model

SendTurn = Callable[[str], Awaitable[TurnResult]]
RestoreTurn = Callable[[TurnResult], None]
"""Puts an answered turn back into a target's conversation without sending it (a resumed
simulated conversation); it reads what the target's `send` kept in `TurnResult.state`."""

AGENT_REQUEST_FAILED = "agentRequestFailed"
TURN_SKIPPED = "turnSkipped"
TOOL_ROUNDS_EXCEEDED = "toolRoundsExceeded"
TIMEOUT = "timeout"
TOOL_NOT_ALLOWED = "toolCallNotAllowed"
# A failed model call of the agent, by kind, as the M365 output schema categorizes it.
_CALL_CODES = {
    "auth": "agentAuthenticationError",
    "rate_limit": "agentRateLimited",
    "quota": "agentRateLimited",
    "timeout": "agentTimeout",
    "deadline": "agentTimeout",
    "parse": "agentResponseUnparseable",
    "bad_gateway": "agentResponseUnparseable",
    "too_large": "agentResponseUnparseable",
}
_ALLOWED: ContextVar[list[str] | None] = ContextVar("agentopt_allowed_tools", default=None)

# Failures that are about the whole run, not this task: they propagate (style.md rule 7).
_SYSTEMIC: tuple[type[BaseException], ...] = (
    AgentError,
    InputError,
    BudgetExceeded,
    TooManyErrors,
    Interrupted,
)


class ChatHistory:
    """The user/assistant messages of a conversation, for targets that send the whole history
    every turn (chat completions, commands); `restore` puts an answered turn back (resume)."""

    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []

    def with_query(self, query: str) -> list[dict[str, Any]]:
        """The messages to send for the turn `query`."""
        return [*self.messages, {"role": "user", "content": query}]

    def answered(self, query: str, response: str) -> None:
        """Keep an answered exchange (only a successful turn carries over)."""
        self.messages = [
            *self.with_query(query),
            {"role": "assistant", "content": response},
        ]

    def restore(self, turn: TurnResult) -> None:
        self.answered(turn.query, turn.response)


def allowed_tools() -> list[str] | None:
    """The tools the turn being sent may call (None: any). A target that runs tools itself
    (local) refuses the others before executing them; for the rest `run_turns` fails the turn
    once it sees the call."""
    return _ALLOWED.get()


@contextmanager
def _allowing(tools: list[str] | None) -> Iterator[None]:
    token = _ALLOWED.set(tools)
    try:
        yield
    finally:
        _ALLOWED.reset(token)


def not_allowed_message(name: str, allowed: list[str]) -> str:
    listed = ", ".join(allowed) if allowed else "none"
    return (
        f"the agent called tool '{name}', which allowed_tools does not permit (allowed: {listed}); "
        "the call was refused"
    )


class TurnFailed(Exception):
    """Raised inside a target's `send` to fail the turn with a specific error code.

    `partial` keeps what the turn produced before failing (e.g. the tool calls made before
    the tool-round limit was hit), so the trace still shows it.
    """

    def __init__(self, code: str, message: str, partial: TurnResult | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.partial = partial


async def run_turns(
    task: Task,
    config: RunConfig,
    send: SendTurn,
    *,
    restore: RestoreTurn | None = None,
    secrets: Iterable[str] = (),
) -> list[TurnResult]:
    """Send each turn of `task` in order and return one redacted `TurnResult` per turn.

    With `config.user` (a simulated user) the task's query opens the conversation and the user
    writes each turn after it, until it ends the conversation or a turn fails. Turns answered
    in an earlier session (`config.played`) are put back with `restore` instead of being sent;
    a target that cannot restore (no `restore`) plays the conversation from its start.

    The whole conversation holds one slot of the call layer's agent pool (when the config has
    a call layer), so `--concurrency` bounds agent runs whatever the target: no target holds a
    limit of its own, and a local agent's model calls use the slot its run holds.
    """
    kept = [s for s in secrets if s]
    if config.calls is None:
        return await _play(task, config, send, restore, kept)
    async with config.calls.slot("agent"):
        return await _play(task, config, send, restore, kept)


async def _play(
    task: Task, config: RunConfig, send: SendTurn, restore: RestoreTurn | None, extra: list[str]
) -> list[TurnResult]:
    if config.user is None:
        return await _turns(task, config, send, extra)
    return await _simulated(task, config, send, restore, extra)


async def _simulated(
    task: Task, config: RunConfig, send: SendTurn, restore: RestoreTurn | None, extra: list[str]
) -> list[TurnResult]:
    """A simulated user's conversation: the opening (the task's query, else the user's),
    then the user's next message after each answered turn, until it says stop."""
    assert config.user is not None
    turns: list[TurnResult] = []
    if restore is not None:
        for turn in config.played:
            restore(turn)
            turns.append(turn)
    allowed = task.turns[0].allowed_tools if task.turns else None
    opening = task.query if task.turns else ""
    query = opening if opening and not turns else await config.user.next_message(turns)
    while query is not None and len(turns) < MAX_TURNS:  # whatever the user says
        with _allowing(allowed):
            result = await _one_turn(query, config, send, extra)
        _check_allowed(result, allowed)
        result.simulated = bool(turns) or not opening
        result = redact_model(result, extra)
        turns.append(result)
        if result.error is not None:
            break
        if config.on_turn is not None:
            await config.on_turn(len(turns), result)
        query = await config.user.next_message(turns)
    return turns


async def _turns(
    task: Task, config: RunConfig, send: SendTurn, extra: list[str]
) -> list[TurnResult]:
    results: list[TurnResult] = []
    failed_turn: int | None = None
    for number, turn in enumerate(task.turns, start=1):
        if failed_turn is not None:
            skipped = TurnError(
                code=TURN_SKIPPED, message=f"not sent because turn {failed_turn} failed"
            )
            results.append(TurnResult(query=turn.query, error=skipped))
            continue
        with _allowing(turn.allowed_tools):
            result = await _one_turn(turn.query, config, send, extra)
        _check_allowed(result, turn.allowed_tools)
        results.append(redact_model(result, extra))
        if result.error is not None:
            failed_turn = number
    return results


async def _one_turn(
    query: str, config: RunConfig, send: SendTurn, secrets: list[str]
) -> TurnResult:
    if config.cancel is not None and config.cancel.is_set():
        raise Interrupted("the run was cancelled before this turn was sent")
    started = time.perf_counter()
    try:
        result = await _bounded(send(query), config)
    except TurnFailed as failed:
        result = failed.partial or TurnResult(query=query)
        result.error = TurnError(code=failed.code, message=failed.message)
    except _DeadlinePassed:
        message = f"the agent did not answer within {config.turn_timeout_s:g} s"
        result = TurnResult(query=query, error=TurnError(code=TIMEOUT, message=message))
    except _SYSTEMIC:
        raise
    except Exception as exc:  # any other failure of this request is data, not a crash
        message = redact(describe_error(exc), secrets)
        code = AGENT_REQUEST_FAILED
        if isinstance(exc, ModelCallError):
            code = _CALL_CODES.get(exc.kind, AGENT_REQUEST_FAILED)
        result = TurnResult(query=query, error=TurnError(code=code, message=message))
    size = limits.oversize(result.response)
    if size is not None:  # an answer over the cap is an error; its text goes no further
        result.response = ""
        result.error = TurnError(
            code="agentResponseUnparseable", message=limits.too_large("the answer", size)
        )
    result.query = query
    result.latency_s = round(time.perf_counter() - started, 6)
    return result


def _check_allowed(result: TurnResult, allowed: list[str] | None) -> None:
    """A tool call outside the turn's allowlist fails the turn, naming the tool — also for
    targets whose tools ran remotely (hosted, endpoint), where it can only be seen after."""
    if allowed is None or result.error is not None:
        return
    for call in result.tool_calls:
        if call.name not in allowed:
            result.error = TurnError(
                code=TOOL_NOT_ALLOWED, message=not_allowed_message(call.name, allowed)
            )
            return


class _DeadlinePassed(Exception):
    """The per-turn deadline expired (as opposed to a TimeoutError raised inside the turn)."""


async def _bounded(turn: Awaitable[TurnResult], config: RunConfig) -> TurnResult:
    """Await the turn under the per-turn deadline, abandoning it if `config.cancel` is set.

    The deadline is a watch on the loop's one timer (`core.alarms`), where `asyncio.timeout`
    armed and cancelled a timer of its own for every turn; it acts as `asyncio.timeout` does:
    at the deadline the task is cancelled, and that cancellation, its own alone, ends the
    turn as passed its deadline."""
    limit = config.turn_timeout_s
    if limit is None:
        return await _cancellable(turn, config)
    task = asyncio.current_task()
    assert task is not None
    cancelling = task.cancelling()
    expired: list[bool] = []

    def expire() -> None:
        expired.append(True)
        task.cancel()

    key = alarms.watch(expire, limit)
    try:
        result = await _cancellable(turn, config)
    except asyncio.CancelledError:
        if expired and task.uncancel() <= cancelling:
            raise _DeadlinePassed from None
        raise
    except BaseException:
        if expired:
            task.uncancel()
        raise
    finally:
        alarms.unwatch(key)
    if expired:  # the turn swallowed the cancellation and finished
        task.uncancel()
    return result


async def _cancellable(turn: Awaitable[TurnResult], config: RunConfig) -> TurnResult:
    """Await the turn in this task; when `config.cancel` is set meanwhile, the task is
    cancelled (the turn runs its cleanup: kill a process, close a stream) and the turn ends
    as `Interrupted`. One watcher per cancel event does that for every turn in flight: a turn
    costs a set insertion, where two extra tasks and an `asyncio.wait` per turn were a tenth
    of a run's CPU per task."""
    cancel = config.cancel
    if cancel is None:
        return await turn
    if cancel.is_set():
        close = getattr(turn, "close", None)
        if close is not None:
            close()  # never started: nothing to clean up
        raise Interrupted("the run was cancelled while a turn was in flight")
    task = asyncio.current_task()
    assert task is not None
    watch = _watch(cancel)
    watch.turns.add(task)
    try:
        result = await turn
    except asyncio.CancelledError:
        if task not in watch.cancelled:
            raise  # not ours: the run itself is being cancelled
        watch.cancelled.discard(task)
        task.uncancel()
        raise Interrupted("the run was cancelled while a turn was in flight") from None
    finally:
        watch.turns.discard(task)
    if task in watch.cancelled:  # the turn swallowed the cancellation and finished anyway
        watch.cancelled.discard(task)
        task.uncancel()
    return result


class _Watch:
    """The turns in flight under one cancel event, and the one task that cancels them."""

    def __init__(self, cancel: asyncio.Event) -> None:
        self.turns: set[asyncio.Task[Any]] = set()
        self.cancelled: set[asyncio.Task[Any]] = set()
        self.task = asyncio.get_running_loop().create_task(self._wait(cancel))

    async def _wait(self, cancel: asyncio.Event) -> None:
        await cancel.wait()
        for task in list(self.turns):
            self.cancelled.add(task)
            task.cancel()


_WATCHES: weakref.WeakKeyDictionary[asyncio.Event, _Watch] = weakref.WeakKeyDictionary()


def _watch(cancel: asyncio.Event) -> _Watch:
    watch = _WATCHES.get(cancel)
    if watch is None or (watch.task.done() and not cancel.is_set()):
        watch = _WATCHES[cancel] = _Watch(cancel)  # (a watcher of an earlier loop ended)
    return watch


def describe_error(exc: BaseException) -> str:
    """A one-line, human-readable cause (HTTP status and body message when there is one)."""
    if isinstance(exc, AgentoptError):
        return exc.message
    status = getattr(exc, "status_code", None)
    text = str(exc) or type(exc).__name__
    if status is not None:
        return f"HTTP {status}: {text}"
    return f"{type(exc).__name__}: {text}"
