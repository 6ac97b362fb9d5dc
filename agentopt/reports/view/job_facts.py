"""The phrases the view shows about a job, taken from its job.json record: the record's own
candidate tally and stop phrase. Nothing is recounted here."""

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
    """Why the job stopped, in the record's one phrase; '' while it runs."""
    if job.stop_reason or job.status == "running":
        return job.stop_reason
    return job.status.replace("_", " ")


def stop_detail(job: JobRecord) -> str:
    detail = _record(job, "stop_detail")
    return detail if isinstance(detail, str) else ""


def leak_refusals(job: JobRecord) -> int:
    """Proposals refused because they carried a task's query or answer (0 when not recorded)."""
    n = _record(job, "leak_refusals")
    return n if isinstance(n, int) else 0


def candidate_line(job: JobRecord) -> str:
    """The record's tally line (`5 proposed: 2 evaluated …`), as `optimize list` shows it."""
    return job.counts.line()
