"""Evaluations of the fake Foundry project: the OpenAI-compatible evals API with Foundry's
agent-target data source and `azure_ai_evaluator` testing criteria.

Spec sources (Azure/azure-rest-api-specs, specification/ai-foundry/data-plane/Foundry/src/):
- `openai/evaluations/routes.tsp`: `POST /openai/v1/evals` (createEval), `GET …/{eval_id}`,
  `POST …/{eval_id}/runs` (createEvalRun), `GET …/runs/{run_id}` (getEvalRun),
  `GET …/runs/{run_id}/output_items` (getEvalRunOutputItems: `after`, `limit` 1–100 default 20,
  `order` asc|desc default asc, `AgentsPagedResult` `{data, first_id, last_id, has_more}`).
- `openai/evaluations/models.tsp`: `TestingCriterionAzureAIEvaluator` `{type:
  "azure_ai_evaluator", name, evaluator_name, evaluator_version?, initialization_parameters?,
  data_mapping?}`, `TargetCompletionEvalRunDataSource` `{type: "azure_ai_target_completions",
  input_messages?, source: EvalJsonlFileContentSource {type: "file_content", content: [{item,
  sample?}]} | EvalJsonlFileIdSource {type: "file_id", id}, target: AzureAIAgentTarget {type:
  "azure_ai_agent", name, version?, tool_descriptions?}}`, `EvalRun` (status queued →
  in_progress → completed | failed | canceled, `result_counts` with `errored`/`skipped`,
  `per_testing_criteria_results`, `report_url`, `error`), `EvalRunOutputItem` with `sample`
  (`output[].tool_calls` `CompletionMessageToolCallChunk`) and `results[]`
  (`EvalRunOutputItemResult`: name, type, score, passed, status completed|errored|skipped,
  metric, label, threshold, reason).

The deployed agent is simulated by `agent(item, agent_name) -> Answer`; each testing criterion
by `grader(criterion, item, answer) -> result dict` (`default_grader`: passes when the
ground truth occurs in the answer).
"""

from __future__ import annotations

import itertools
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tests.foundry.fake_project import FakeFoundry, Logged, Reply

_ids = itertools.count(1)
BUILTINS = {
    "builtin.task_adherence",
    "builtin.intent_resolution",
    "builtin.relevance",
    "builtin.coherence",
    "builtin.fluency",
    "builtin.groundedness",
    "builtin.similarity",
    "builtin.tool_call_accuracy",
}
RANGE_1_5 = BUILTINS - {"builtin.task_adherence"}


@dataclass
class Answer:
    """What the simulated deployed agent did with one dataset row."""

    text: str = ""
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    """`{"name", "arguments": {…}, "result": …}` — rendered as assistant `tool_calls` plus a
    `tool` message carrying the result."""
    error: dict[str, str] | None = None
    """`{"code", "message"}`: the agent call failed for this row."""
    usage: tuple[int, int] = (20, 10)


Grader = Callable[[dict[str, Any], dict[str, Any], Answer], dict[str, Any]]


def default_agent(item: dict[str, Any], agent: str) -> Answer:
    return Answer(text=f"{agent} answers: {item.get('query', '')}")


def default_grader(
    criterion: dict[str, Any], item: dict[str, Any], answer: Answer
) -> dict[str, Any]:
    """Pass when the row's ground truth occurs in the answer (or there is none)."""
    truth = str(item.get("ground_truth") or "")
    passed = not truth or truth.lower() in answer.text.lower()
    scaled = criterion["evaluator_name"] in RANGE_1_5
    score = (5.0 if passed else 1.0) if scaled else (1.0 if passed else 0.0)
    return {
        "score": score,
        "passed": passed,
        "status": "completed",
        "label": "pass" if passed else "fail",
        "threshold": 3.0 if scaled else 0.5,
        "reason": "mentions the expected answer" if passed else "misses the expected answer",
    }


