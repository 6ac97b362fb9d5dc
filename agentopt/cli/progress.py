"""Live progress for the terminal: a rich bar on a TTY, plain periodic lines otherwise."""

from __future__ import annotations

import time

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)
from rich.progress import (
    Progress as RichProgress,
)

from agentopt.core.heartbeat import HEARTBEAT_S, Heartbeat
from agentopt.reports.formatting import tally_text
from agentopt.workflows.events import Progress


class TerminalSink:
    """Progress sink used by the CLI."""

    def __init__(
        self,
        console: Console,
        *,
        quiet: bool = False,
        every_s: float = 5.0,
        heartbeat_s: float = HEARTBEAT_S,
    ) -> None:
        self.console = console
        self.quiet = quiet
        self.every_s = every_s
        self._progress: Progress | None = None
        self._heartbeat = Heartbeat(self._still_running, quiet_s=heartbeat_s)
        self._bar: RichProgress | None = None
        self._task: TaskID | None = None
        self._last_line = 0.0
        self._t0 = time.monotonic()

    def _fields(self, p: Progress) -> str:
        """The tally so far, in the summary's classes and words (`reports.formatting`)."""
        tally = tally_text(p.counts) + (f" ({p.source}'s count)" if p.source else "")
        failed = f" · failed calls {p.counts.failed_calls}" if p.counts.failed_calls else ""
        return f"{tally}{failed}  ${p.cost_usd:.4f}"

    def start(self, progress: Progress, title: str) -> None:
        self._t0 = time.monotonic()
        if self.quiet:
            return
        if self.console.is_terminal:
            self._bar = RichProgress(
                TextColumn("[bold]{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[info]}"),
                TimeElapsedColumn(),
                console=self.console,
                transient=True,
            )
            self._bar.start()
            self._task = self._bar.add_task(
                title, total=progress.total, completed=progress.done, info=self._fields(progress)
            )
        else:
            self.console.print(f"{title}: {progress.total} to run ({progress.skipped} resumed)")
            self._progress = progress
            self._heartbeat.start()

    def _still_running(self, silent_s: float) -> None:
        """The plain-output heartbeat: nothing finished for a while, but the run is alive."""
        p = self._progress
        if p is None:
            return
        elapsed = time.monotonic() - self._t0
        self.console.print(
            f"  … {p.done}/{p.total} done, still running  {self._fields(p)}  {elapsed:.0f}s  "
            f"(nothing finished for {silent_s:.0f}s)"
        )

    def update(self, progress: Progress, last: str) -> None:
        if self.quiet:
            return
        if self._bar is not None and self._task is not None:
            self._bar.update(self._task, completed=progress.done, info=self._fields(progress))
            return
        self._progress = progress
        now = time.monotonic()
        if now - self._last_line >= self.every_s or progress.done == progress.total:
            self._last_line = now
            self._heartbeat.beat()
            elapsed = now - self._t0
            self.console.print(
                f"  {progress.done}/{progress.total} done  {self._fields(progress)}  "
                f"{elapsed:.0f}s  (last: {last})"
            )

    def notice(self, message: str) -> None:
        # soft_wrap: a long URL stays on one line, so it pastes (and clicks) whole.
        if self._bar is not None:
            self._bar.console.print(message, soft_wrap=True)
        elif not self.quiet:
            self.console.print(message, soft_wrap=True)

    def close(self) -> None:
        """Stop the heartbeat, whatever ended the run (`finish` may never be called)."""
        self._heartbeat.stop()

    def finish(self, progress: Progress) -> None:
        self._heartbeat.stop()
        if self._bar is not None:
            self._bar.stop()
            self._bar = None
