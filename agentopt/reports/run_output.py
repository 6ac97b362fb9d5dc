"""Per-row run output in the shape of azd's `run output list` (azd-eval.md §4.3), and its
export as JSONL, CSV or one JSON document (`eval run output list|show|export`).

A row is one task run (a task, or one repeat of it). Its item is
`{id, run_id, status, datasource_item {name, query, ground_truth}, response, results [{name,
metric, score, label, passed, reason}]}`; `passed` is null when the evaluator could not run
(an error is never a score). The CSV holds the same rows flat, one column group per evaluator,
so reading the CSV back gives the same values as the JSONL (`rows_from_csv`).
"""

from __future__ import annotations

import csv
import io
import json
from typing import Any, Literal

from agentopt.contracts.eval_result import EvalResult
from agentopt.contracts.run_results import RunResults
from agentopt.contracts.task_record import TaskOutcome

ExportFormat = Literal["jsonl", "csv", "json"]
FORMATS: tuple[ExportFormat, ...] = ("jsonl", "csv", "json")
ROW_STATUS = {"pass": "passed", "fail": "failed", "partial": "errored", "error": "errored"}
"""agentopt's task status → the row status azd prints."""
BASE_COLUMNS = ("id", "run_id", "status", "name", "query", "ground_truth", "response")
RESULT_FIELDS = ("score", "label", "passed", "reason")


def output_items(results: RunResults) -> list[dict[str, Any]]:
    """Every row of the run, in task order (repeats in order)."""
    items: list[dict[str, Any]] = []
    for task in results.tasks:
        for repeat, status, response, evaluators in _runs(task):
            row_id = task.name if repeat is None else f"{task.name}#{repeat}"
            items.append(
                {
                    "id": row_id,
                    "run_id": results.run.id,
                    "status": ROW_STATUS.get(status, status),
                    "datasource_item": {
                        "name": task.name,
                        "query": task.query,
                        "ground_truth": task.ground_truth,
                    },
                    "response": response,
                    "results": [_result(r) for r in evaluators],
                }
            )
    return items


def _runs(task: TaskOutcome) -> list[tuple[int | None, str, str, list[EvalResult]]]:
    if task.repeats:
        return [(r.repeat, r.status, r.response, r.evaluators) for r in task.repeats]
    return [(None, task.status, task.response, task.evaluators)]


def _result(r: EvalResult) -> dict[str, Any]:
    ran = r.status in ("pass", "fail")
    return {
        "name": r.evaluator,
        "metric": r.evaluator.removeprefix("builtin."),
        "score": r.score if ran else None,
        "label": r.status if ran else "error",
        "passed": (r.status == "pass") if ran else None,
        "reason": r.reason or (r.error.message if r.error else ""),
    }


def failed_only(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`--failed-only`: the rows that did not pass."""
    return [i for i in items if i["status"] != "passed"]


def render(results: RunResults, fmt: ExportFormat, items: list[dict[str, Any]]) -> str:
    """The export text of `items` (rows of `results`)."""
    if fmt == "jsonl":
        return "".join(json.dumps(i, ensure_ascii=False) + "\n" for i in items)
    if fmt == "json":
        run = results.model_dump(mode="json", include={"run", "summary"})
        return json.dumps({**run, "items": items}, indent=2, ensure_ascii=False) + "\n"
    return _csv(items)


def _names(items: list[dict[str, Any]]) -> list[str]:
    names: list[str] = []
    for item in items:
        for r in item["results"]:
            if r["name"] not in names:
                names.append(r["name"])
    return names


def _csv(items: list[dict[str, Any]]) -> str:
    names = _names(items)
    header = [*BASE_COLUMNS, *(f"{n}.{f}" for n in names for f in RESULT_FIELDS)]
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    for item in items:
        source = item["datasource_item"]
        row: list[Any] = [
            item["id"],
            item["run_id"],
            item["status"],
            source["name"],
            source["query"],
            source["ground_truth"],
            item["response"],
        ]
        by_name = {r["name"]: r for r in item["results"]}
        for name in names:
            r = by_name.get(name)
            row += [_cell(r[f]) if r else "" for f in RESULT_FIELDS]
        writer.writerow([_cell(v) for v in row])
    return out.getvalue()


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def rows_from_csv(text: str) -> list[dict[str, str]]:
    """The CSV export read back as one dict per row (every value as its text)."""
    return list(csv.DictReader(io.StringIO(text)))
