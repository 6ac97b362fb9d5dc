"""The live view of `agentopt optimize`: the candidate table growing as candidates finish.

On a terminal it is a rich Live display (the table plus one status line); elsewhere (CI logs,
pipes) a header and one fixed-width line per candidate, and each phase (baseline, a proposal,
screening, validation, the test split) as a `… ` line when it starts, so a log never sits
silent for the minutes a phase can take; the status says how many tokens the phase made and
how fast (the call layer's meter), so a slow reflection model on a CPU reads as working. It
implements the optimize workflow's sink protocol by shape, so this module needs nothing from the
workflow layer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Console, Group
from rich.live import Live
from rich.text import Text

from agentopt.contracts.optimize_job import CandidateRecord, JobRecord
from agentopt.core import heartbeat
from agentopt.core.heartbeat import Heartbeat
from agentopt.core.redaction import redact
from agentopt.reports.formatting import tokens_text
from agentopt.reports.optimize_table import candidates_table, header_line, row_line

if TYPE_CHECKING:
    from agentopt.models.call_progress import TokenMeter


class LiveOptimizeView:
    """Renders optimize progress on a console."""

    def __init__(
        self, console: Console, *, quiet: bool = False, heartbeat_s: float | None = None
    ) -> None:
        self.console = console
        self.quiet = quiet
        self._live: Live | None = None
        self._job: JobRecord | None = None
        self._status = ""
        self._header = False
        self._meter: TokenMeter | None = None
        self._tokens0 = 0
        quiet_s = heartbeat.HEARTBEAT_S if heartbeat_s is None else heartbeat_s
        self._heartbeat = Heartbeat(self._still_working, quiet_s=quiet_s)

    def attach(self, meter: TokenMeter) -> None:
        """The call layer's token meter: status lines show the phase's tokens/s from it."""
        self._meter = meter

    def _plain_line(self, text: Text | str, **kwargs: object) -> None:
        """One line of the plain (non-terminal) output; it resets the heartbeat."""
        self._heartbeat.start()
        self._heartbeat.beat()
        self.console.print(text, **kwargs)  # type: ignore[arg-type]

    def _status_line(self) -> str:
        """The status with what its phase made so far: `… · 120 tokens at 3.1 tok/s`."""
        tokens = tokens_text(self._meter, self._tokens0)
        return f"{self._status} · {tokens}" if tokens and self._status else self._status

    def _still_working(self, silent_s: float) -> None:
        status = self._status_line() or "working"
        self.console.print(
            f"  … {status} (still working; nothing new for {silent_s:.0f}s)",
            highlight=False,
            soft_wrap=True,
        )

    @property
    def interactive(self) -> bool:
        return self.console.is_terminal and not self.quiet

    def _render(self) -> Group:
        parts: list[Text | object] = []
        if self._job is not None:
            parts.append(candidates_table(self._job))
        if self._status:
            parts.append(_StatusLine(self))
        return Group(*parts)  # type: ignore[arg-type]

    def _refresh(self) -> None:
        if not self.interactive:
            return
        if self._live is None:
            self._live = Live(self._render(), console=self.console, refresh_per_second=4)
            self._live.start()
        else:
            self._live.update(self._render(), refresh=True)

    def status(self, message: str) -> None:
        self._status = redact(message)
        self._tokens0 = self._meter.tokens if self._meter is not None else 0
        if self.interactive:
            self._refresh()
        elif not self.quiet:
            self._plain_line(Text(f"  … {self._status}", style="dim"), soft_wrap=True)

    def notice(self, message: str) -> None:
        if self.quiet:
            return
        text = Text(f"note: {redact(message)}", style="yellow")
        if self._live is not None:
            self._live.console.print(text)
        else:
            self._plain_line(text)

    def candidate(self, job: JobRecord, candidate: CandidateRecord) -> None:
        self._job = job
        if self.interactive:
            self._refresh()
            return
        if self.quiet:
            return
        if not self._header:
            self._plain_line(header_line(), highlight=False, soft_wrap=True)
            self._header = True
        self._plain_line(row_line(candidate), highlight=False, soft_wrap=True)

    def stalled(self, number: int, strategy: str, reason: str) -> None:
        if self.quiet:
            return
        text = Text(f"  proposal {number} ({strategy}): no candidate — {redact(reason)}", "dim")
        if self._live is not None:
            self._live.console.print(text)
        else:
            self._plain_line(text, soft_wrap=True)

    def close(self) -> None:
        """Stop the heartbeat, whatever ended the job (`finish` may never be called)."""
        self._heartbeat.stop()

    def finish(self, job: JobRecord) -> None:
        self._heartbeat.stop()
        self._job, self._status = job, ""
        if self._live is not None:
            self._live.update(self._render(), refresh=True)
            self._live.stop()
            self._live = None


class _StatusLine:
    """The live view's status, rendered anew at each refresh (its tokens/s move while the
    table stands still)."""

    def __init__(self, view: LiveOptimizeView) -> None:
        self.view = view

    def __rich__(self) -> Text:
        return Text(f"… {self.view._status_line()}", style="dim")
