"""`eval show --task NAME`: one task's full transcript — each turn's query and response, the
tool calls with arguments and results, citations, and every evaluator's verdict and reason."""

from __future__ import annotations

import difflib

from rich import box
from rich.console import Console, Group, RenderableType
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from agentopt.contracts.eval_result import EvalResult
from agentopt.contracts.outcomes import OUTCOME_COLOURS
from agentopt.contracts.run_results import RunResults
from agentopt.contracts.task_record import TaskOutcome, TurnOutcome
from agentopt.contracts.transcript import Citation, ToolCallRecord, TurnError
from agentopt.core.errors import ConfigError
from agentopt.reports.cells import in_out_text, repeats_text
from agentopt.reports.formatting import (
    as_text,
    criterion_label,
    criterion_verdicts,
    fmt_score,
    fmt_seconds,
    short_name,
    simulation_line,
    truncate,
)

__all__ = ["detail_lines", "find_task", "render_task", "task_renderables"]

_STYLE = OUTCOME_COLOURS
TOOL_TEXT_LIMIT = 2000


def find_task(results: RunResults, name: str) -> TaskOutcome:
    """The task called `name`; otherwise a ConfigError naming --task with close matches."""
    task = results.task(name)
    if task is not None:
        return task
    names = [t.name for t in results.tasks]
    close = difflib.get_close_matches(name, names, n=3, cutoff=0.5)
    hint = f"did you mean: {', '.join(close)}?" if close else f"tasks: {', '.join(names[:8])}"
    if not close and len(names) > 8:
        hint += f", … ({len(names)} in all)"
    raise ConfigError(f"--task: no task named '{name}' in run {results.run.id}", hint=hint)


def render_task(results: RunResults, name: str, console: Console) -> None:
    """Print one task's transcript and verdicts (raises ConfigError for an unknown name)."""
    console.print(Group(*task_renderables(find_task(results, name))))


def task_renderables(task: TaskOutcome) -> list[RenderableType]:
    parts: list[RenderableType] = [_task_header(task)]
    if task.error:
        parts.append(_error_line("Agent error", task.error))
    turns = task.transcript_turns()
    whole = task.evaluation_level == "conversation"
    for i, turn in enumerate(turns, 1):
        if task.turns:
            parts.extend(_turn(turn, f"Turn {i}/{len(turns)}", show_status=not whole))
        else:
            parts.extend(_turn(turn, "Transcript", show_status=False))
    if task.simulation is not None:
        parts.append(Text(simulation_line(task.simulation), style="bold"))
    if whole and task.turns and task.evaluators:
        parts.append(Text("\n── Conversation verdicts", style="bold"))
        parts.append(_verdicts(task.evaluators))
    if task.ground_truth:
        parts.append(_labelled("Ground truth", task.ground_truth, "cyan"))
    if task.repeats:
        parts.append(_repeats(task))
    return parts


def _task_header(task: TaskOutcome) -> Text:
    text = Text(f"Task {task.name}", style="bold")
    text.append(f"  {task.status}", style=f"bold {_STYLE.get(task.status, '')}")
    text.append(f"  score {fmt_score(task.score)}")
    bits = []
    if task.category:
        bits.append(f"category {task.category}")
    if task.tags:
        bits.append("tags " + ", ".join(task.tags))
    bits.append(f"latency {fmt_seconds(task.latency_s)}")
    bits.append(f"tokens {in_out_text(task.tokens.input, task.tokens.output)}")
    if task.flaky:
        bits.append("FLAKY")
    text.append("\n" + " · ".join(bits), style="dim")
    if task.description:
        text.append(f"\n{task.description}", style="italic")
    if task.metadata:
        labels = ", ".join(f"{k}={as_text(v)}" for k, v in task.metadata.items())
        text.append(f"\nmetadata {labels}", style="dim")
    return text


