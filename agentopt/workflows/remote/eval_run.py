"""`agentopt eval run --remote`: Foundry runs the deployed agent and its judges; agentopt
writes the same run folder a local run writes (run.json, journal.jsonl, results.json), so
`eval show`, `--compare`, the reports and the gates work on it unchanged.

    register → create (or reuse) the evaluation → create the run → save its ids in run.json
    → poll (429/5xx retried) → fetch every output item (paged) → local evaluators over the
    remote transcripts → journal → results.json → --output files → gates

The ids are saved before the first poll: a poll that outlives the terminal is continued by
`eval run --resume RUN_ID` or `eval show RUN_ID --watch`, never by a second evaluation.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from agentopt.contracts.eval_result import EvalResult
from agentopt.contracts.outcomes import OutcomeCounts
from agentopt.contracts.run_journal import RunJournalEntry
from agentopt.contracts.run_results import RemoteRunInfo, UsageBucket
from agentopt.core.errors import Interrupted
from agentopt.evaluators.aggregate import score_transcript
from agentopt.evaluators.base import BuildContext
from agentopt.evaluators.build import EvaluatorCache
from agentopt.evaluators.registry import canonical_name
from agentopt.evaluators.samples import evaluate_sample, samples_from_run
from agentopt.models.call import CallLayer
from agentopt.workflows.events import Progress, ProgressSink
from agentopt.workflows.remote.client import FoundryProject, ProjectFactory, describe, plain
from agentopt.workflows.remote.errors import RemoteRunFailed
from agentopt.workflows.remote.eval_items import match_items, outcome_of
from agentopt.workflows.remote.eval_setup import RemoteSetup
from agentopt.workflows.remote.eval_submit import submit
from agentopt.workflows.remote.polling import PollSettings, poll_until
from agentopt.workflows.run.eval_run import RunOutcome, conclude
from agentopt.workflows.run.finish import finish_results, new_run_info
from agentopt.workflows.run.records import repeat_record
from agentopt.workflows.run.store import RunStore

TERMINAL = ("completed", "failed", "canceled", "cancelled")


def run_remote(
    setup: RemoteSetup,
    sink: ProgressSink,
    *,
    poll: PollSettings | None = None,
    project_factory: ProjectFactory | None = None,
) -> RunOutcome:
    """Create (or, for a resumed/watched run, find) the remote run; wait; write the results.

    With `setup.opts.no_wait` it returns right after the run is created (no results yet).
    """
    store = setup.store or RunStore(setup.spec.project_dir)
    outcome = RunOutcome(inputs=setup.inputs, run_id=store.run_id, notices=list(setup.notices))
    run_info = new_run_info(store, setup.opts, setup.inputs, setup.spec, setup.seed)
    run_info.agent.target = "foundry"
    factory = project_factory or FoundryProject
    with factory(setup.endpoint) as project:
        remote = run_info.remote.model_dump(mode="json") if run_info.remote else {}
        resumed = bool(remote.get("run_id"))
        if not resumed:
            remote = submit(project, setup, store.run_id)
            run_info.remote = RemoteRunInfo.model_validate(remote)
            store.write_run(run_info)
        outcome.remote = remote
        sink.notice(started_block(remote, resumed=resumed))
        if setup.opts.no_wait:
            return outcome
        status = _wait(project, setup, remote, store.run_id, sink, poll or PollSettings.eval_run())
        remote["status"] = status.get("status")
        remote["result_counts"] = status.get("result_counts")
        run_info.remote = RemoteRunInfo.model_validate(remote)
        if status.get("status") != "completed":
            run_info.status = "failed"
            store.write_run(run_info)
            raise RemoteRunFailed(
                f"the remote evaluation run {remote['run_id']} ended {status.get('status')}: "
                f"{describe(status.get('error') or 'no error details')}",
                hint=f"see the run in the portal: {remote.get('report_url') or 'Foundry portal'}",
            )
        items = _items(project, remote)
    started = time.monotonic()
    layer = CallLayer(setup.spec.project_dir, setup.settings, on_notice=outcome.notices.append)
    try:
        asyncio.run(_journal(setup, store, items, remote.get("source"), layer, sink))
    finally:
        asyncio.run(layer.aclose())
    run_info.usage_before = {**run_info.usage_before, "agent": _agent_usage(store)}
    outcome.results_path, outcome.results = finish_results(
        store,
        run_info,
        setup.spec,
        layer,
        setup.seed,
        "completed",
        started,
        keep_all=bool(setup.outputs or setup.opts.baseline),
    )
    conclude(outcome, setup.opts, setup.spec, setup.seed, setup.outputs)
    return outcome


def started_block(remote: dict[str, Any], *, resumed: bool = False) -> str:
    """What azd prints once the run exists (eval id, run id, portal report)."""
    lines = [
        "Following eval run" if resumed else "Eval run started",
        f"   Eval:   {remote['eval_id']}",
        f"   Run:    {remote['run_id']}",
    ]
    if remote.get("report_url"):
        lines.append(f"   Report: {remote['report_url']}")
    return "\n".join(lines)


def _wait(
    project: FoundryProject,
    setup: RemoteSetup,
    remote: dict[str, Any],
    run_id: str,
    sink: ProgressSink,
    poll: PollSettings,
) -> dict[str, Any]:
    progress = Progress(total=len(setup.tasks))
    sink.start(progress, f"Foundry is evaluating {len(setup.tasks)} tasks (run {remote['run_id']})")

    def read() -> dict[str, Any]:
        run = project.call(
            "reading the evaluation run",
            lambda: project.openai.evals.runs.retrieve(remote["run_id"], eval_id=remote["eval_id"]),
        )
        return plain(run)

    def on_status(status: dict[str, Any]) -> None:
        counts = status.get("result_counts") or {}
        progress.done = int(counts.get("total") or 0)
        # Foundry's own tally while it evaluates (its "errored": no verdict); agentopt's
        # classes replace it once the results are read back.
        progress.source = "Foundry"
        progress.counts = OutcomeCounts(
            passed=int(counts.get("passed") or 0),
            failed=int(counts.get("failed") or 0),
            partial=int(counts.get("errored") or 0),
        )
        sink.update(progress, f"remote run {status.get('status')}")

    hint = f"follow it with `agentopt eval show {run_id} --watch`"
    try:
        return poll_until(
            read,
            lambda s: s.get("status") in TERMINAL,
            poll,
            on_status=on_status,
            what=f"the remote evaluation run {remote['run_id']}",
            resume_hint=hint,
        )
    except KeyboardInterrupt:
        raise Interrupted(
            f"stopped waiting: the remote run {remote['run_id']} goes on in the project",
            hint=f"{hint}, or `agentopt eval run --resume {run_id}`",
        ) from None
    finally:
        sink.finish(progress)


def _items(project: FoundryProject, remote: dict[str, Any]) -> list[dict[str, Any]]:
    """Every output item of the run (the SDK follows `has_more` / `after`)."""

    def fetch() -> list[dict[str, Any]]:
        pages = project.openai.evals.runs.output_items.list(
            remote["run_id"], eval_id=remote["eval_id"], limit=100
        )
        return [plain(item) for item in pages]

    return project.call("fetching the evaluation results", fetch)


async def _journal(
    setup: RemoteSetup,
    store: RunStore,
    items: list[dict[str, Any]],
    source: str | None,
    layer: CallLayer,
    sink: ProgressSink,
) -> None:
    """One journal line per task, as the local engine writes it."""
    tasks = setup.tasks
    row_of = _rows(setup, source)
    matched = match_items(items, tasks, row_of)
    cache = EvaluatorCache(
        BuildContext(
            judge_model=setup.inputs.judge_model, layer=layer, project_dir=setup.spec.project_dir
        )
    )
    done = store.done_keys()
    progress = Progress(total=len(tasks), done=len(done), skipped=len(done))
    sink.start(progress, f"Recording {len(tasks)} remote results")
    try:
        for pos, task in enumerate(tasks):
            if (pos, 0) in done:
                continue
            remote = outcome_of(matched.get(pos), task, setup.criteria, setup.agent_name)
            transcript = remote.transcript
            results: list[EvalResult] = []
            if transcript.error is None:
                wanted = [u for u in setup.local if canonical_name(u.name) in setup.selected[pos]]
                evaluated: dict[str, EvalResult] = {}
                if wanted:
                    sample = samples_from_run(task, transcript, agent_name=setup.agent_name or "")[
                        0
                    ]
                    got = await evaluate_sample([cache.get(u) for u in wanted], sample)
                    evaluated = {
                        canonical_name(u.name): r for u, r in zip(wanted, got, strict=True)
                    }
                for name in setup.selected[pos]:
                    result = remote.results.get(name) or evaluated.get(name)
                    if result is not None:
                        results.append(result)
            score = score_transcript(task.name, transcript, [results], n_turns=1, repeat=0)
            record = repeat_record(task, transcript, score)
            store.append(RunJournalEntry(task=pos, repeat=0, score=score, record=record))
            progress.done += 1
            progress.source = ""
            progress.counts = store.tally.counts
            sink.update(progress, f"{task.name}: {score.status}")
    finally:
        sink.finish(progress)


def _rows(setup: RemoteSetup, source: str | None) -> dict[int, int]:
    """Row index of the data source → task position: inline rows are in task order; a
    registered file has one row per dataset record, i.e. `Task.index`."""
    if source == "file_id":
        return {task.index: pos for pos, task in enumerate(setup.tasks)}
    return {pos: pos for pos in range(len(setup.tasks))}


def _agent_usage(store: RunStore) -> UsageBucket:
    """The deployed agent's tokens as Foundry reported them (every journaled task)."""
    latest = {entry.task: entry.record for entry in store.entries()}
    return UsageBucket(
        calls=len(latest),
        input_tokens=sum(r.tokens.input for r in latest.values()),
        output_tokens=sum(r.tokens.output for r in latest.values()),
    )
