"""The phrases the view shows about a job, taken from its job.json record: the record's own
candidate tally and stop line. Nothing is recounted or reworded here."""

from __future__ import annotations

from agentopt.contracts.optimize_job import JobRecord

__all__ = ["candidate_line", "stop_phrase"]


def stop_phrase(job: JobRecord) -> str:
    """Why the job stopped, as every view says it (`JobRecord.stop_reason`); '' while it runs."""
    if job.stop_reason or job.status == "running":
        return job.stop_reason
    return job.status.replace("_", " ")


def candidate_line(job: JobRecord) -> str:
    """The record's tally line (`5 proposed: 2 evaluated …`), as `optimize list` shows it."""
    return job.counts.line()
