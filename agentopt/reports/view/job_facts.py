"""The phrases the view shows about a job, taken from what its job.json carries: the record's
own candidate tally and stop phrase when it has them, else the fields every version writes.
Nothing is recounted here."""

from __future__ import annotations

from typing import Any

from agentopt.contracts.optimize_job import JobRecord

__all__ = ["candidate_line", "leak_refusals", "stop_detail", "stop_phrase"]


def _record(job: JobRecord, name: str) -> Any:
    """A value the record may carry (a property, a field, or a key kept from a newer file)."""
    value = getattr(job, name, None)
    if value is None and job.model_extra:
        value = job.model_extra.get(name)
    return value


def stop_phrase(job: JobRecord) -> str:
    """Why the job stopped, in the record's own words; '' while it runs."""
    phrase = _record(job, "stop_reason")
    if isinstance(phrase, str) and phrase:
        return phrase
    if job.status == "running" and not job.termination_reason:
        return ""
    return (job.termination_reason or job.status).replace("_", " ")


def stop_detail(job: JobRecord) -> str:
    detail = _record(job, "stop_detail")
    return detail if isinstance(detail, str) else ""


def leak_refusals(job: JobRecord) -> int:
    """Proposals refused because they carried a task's query or answer (0 when not recorded)."""
    n = _record(job, "leak_refusals")
    return n if isinstance(n, int) else 0


def candidate_line(job: JobRecord) -> str:
    """The record's tally line (`5 proposed: 2 evaluated …`), else how many it lists."""
    counts = _record(job, "counts")
    line = getattr(counts, "line", None)
    if callable(line):
        return str(line())
    proposed = sum(1 for c in job.candidates if c.id != "baseline")
    return f"{proposed} proposed"
