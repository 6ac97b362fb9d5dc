"""The one exception tree of agentopt. Every error says what to do next.

AgentoptError                 base; carries the process exit code the CLI maps it to
├── InputError      (exit 2)  a user file or flag is wrong; carries a list of Problems
│   └── ConfigError (exit 2)  configuration missing or inconsistent (eval.yaml, flags, env)
├── ModelCallError  (exit 3)  a model call failed for good (classified; see models.call)
├── AgentError      (exit 3)  the agent under test could not be run at all (systemic)
├── BudgetExceeded  (exit 3)  --max-cost / --budget-calls reached
├── TooManyErrors   (exit 3)  --max-errors exceeded
├── GateFailed      (exit 1)  a quality gate failed
└── Interrupted     (exit 130) Ctrl-C; partial state saved

A failing task is data (a result with status "error"), never an exception: only systemic
failures raise.
"""

from __future__ import annotations

from dataclasses import dataclass


def printable(text: str) -> str:
    """`text` with what no terminal can print escaped: a lone surrogate (from a JSON
    `"\\ud800"` or a file name that is not UTF-8) becomes `\\ud800` instead of raising
    UnicodeEncodeError while the error message is printed."""
    if text.isascii():
        return text
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


@dataclass(frozen=True)
class Problem:
    """One thing wrong with one input, located precisely enough to fix it.

    Attributes:
        file: the file (as the user would type it) or "" for flags/env.
        location: "line 12", a key path like "evaluators[2].name", or "" for the whole file.
        message: what was expected and what was found.
        severity: "error" stops loading; "warning" is printed and loading goes on.
    """

    file: str
    location: str
    message: str
    severity: str = "error"

    def __str__(self) -> str:
        where = self.file
        if self.location:
            where = f"{where}:{self.location}" if where else self.location
        return printable(f"{where}: {self.message}" if where else self.message)


class AgentoptError(Exception):
    """Base of every error agentopt raises on purpose."""

    exit_code: int = 2

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return printable(self.message if not self.hint else f"{self.message}\n  → {self.hint}")


class InputError(AgentoptError):
    """A user file or flag is invalid. Holds every problem found, not only the first."""

    exit_code = 2

    def __init__(
        self,
        message: str | None = None,
        *,
        problems: list[Problem] | None = None,
        hint: str | None = None,
    ) -> None:
        self.problems = list(problems or [])
        if message is None:
            message = "\n".join(str(p) for p in self.problems) or "invalid input"
        super().__init__(message, hint=hint)

    @classmethod
    def at(cls, file: str, location: str, message: str) -> InputError:
        """One-problem shorthand: `InputError.at("eval.yaml", "dataset.name", "expected ...")`."""
        return cls(problems=[Problem(file, location, message)])

    def after(self, warnings: list[Problem]) -> InputError:
        """The same error with `warnings` met before it listed first: a refused config still
        shows its did-you-mean lines (a typo such as `datset:` is often the cause)."""
        shown = [w for w in warnings if w not in self.problems]
        if not shown:
            return self
        err = type(self)(self.message, problems=[*shown, *self.problems], hint=self.hint)
        err.__cause__ = self.__cause__
        return err


class ConfigError(InputError):
    """Configuration is missing or inconsistent; the message names the flag or key to set."""


class ModelCallError(AgentoptError):
    """A model call failed after the call layer's retries, or was not retryable.

    Attributes:
        kind: classification used in error counts: "rate_limit", "server", "timeout",
            "connection", "auth", "not_found", "bad_request", "quota", "context_length",
            "content_filter", "parse", "bad_gateway" (a 200 that is not a completion: retried
            once), "deadline", "budget", "unsupported", "unknown".
        provider, model: which model failed (never credentials).
        unsupported: for kind "unsupported", the request parameter the server refused
            (`response_format`, `tools`, `seed`, ...): the call layer falls back or drops it.
    """

    exit_code = 3

    def __init__(
        self,
        message: str,
        *,
        kind: str = "unknown",
        provider: str = "",
        model: str = "",
        retryable: bool = False,
        status_code: int | None = None,
        retry_after: float | None = None,
        hint: str | None = None,
        unsupported: str | None = None,
    ) -> None:
        super().__init__(message, hint=hint)
        self.kind = kind
        self.unsupported = unsupported
        self.provider = provider
        self.model = model
        self.retryable = retryable
        self.status_code = status_code
        self.retry_after = retry_after


class AgentError(AgentoptError):
    """The agent under test cannot be run at all (bad command, port never opened)."""

    exit_code = 3


class BudgetExceeded(AgentoptError):
    """A cost or call budget was reached; in-flight work was finished or cancelled cleanly."""

    exit_code = 3


class TooManyErrors(AgentoptError):
    """More agent/judge errors than --max-errors allows: the verdict would be unknown."""

    exit_code = 3


class GateFailed(AgentoptError):
    """A quality gate (--fail-under, --min-pass-rate, --baseline, --require-improvement) failed."""

    exit_code = 1


class Interrupted(AgentoptError):
    """The user pressed Ctrl-C; what finished is saved and the message says how to resume."""

    exit_code = 130
