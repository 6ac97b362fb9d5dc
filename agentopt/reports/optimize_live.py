"""The live view of `agentopt optimize`: the candidate table growing as candidates finish.

On a terminal it is a rich Live display (the table plus one status line); elsewhere (CI logs,
pipes) a header and one fixed-width line per candidate. It implements the optimize workflow's
sink protocol by shape, so this module needs nothing from the workflow layer.
"""

from __future__ import annotations

from rich.console import Console, Group
from rich.live import Live
from rich.text import Text

from agentopt.contracts.optimize_job import CandidateRecord, JobRecord
from agentopt.core.redaction import redact
from agentopt.reports.optimize_table import candidates_table, header_line, row_line


class LiveOptimizeView:
    """Renders optimize progress on a console."""

    def __init__(self, console: Console, *, quiet: bool = False) -> None:
        self.console = console
        self.quiet = quiet
        self._live: Live | None = None
        self._job: JobRecord | None = None
        self._status = ""
        self._header = False

    @property
    def interactive(self) -> bool:
        return self.console.is_terminal and not self.quiet

    def _render(self) -> Group:
        parts: list[Text | object] = []
        if self._job is not None:
            parts.append(candidates_table(self._job))
        if self._status:
            parts.append(Text(f"… {self._status}", style="dim"))
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
        self._refresh()

    def notice(self, message: str) -> None:
        if self.quiet:
            return
        text = Text(f"note: {redact(message)}", style="yellow")
        if self._live is not None:
            self._live.console.print(text)
        else:
            self.console.print(text)

    def candidate(self, job: JobRecord, candidate: CandidateRecord) -> None:
        self._job = job
        if self.interactive:
            self._refresh()
            return
        if self.quiet:
            return
        if not self._header:
            self.console.print(header_line(), highlight=False, soft_wrap=True)
            self._header = True
        self.console.print(row_line(candidate), highlight=False, soft_wrap=True)

    def stalled(self, number: int, strategy: str, reason: str) -> None:
        if self.quiet:
            return
        text = Text(f"  proposal {number} ({strategy}): no candidate — {redact(reason)}", "dim")
        if self._live is not None:
            self._live.console.print(text)
        else:
            self.console.print(text, soft_wrap=True)

    def finish(self, job: JobRecord) -> None:
        self._job, self._status = job, ""
        if self._live is not None:
            self._live.update(self._render(), refresh=True)
            self._live.stop()
            self._live = None
