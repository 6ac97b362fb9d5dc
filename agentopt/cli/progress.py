"""Live progress for the terminal: a rich bar on a TTY, plain periodic lines otherwise."""

from __future__ import annotations

import threading
import time
from typing import Any

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

from agentopt.core import heartbeat
from agentopt.core.heartbeat import Heartbeat
from agentopt.reports.formatting import tally_text, tokens_text
from agentopt.workflows.events import Progress


class TerminalSink:
    """Progress sink used by the CLI. Besides the tally, its lines say what is in flight
    (answering, judging) and the model layer's tokens/s, so a slow judge on a CPU model reads
    as working: on a terminal the bar's text is refreshed every second, in plain output the
    heartbeat line carries them."""

    def __init__(
        self,
        console: Console,
        *,
        quiet: bool = False,
        every_s: float = 5.0,
        heartbeat_s: float | None = None,
    ) -> None:
        self.console = console
        self.quiet = quiet
        self.every_s = every_s
        self._progress: Progress | None = None
        quiet_s = heartbeat.HEARTBEAT_S if heartbeat_s is None else heartbeat_s
        self._heartbeat = Heartbeat(self._still_running, quiet_s=quiet_s)
        self._bar: RichProgress | None = None
        self._task: TaskID | None = None
        self._last_line = 0.0
        self._t0 = time.monotonic()

    def _fields(self, p: Progress) -> str:
        """The tally so far, in the summary's classes and words (`reports.formatting`)."""
        tally = tally_text(p.counts) + (f" ({p.source}'s count)" if p.source else "")
        failed = f" · failed calls {p.counts.failed_calls}" if p.counts.failed_calls else ""
        return f"{tally}{failed}  ${p.cost_usd:.4f}"

    @staticmethod
    def _in_flight(p: Progress) -> str:
        """` · answering 1 · judging 2 · 154 tokens at 3.2 tok/s` (what is under way)."""
        parts = [f"{name} {n}" for name, n in (("answering", p.answering), ("judging", p.judging))
                 if n]  # fmt: skip
        tokens = tokens_text(p.meter)
        return "".join(f" · {part}" for part in [*parts, tokens] if part)

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
                title, total=progress.total, completed=progress.done, info=self._info(progress)
            )
            self._progress = progress
            self._heartbeat = Heartbeat(self._refresh, quiet_s=1.0)
            self._heartbeat.start()
        else:
            self.console.print(f"{title}: {progress.total} to run ({progress.skipped} resumed)")
            self._progress = progress
            self._heartbeat.start()

    def _info(self, p: Progress) -> str:
        return f"{self._fields(p)}{self._in_flight(p)}"

    def _refresh(self, _silent_s: float) -> None:
        """On a terminal: the bar's text again (tokens/s moves while nothing finishes)."""
        if self._bar is not None and self._task is not None and self._progress is not None:
            self._bar.update(self._task, info=self._info(self._progress))

    def _still_running(self, silent_s: float) -> None:
        """The plain-output heartbeat: nothing finished for a while, but the run is alive."""
        p = self._progress
        if p is None:
            return
        elapsed = time.monotonic() - self._t0
        self.console.print(
            f"  … {p.done}/{p.total} done, still running{self._in_flight(p)}  "
            f"{self._fields(p)}  {elapsed:.0f}s  (nothing finished for {silent_s:.0f}s)"
        )

    def update(self, progress: Progress, last: str) -> None:
        if self.quiet:
            return
        if self._bar is not None and self._task is not None:
            self._progress = progress
            self._bar.update(self._task, completed=progress.done, info=self._info(progress))
            return
        self._progress = progress
        now = time.monotonic()
        if now - self._last_line >= self.every_s or progress.done == progress.total:
            self._last_line = now
            self._heartbeat.beat()
            elapsed = now - self._t0
            self.console.print(
                f"  {progress.done}/{progress.total} done  {self._info(progress)}  "
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


class PhaseLines:
    """Progress of long model phases (`PhaseSink`): a live status line on a terminal, a plain
    line at least every `every_s` seconds otherwise — what is made so far, tokens/s from the
    call layer's meter, and an ETA once something finished."""

    def __init__(self, console: Console, *, every_s: float = 10.0) -> None:
        self.console = console
        self.every_s = every_s
        self._meter: Any = None
        self._name = ""
        self._unit = ""
        self._total: int | None = None
        self._done = 0
        self._started = time.monotonic()
        self._tokens0 = 0
        self._lock = threading.Lock()
        self._heartbeat: Heartbeat | None = None
        self._status: Any = None

    def attach(self, meter: object) -> None:
        self._meter = meter

    def phase(self, name: str, total: int | None = None, unit: str = "") -> None:
        self.end()
        with self._lock:
            self._name, self._total, self._unit, self._done = name, total, unit, 0
            self._started = time.monotonic()
            self._tokens0 = int(getattr(self._meter, "tokens", 0) or 0)
        if self.console.is_terminal:
            self._status = self.console.status(self.line())
            self._status.start()
            self._heartbeat = Heartbeat(lambda _s: self._status.update(self.line()), quiet_s=1.0)
        else:
            self.console.print(f"  … {self.line()}")
            self._heartbeat = Heartbeat(lambda _s: self.console.print(f"  … {self.line()}"),
                                        quiet_s=self.every_s)  # fmt: skip
        self._heartbeat.start()

    def advance(self, done: int) -> None:
        with self._lock:
            changed, self._done = done != self._done, done
        if changed and self._status is not None:
            self._status.update(self.line())

    def end(self) -> None:
        if self._heartbeat is not None:
            self._heartbeat.stop()
            self._heartbeat = None
        if self._status is not None:
            self._status.stop()
            self._status = None

    def line(self) -> str:
        """ "generating tasks: 1/3 tasks · 12.4 tok/s · 40s · ETA ~1m20s"."""
        with self._lock:
            elapsed = time.monotonic() - self._started
            parts = [self._name]
            if self._total is not None:
                parts[0] += f": {self._done}/{self._total} {self._unit}".rstrip()
            tokens = tokens_text(self._meter, self._tokens0)
            if tokens:
                parts.append(tokens)
            parts.append(f"{elapsed:.0f}s")
            if self._total and 0 < self._done < self._total:
                left = elapsed / self._done * (self._total - self._done)
                parts.append(f"ETA ~{_duration(left)}")
        return " · ".join(parts)


def _duration(seconds: float) -> str:
    minutes, secs = divmod(int(seconds + 0.5), 60)
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"
