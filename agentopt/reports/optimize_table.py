"""The optimize candidate table (cli.md): Candidate, Score, Pass, Tokens, Cost, Strategy, with
★ on the best when it beats the baseline beyond the noise and "(pareto)" on the other
Pareto-optimal candidates. A rich Table for terminals, fixed-width lines for logs."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text

from agentopt.contracts.optimize_job import CandidateRecord, JobRecord

COLUMNS = ("Candidate", "Score", "Pass", "Tokens", "Cost", "Strategy")
RIGHT = frozenset({"Score", "Pass", "Tokens", "Cost"})


def fmt_score(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def error_line(job: JobRecord) -> str | None:
    """One line on the evaluations that failed, or None when none did: "4 evaluations failed
    after a re-run (agentTimeout ×4; candidates cand_01, cand_02): the decision rests on
    incomplete evaluations"."""
    e = job.errors
    if not e.units:
        return None
    kinds = ", ".join(f"{code} ×{n}" for code, n in sorted(e.by_code.items()))
    who = ", ".join(e.candidates)
    return (
        f"{e.units} evaluation{'s' if e.units != 1 else ''} failed after a re-run ({kinds}; "
        f"{who}): the decision rests on incomplete evaluations"
    )


def _cost(value: float | None) -> str:
    if value is None:
        return "-"
    return f"${value:.3f}" if value < 10 else f"${value:,.2f}"


def candidate_cells(c: CandidateRecord) -> list[str]:
    """The six cells of one candidate's row."""
    name = f"{c.id} ★" if c.star else c.id
    strategy = c.strategy or "-"
    v = c.validation
    if v is None:
        if c.status == "incomplete" and c.screening is not None:
            note = (
                f"(incomplete: {c.screening.errors} of {len(c.screening.tasks)} screening "
                "tasks failed)"
            )
        elif c.status == "screened_out" and c.screening is not None:
            s = c.screening
            note = f"(screened out: {fmt_score(s.child)} ≤ parent {fmt_score(s.parent)})"
        elif c.status == "outranked" and c.outranked is not None:
            o = c.outranked
            note = (
                f"(outranked after {o.tasks} of {o.of} validation tasks: at most "
                f"{fmt_score(o.at_most)} < {o.best} {fmt_score(o.best_score)})"
            )
        elif c.status in ("screening", "evaluating"):
            note = "(not finished)"
        else:
            note = f"({c.status})"
        return [name, "-", "-", "-", "-", f"{strategy}  {note}"]
    if c.pareto.any and not c.star:
        strategy += "  (pareto)"
    if not c.eligible:
        strategy += "  (not eligible: errors)"
    elif v.errors:
        strategy += f"  ({v.errors} of {v.n} tasks failed: incomplete)"
    return [
        name,
        "-" if v.score is None else f"{v.score:.3f}",
        f"{v.pass_rate * 100:.0f}%",
        "-" if c.tokens is None else f"{c.tokens:.0f}",
        _cost(c.cost),
        strategy,
    ]


def shown_candidates(job: JobRecord, *, screened: bool = True) -> list[CandidateRecord]:
    """Rows in creation order: evaluated ones, and (optionally) those screened out."""
    return [
        c
        for c in sorted(job.candidates, key=lambda c: c.number)
        if c.validation is not None
        or c.status == "outranked"
        or (screened and c.status in ("screened_out", "incomplete"))
    ]


def candidates_table(job: JobRecord, *, screened: bool = True) -> Table:
    """The rich table of the job's candidates."""
    table = Table(box=None, pad_edge=False, padding=(0, 2, 0, 0), show_edge=False)
    for col in COLUMNS:
        # Only Strategy may wrap: in 80 columns the others keep their full width.
        wrap = col == "Strategy"
        table.add_column(
            col,
            justify="right" if col in RIGHT else "left",
            no_wrap=not wrap,
            overflow="fold" if wrap else "ellipsis",
            min_width=None if wrap else len(col),
        )
    for c in shown_candidates(job, screened=screened):
        cells = candidate_cells(c)
        style = "bold" if c.star else ("dim" if c.validation is None else "")
        table.add_row(*(Text(cell) for cell in cells), style=style)
    return table


def _line(cells: list[str]) -> str:
    """cli.md's layout: name 21 wide, Score 5 →, Pass 4 →, Tokens 6 →, Cost 9 ←, Strategy."""
    name, score, passed, tokens, cost, strategy = cells
    return f"  {name:<21}{score:>5}   {passed:>4}  {tokens:>6}  {cost:<9}{strategy}".rstrip()


def header_line() -> str:
    """`  Candidate            Score   Pass  Tokens  Cost     Strategy`"""
    return _line(list(COLUMNS))


def row_line(c: CandidateRecord) -> str:
    """One candidate as a fixed-width line (non-terminal output)."""
    return _line(candidate_cells(c))