def _reply(status: int, body: Any = None, headers: dict[str, str] | None = None) -> Reply:
    from tests.foundry.fake_project import Reply

    return Reply(status, body, headers or {})


def _error(status: int, code: str, message: str) -> Reply:
    return _reply(status, {"error": {"code": code, "message": message}})


class EvalRoutes:
    """Evals, runs, output items."""

    def __init__(self, server: FakeFoundry, *, agent: Any = None, grader: Grader | None = None):
        self.server = server
        self.agent = agent or default_agent
        self.grader = grader or default_grader
        self.evals: dict[str, dict[str, Any]] = {}
        self.runs: dict[str, dict[str, Any]] = {}
        self.items: dict[str, list[dict[str, Any]]] = {}
        self._gets: dict[str, int] = {}
        self.page_cap = 100
        """The most items a page holds whatever `limit` asks (a server may send fewer)."""
        self.fail_runs: dict[str, str] | None = None
        """Set `{"code", "message"}` to make every new run end `failed` with that error."""

    def routes(self) -> list[tuple[str, re.Pattern[str], Any]]:
        c = re.compile
        base = r"/openai/v1/evals"
        return [
            ("POST", c(base), self.create_eval),
            ("GET", c(base + r"/([^/]+)"), self.get_eval),
            ("POST", c(base + r"/([^/]+)/runs"), self.create_run),
            ("GET", c(base + r"/([^/]+)/runs/([^/]+)"), self.get_run),
            ("GET", c(base + r"/([^/]+)/runs/([^/]+)/output_items"), self.output_items),
        ]

    # -- evals -------------------------------------------------------------------------------
    def create_eval(self, req: Logged, m: re.Match[str]) -> Reply:
        body = req.body if isinstance(req.body, dict) else {}
        config = body.get("data_source_config")
        if not isinstance(config, dict) or config.get("type") not in ("custom", "azure_ai_source"):
            return _error(400, "invalid_request", "data_source_config.type must be custom")
        if config["type"] == "custom" and not isinstance(config.get("item_schema"), dict):
            return _error(400, "invalid_request", "a custom data source needs item_schema")
        criteria = body.get("testing_criteria")
        if not isinstance(criteria, list) or not criteria:
            return _error(400, "invalid_request", "testing_criteria must be a non-empty list")
        for crit in criteria:
            if crit.get("type") != "azure_ai_evaluator" or not crit.get("name"):
                return _error(400, "invalid_request", f"unsupported testing criterion {crit!r}")
            name, version = crit.get("evaluator_name"), crit.get("evaluator_version")
            known = name in BUILTINS or self.server.assets.evaluator_known(name, version)
            if not known:
                return _error(400, "EvaluatorNotFound", f"evaluator {name} ({version}) not found")
        eval_id = f"eval_{next(_ids):04d}"
        record = {
            "object": "eval",
            "id": eval_id,
            "name": body.get("name"),
            "metadata": body.get("metadata") or {},
            "data_source_config": config,
            "testing_criteria": criteria,
            "created_at": int(time.time()),
            "created_by": "fake-user",
        }
        self.evals[eval_id] = record
        return _reply(200, record)

    def get_eval(self, req: Logged, m: re.Match[str]) -> Reply:
        record = self.evals.get(m.group(1))
        return _reply(200, record) if record else _error(404, "not_found", "eval not found")

    # -- runs --------------------------------------------------------------------------------
    def _rows(self, source: Any) -> list[dict[str, Any]] | Reply:
        if not isinstance(source, dict):
            return _error(400, "invalid_request", "data_source.source is required")
        if source.get("type") == "file_content":
            content = source.get("content")
            if not isinstance(content, list) or not all(
                isinstance(r, dict) and isinstance(r.get("item"), dict) for r in content
            ):
                return _error(400, "invalid_request", "file_content rows must be {item: {...}}")
            return [r["item"] for r in content]
        if source.get("type") == "file_id":
            rows = self.server.assets.dataset_rows(str(source.get("id", "")))
            if rows is None:
                return _error(400, "DatasetNotFound", f"no dataset {source.get('id')}")
            return rows
        return _error(400, "invalid_request", "source.type must be file_content or file_id")

    def create_run(self, req: Logged, m: re.Match[str]) -> Reply:
        evaluation = self.evals.get(m.group(1))
        if evaluation is None:
            return _error(404, "not_found", "eval not found")
        body = req.body if isinstance(req.body, dict) else {}
        source = body.get("data_source") or {}
        if source.get("type") != "azure_ai_target_completions":
            return _error(
                400, "invalid_request", "data_source.type must be azure_ai_target_completions"
            )
        target = source.get("target") or {}
        if target.get("type") != "azure_ai_agent" or not target.get("name"):
            return _error(400, "invalid_request", "target must be an azure_ai_agent with a name")
        rows = self._rows(source.get("source"))
        if not isinstance(rows, list):
            return rows
        run_id = f"evalrun_{next(_ids):04d}"
        run = {
            "object": "eval.run",
            "id": run_id,
            "eval_id": evaluation["id"],
            "name": body.get("name"),
            "status": "queued",
            "metadata": body.get("metadata") or {},
            "data_source": source,
            "created_at": int(time.time()),
            "created_by": "fake-user",
            "report_url": f"https://ai.azure.com/fake/build/evaluations/{evaluation['id']}/run/{run_id}",
            "result_counts": {"total": 0, "passed": 0, "failed": 0, "errored": 0, "skipped": 0},
            "per_testing_criteria_results": [],
            "error": None,
        }
        self.runs[run_id] = run
        self._gets[run_id] = 0
        self.items[run_id] = []
        run["_rows"] = rows
        run["_failure"] = self.fail_runs
        return _reply(200, self._public(run))

    def seed_run(self, eval_id: str, run_id: str, counts: dict[str, int]) -> None:
        """A completed run the service made itself (an optimization candidate's evaluation)."""
        self.evals.setdefault(eval_id, {"object": "eval", "id": eval_id, "testing_criteria": []})
        self.runs[run_id] = {
            "object": "eval.run",
            "id": run_id,
            "eval_id": eval_id,
            "status": "completed",
            "result_counts": {"errored": 0, "skipped": 0, **counts},
            "report_url": f"https://ai.azure.com/fake/build/evaluations/{eval_id}/run/{run_id}",
        }
        self.items[run_id] = []

    def _public(self, run: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in run.items() if not k.startswith("_")}

    def get_run(self, req: Logged, m: re.Match[str]) -> Reply:
        run = self.runs.get(m.group(2))
        if run is None or run["eval_id"] != m.group(1):
            return _error(404, "not_found", "run not found")
        if run["status"] in ("queued", "in_progress"):
            self._gets[run["id"]] += 1
            step = self._gets[run["id"]] // max(1, self.server.polls_per_state)
            if step >= 2:
                self._finish(run)
            elif step == 1:
                run["status"] = "in_progress"
        return _reply(200, self._public(run))

    def _finish(self, run: dict[str, Any]) -> None:
        failure = run.get("_failure")
        if failure:
            run["status"], run["error"] = "failed", dict(failure)
            return
        evaluation = self.evals[run["eval_id"]]
        target = run["data_source"]["target"]
        counts = {"total": 0, "passed": 0, "failed": 0, "errored": 0, "skipped": 0}
        per: dict[str, dict[str, int]] = {}
        for index, row in enumerate(run["_rows"]):
            answer = self.agent(row, target["name"])
            results = []
            for crit in evaluation["testing_criteria"]:
                if answer.error:
                    result = {"status": "errored", "reason": "the target did not answer"}
                else:
                    result = self.grader(crit, row, answer)
                results.append({"name": crit["name"], "type": "azure_ai_evaluator", **result})
                tally = per.setdefault(
                    crit["name"], {"passed": 0, "failed": 0, "errored": 0, "skipped": 0}
                )
                status = result.get("status")
                key = {"errored": "errored", "skipped": "skipped"}.get(
                    str(status), "passed" if result.get("passed") else "failed"
                )
                tally[key] += 1
            counts["total"] += 1
            statuses = {r.get("status") for r in results}
            if answer.error or "errored" in statuses:
                counts["errored"] += 1
            elif all(r.get("passed") for r in results):
                counts["passed"] += 1
            else:
                counts["failed"] += 1
            self.items[run["id"]].append(self._item(run, index, row, answer, results))
        run["status"] = "completed"
        run["result_counts"] = counts
        run["per_testing_criteria_results"] = [
            {"testing_criteria": name, **tally} for name, tally in per.items()
        ]

    def _item(
        self, run: dict[str, Any], index: int, row: dict[str, Any], answer: Answer, results: list
    ) -> dict[str, Any]:
        output: list[dict[str, Any]] = []
        if answer.tool_calls:
            calls = [
                {
                    "id": f"call_{index}_{n}",
                    "type": "function",
                    "function": {"name": c["name"], "arguments": _json(c.get("arguments") or {})},
                }
                for n, c in enumerate(answer.tool_calls)
            ]
            output.append({"role": "assistant", "content": "", "tool_calls": calls})
            for n, c in enumerate(answer.tool_calls):
                output.append(
                    {
                        "role": "tool",
                        "tool_call_id": f"call_{index}_{n}",
                        "content": _json(c.get("result")),
                        "tool_calls": [],
                    }
                )
        if not answer.error:
            output.append({"role": "assistant", "content": answer.text, "tool_calls": []})
        prompt, completion = answer.usage
        return {
            "object": "eval.run.output_item",
            "id": f"outputitem_{run['id']}_{index:04d}",
            "run_id": run["id"],
            "eval_id": run["eval_id"],
            "created_at": int(time.time()),
            "status": "completed",
            "datasource_item_id": index,
            "datasource_item": row,
            "results": results,
            "sample": {
                "input": [{"role": "user", "content": str(row.get("query", "")), "tool_calls": []}],
                "output": output,
                "usage": {
                    "prompt_tokens": prompt,
                    "completion_tokens": completion,
                    "total_tokens": prompt + completion,
                    "cached_tokens": 0,
                },
                "error": answer.error or {"code": "", "message": ""},
                "finish_reason": "stop" if not answer.error else "error",
                "model": run["data_source"]["target"]["name"],
                "max_completion_tokens": 4096,
                "seed": 42,
                "temperature": 1.0,
                "top_p": 1.0,
            },
        }

    def output_items(self, req: Logged, m: re.Match[str]) -> Reply:
        run = self.runs.get(m.group(2))
        if run is None or run["eval_id"] != m.group(1):
            return _error(404, "not_found", "run not found")
        try:
            limit = int(req.query.get("limit", "20"))
        except ValueError:
            return _error(400, "invalid_request", "limit must be an integer")
        if not 1 <= limit <= 100:
            return _error(400, "invalid_request", "limit must be between 1 and 100")
        order = req.query.get("order", "asc")
        if order not in ("asc", "desc"):
            return _error(400, "invalid_request", "order must be asc or desc")
        items = list(self.items[run["id"]])
        if order == "desc":
            items.reverse()
        status = req.query.get("status")
        if status in ("pass", "fail"):
            items = [
                i for i in items if all(r.get("passed") for r in i["results"]) == (status == "pass")
            ]
        after = req.query.get("after")
        if after:
            ids = [i["id"] for i in items]
            if after not in ids:
                return _error(400, "invalid_request", f"after={after} is not an item of this run")
            items = items[ids.index(after) + 1 :]
        page = items[: min(limit, self.page_cap)]
        return _reply(
            200,
            {
                "object": "list",
                "data": page,
                "first_id": page[0]["id"] if page else None,
                "last_id": page[-1]["id"] if page else None,
                "has_more": len(items) > len(page),
            },
        )


def _json(value: Any) -> str:
    import json

    return value if isinstance(value, str) else json.dumps(value)