def _turn(turn: TurnOutcome, title: str, *, show_status: bool = True) -> list[RenderableType]:
    heading = Text(f"\n── {title} ", style="bold")
    if show_status:
        heading.append(turn.status, style=_STYLE.get(turn.status, ""))
        heading.append(f"  score {fmt_score(turn.score)}")
        if turn.latency_s:
            heading.append(f"  {fmt_seconds(turn.latency_s)}", style="dim")
    user = "User (simulated)" if turn.simulated else "User"
    parts: list[RenderableType] = [heading, _labelled(user, turn.query or "—", "bold blue")]
    parts.extend(_tool_call(call) for call in turn.tool_calls)
    parts.append(_labelled("Agent", turn.response or "(no response)", "bold green"))
    if turn.citations:
        parts.append(_citations(turn.citations))
    if turn.error:
        parts.append(_error_line("Turn error", turn.error))
    if turn.evaluators:
        parts.append(_verdicts(turn.evaluators))
    return parts


def _labelled(label: str, body: str, style: str) -> RenderableType:
    return Group(Text(f"{label}:", style=style), Padding(Text(body), (0, 0, 0, 2)))


def _tool_call(call: ToolCallRecord) -> RenderableType:
    head = Text("Tool call ", style="bold yellow")
    head.append(call.name, style="yellow")
    if call.source:
        head.append(f"  ({call.source})", style="dim")
    body = Text()
    body.append("arguments: ", style="dim")
    body.append(truncate_block(as_text(call.arguments) or "{}"))
    if call.error:
        body.append("\nerror: ", style="magenta")
        body.append(call.error)
    else:
        body.append("\nresult: ", style="dim")
        body.append(truncate_block(as_text(call.result)))
    return Group(head, Padding(body, (0, 0, 0, 2)))


def truncate_block(text: str, limit: int = TOOL_TEXT_LIMIT) -> str:
    return text if len(text) <= limit else text[:limit] + f"… ({len(text) - limit} more chars)"


def _citations(citations: list[Citation]) -> Text:
    text = Text("Citations:", style="dim")
    for c in citations:
        label = f"[{c.index}]" if c.index is not None else "-"
        text.append(f"\n  {label} ")
        text.append(" ".join(x for x in (c.title, c.url) if x))
    return text


def _error_line(label: str, error: TurnError) -> Text:
    text = Text(f"{label}: ", style="bold magenta")
    text.append(f"{error.code}: {error.message}")
    return text


def _verdicts(results: list[EvalResult]) -> Table:
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False)
    table.add_column("Evaluator")
    table.add_column("Verdict")
    table.add_column("Score", justify="right")
    table.add_column("Reason", overflow="fold")
    for res in results:
        score = "—" if res.score is None else f"{res.score:g}"
        if res.threshold is not None and res.score is not None:
            score += f" (≥{res.threshold:g})"
        reason = Text(res.reason)
        if res.error:
            reason = Text(f"{res.error.code}: {res.error.message}", style="magenta")
        for line in detail_lines(res):
            reason.append("\n" + line, style="dim")
        table.add_row(
            Text(short_name(res.evaluator)),
            Text(res.status, style=_STYLE.get(res.status, "")),
            score,
            reason,
        )
    return table


def detail_lines(res: EvalResult) -> list[str]:
    """Criterion verdicts and rubric dimension scores from `details`, one line each."""
    lines: list[str] = []
    for v in criterion_verdicts(res):
        mark = "✓" if v.get("passed") else "✗"
        lines.append(f"{mark} {criterion_label(v)}: {truncate(str(v.get('reason', '')), 120)}")
    for d in res.details.get("dimension_scores") or []:
        if isinstance(d, dict):
            if d.get("applicable") is False:
                lines.append(f"· {d.get('id', '?')}: n/a")
                continue
            weight = f" ×{d['weight']}" if d.get("weight") is not None else ""
            reason = truncate(str(d.get("reason", "")), 100)
            lines.append(f"· {d.get('id', '?')}: {d.get('score', '?')}{weight} {reason}".rstrip())
    return lines


def _repeats(task: TaskOutcome) -> RenderableType:
    title = repeats_text(task) + ("  FLAKY" if task.flaky else "")
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column("#", justify="right")
    table.add_column("Status")
    table.add_column("Score", justify="right")
    table.add_column("Response", overflow="fold")
    for rep in task.repeats or []:
        table.add_row(
            str(rep.repeat + 1),
            Text(rep.status, style=_STYLE.get(rep.status, "")),
            fmt_score(rep.score),
            Text(truncate(rep.response, 100)),
        )
    return Group(Text(title, style="bold"), table)
