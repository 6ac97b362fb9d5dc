"""`agentopt eval calibrate`: a criterion check's agreement with a labelled file."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from agentopt.cli.context import STATE
from agentopt.cli.errors import handle_errors
from agentopt.cli.shared_options import EvalModelOpt
from agentopt.core.atomic import write_bytes_atomic
from agentopt.core.errors import ConfigError

PROGRESS_EVERY_S = 10.0


@handle_errors
def calibrate_command(
    labelled: Annotated[
        Path,
        typer.Argument(
            help="JSONL of labelled pairs: criterion, response, label (pass|fail); "
            "query, kind and agent optional."
        ),
    ],
    method: Annotated[
        str,
        typer.Option(
            "--method",
            help="facts (model-free: facts, negation, similarity) | similarity (similarity "
            "alone) | judge (an LLM judge: --eval-model).",
        ),
    ] = "facts",
    eval_model: EvalModelOpt = None,
    threshold: Annotated[
        float | None,
        typer.Option("--threshold", help="Similarity threshold (default: the calibrated one)."),
    ] = None,
    sweep: Annotated[
        bool,
        typer.Option("--sweep", help="Also report agreement at thresholds 0.30 … 0.70."),
    ] = False,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write the report as JSON.")
    ] = None,
    min_agreement: Annotated[
        float | None,
        typer.Option("--min-agreement", help="Exit 1 when agreement is below this (0..1)."),
    ] = None,
) -> None:
    """Measure how often a criterion check agrees with your labels.

    Scores every labelled criterion/answer pair with builtin.task_adherence the way a run
    does, and reports agreement, answers passed against a "fail" label (contradictions and
    negations apart), answers failed against a "pass" label, and errors (never counted as
    verdicts).
    """
    from agentopt.workflows.calibrate import METHODS, run_calibration
    from agentopt.workflows.generate.suite import call_settings

    if method not in METHODS:
        raise ConfigError.at(
            "", "--method", f"expected one of {', '.join(METHODS)}, found {method}"
        )
    if method == "judge" and not eval_model:
        raise ConfigError("--method judge needs the judge model", hint="pass -m/--eval-model MODEL")
    config = STATE.cwd / "eval.yaml"
    settings = call_settings(config if config.is_file() else None, None, STATE.call_timeout)
    started = time.monotonic()
    last = [started]

    def progress(done: int, total: int) -> None:
        now = time.monotonic()
        if method == "judge" and (now - last[0] >= PROGRESS_EVERY_S or done == total):
            last[0] = now
            STATE.say(f"  {done}/{total} pairs judged  {now - started:.0f}s")

    report = run_calibration(
        STATE.cwd / labelled,
        STATE.cwd,
        settings,
        method=method,
        judge_model=eval_model,
        threshold=threshold,
        sweep=sweep,
        on_notice=STATE.warn,
        on_progress=progress,
    )
    who = f"judge {report.judge_model}" if report.judge_model else f"model-free check ({method})"
    decided = len(report.decided)
    STATE.say(f"Calibration of the {who} on {escape(str(labelled))}: {len(report.rows)} pairs")
    STATE.say(
        f"Agreement {report.agreement:.1%} ({sum(r.agrees for r in report.decided)}/{decided})"
        f" · passed against a fail label {len(report.false_passes)}"
        f" (contradictions and negations {len(report.passed_contradictions)})"
        f" · failed against a pass label {len(report.false_fails)}"
        f" · errors {len(report.errors)}"
    )
    for title, groups in (
        ("kind", report.groups(lambda r: r.pair.kind)),
        ("rule", report.groups(lambda r: r.rule)),
    ):
        if len(groups) > 1 or "-" not in groups:
            cells = "  ".join(f"{k} {a}/{t}" for k, (a, t) in groups.items())
            STATE.say(f"  by {title}: {escape(cells)}")
    for value, agreement in report.sweep:
        STATE.say(f"  threshold {value:.2f}: agreement {agreement:.1%}")
    for row in [r for r in report.rows if not r.agrees][:20]:
        STATE.say(
            f"  line {row.pair.line}: labelled {row.pair.label}, got {row.verdict}"
            f"{f' ({row.rule})' if row.rule else ''}: {escape(row.reason[:140])}"
        )
    if output is not None:
        data = json.dumps(report.to_json(), indent=2, ensure_ascii=False).encode("utf-8")
        write_bytes_atomic(STATE.cwd / output, data + b"\n")
        STATE.say(f"Wrote {escape(str(output))}")
    if min_agreement is not None and report.agreement < min_agreement:
        raise typer.Exit(1)
