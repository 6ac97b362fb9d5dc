"""Agent optimization jobs of the fake Foundry project: the V2Preview contract azd speaks.

Spec sources:
- Azure/azure-rest-api-specs `specification/ai-foundry/data-plane/Foundry/src/
  agents-optimization/models.tsp` at 12e3cbc2 (V2Preview, "Aligned with in-tree C# DTOs
  (Contracts/V2Preview/Models/)"): `AgentOptimizationJobInputs {agent {agent_name,
  agent_version?}, train_dataset (inline {items} | reference {name, version?}),
  validation_dataset?, evaluators [{name, version?}] (≥1), options? {max_candidates ≥1,
  optimization_config, eval_model, optimization_model, evaluation_level, max_stalls ≥1}}`,
  `AgentOptimizationJob` = `JobLike` + created_at/updated_at/progress/warnings,
  `AgentOptimizationJobResult {baseline, best, candidates [AgentOptimizationCandidate
  {candidate_id, name, mutations, avg_score, avg_tokens, eval_id, eval_run_id, promotion?}]}`,
  `AgentOptimizationJobProgress`, `AgentOptimizationJobListItem` (no inputs/result/warnings,
  plus `agent`), `PromotionInfo {promoted_at, agent_name, agent_version}`; every model carries
  `FoundryFeaturesOptInKeys.agents_optimization_v2_preview` = `AgentsOptimization=V2Preview`.
- `…/Foundry/src/common/servicepatterns.tsp`: `postJob` (201 + `Operation-Location` +
  `Location`, optional `Operation-Id` for idempotent retries), `queryJobStatus` (optional
  `Retry-After`), `listJobs` (`limit` 1–100 default 20, `order`, `after`, `before`;
  `AgentsPagedResult`), `cancelJob` (200 + the job), `JobStatus` queued → in_progress →
  succeeded | failed | cancelled.
- `…/agents-optimization/routes.tsp` (GA): cancel of a terminal job is 409 Conflict; routes
  `agent_optimization_jobs`, `/{jobId}`, `/{jobId}:cancel`, `/{jobId}/candidates/{id}:promote`.
- The candidate sub-routes the GA TypeSpec no longer has are read from Azure/azure-dev
  `cli/azd/extensions/azure.ai.agents/internal/pkg/agents/optimize_api/client.go`:
  `GET …/candidates/{id}/config` (JSON), `GET …/candidates/{id}` (`{files: [{path, type}]}`),
  `GET …/candidates/{id}/files?path=` (the file's text).
"""

from __future__ import annotations

import itertools
import re
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tests.foundry.fake_project import FakeFoundry, Logged, Reply

FEATURE = "AgentsOptimization=V2Preview"
TERMINAL = {"succeeded", "failed", "cancelled"}
_ids = itertools.count(1)


def _reply(status: int, body: Any = None, headers: dict[str, str] | None = None) -> Reply:
    from tests.foundry.fake_project import Reply

    return Reply(status, body, headers or {})


def _error(status: int, code: str, message: str) -> Reply:
    return _reply(status, {"error": {"code": code, "message": message}})


def _validate(inputs: Any, datasets: dict[tuple[str, str], Any]) -> str | None:
    """azd's request shapes (optimize_api/models.go at ae35809f): `Dataset` is
    `{type: inline, items}` or `{type: reference, name, version?}` — a reference must name a
    dataset version the project has; `EvaluatorRef` is `{name, version?,
    initialization_parameters?}`; `OptimizeOptions` fields are omitted when unset."""
    if not isinstance(inputs, dict):
        return 'the body must be {"inputs": AgentOptimizationJobInputs}'
    agent = inputs.get("agent")
    if not isinstance(agent, dict) or not agent.get("agent_name"):
        return "inputs.agent.agent_name is required"
    if not isinstance(inputs.get("train_dataset"), dict):
        return "inputs.train_dataset must be {type: inline|reference, ...}"
    for key in ("train_dataset", "validation_dataset"):
        problem = _dataset(key, inputs.get(key), datasets)
        if problem:
            return problem
    evaluators = inputs.get("evaluators")
    if not isinstance(evaluators, list) or not evaluators:
        return "inputs.evaluators needs at least one evaluator"
    for e in evaluators:
        if not isinstance(e, dict) or not e.get("name"):
            return "every evaluator needs a name"
        extra = set(e) - {"name", "version", "initialization_parameters"}
        if extra:
            return f"unknown evaluator field(s): {', '.join(sorted(extra))}"
        if "initialization_parameters" in e and not isinstance(
            e["initialization_parameters"], dict
        ):
            return "evaluators[].initialization_parameters must be an object"
    options = inputs.get("options") or {}
    for key in ("max_candidates", "max_stalls", "max_concurrent_agent_runs"):
        value = options.get(key, 1)
        if not isinstance(value, int) or value < 1:
            return f"options.{key} must be an integer >= 1 when given"
    return None


def _dataset(key: str, data: Any, datasets: dict[tuple[str, str], Any]) -> str | None:
    if data is None:
        return None
    if not isinstance(data, dict) or data.get("type") not in ("inline", "reference"):
        return f"inputs.{key} must be {{type: inline|reference, ...}}"
    if data["type"] == "inline":
        items = data.get("items")
        if set(data) - {"type", "items"}:
            return f"inputs.{key}: an inline dataset has only type and items"
        if not isinstance(items, list) or not items or not all(isinstance(i, dict) for i in items):
            return f"inputs.{key}.items must be a non-empty list of objects"
        return None
    if set(data) - {"type", "name", "version"}:
        return f"inputs.{key}: a reference has only type, name and version"
    name, version = data.get("name"), data.get("version")
    if not isinstance(name, str) or not name:
        return f"inputs.{key}.name is required for a reference"
    known = [v for (n, v) in datasets if n == name]
    if (version is None and not known) or (version is not None and version not in known):
        return f"inputs.{key}: dataset {name} version {version} is not in the project"
    return None


class OptimizeRoutes:
    """Jobs and their candidates."""

    def __init__(self, server: FakeFoundry) -> None:
        self.server = server
        self.jobs: dict[str, dict[str, Any]] = {}
        self.configs: dict[tuple[str, str], dict[str, Any]] = {}
        self.files: dict[tuple[str, str], dict[str, str]] = {}
        self._by_operation: dict[str, str] = {}
        self._gets: dict[str, int] = {}
        self.fail_jobs: dict[str, str] | None = None
        """Set `{"code", "message"}` to make every new job end `failed` with that error."""

    def routes(self) -> list[tuple[str, re.Pattern[str], Any]]:
        c = re.compile
        base = r"/agent_optimization_jobs"
        return [
            ("POST", c(base), self.create),
            ("GET", c(base), self.list),
            ("GET", c(base + r"/([^/:]+)"), self.get),
            ("POST", c(base + r"/([^/:]+):cancel"), self.cancel),
            ("GET", c(base + r"/([^/:]+)/candidates/([^/:]+)/config"), self.config),
            ("GET", c(base + r"/([^/:]+)/candidates/([^/:]+)"), self.manifest),
            ("GET", c(base + r"/([^/:]+)/candidates/([^/:]+)/files"), self.file),
            ("POST", c(base + r"/([^/:]+)/candidates/([^/:]+):promote"), self.promote),
        ]

    def _feature(self, req: Logged) -> Reply | None:
        if FEATURE not in req.headers.get("foundry-features", ""):
            return _error(400, "PreviewFeatureRequired", f"send Foundry-Features: {FEATURE}")
        return None

    def _job(self, job_id: str) -> dict[str, Any] | None:
        return self.jobs.get(job_id)

    # -- jobs --------------------------------------------------------------------------------
    def create(self, req: Logged, m: re.Match[str]) -> Reply:
        if (refused := self._feature(req)) is not None:
            return refused
        operation = req.headers.get("operation-id")
        if operation and operation in self._by_operation:
            job = self.jobs[self._by_operation[operation]]
            return _reply(201, self._public(job), self._locations(job["id"]))
        body = req.body if isinstance(req.body, dict) else {}
        problem = _validate(body.get("inputs"), self.server.assets.datasets)
        if problem:
            return _error(400, "ValidationError", problem)
        job_id = f"optjob_{next(_ids):04d}"
        now = int(time.time())
        job = {
            "id": job_id,
            "status": "queued",
            "inputs": body["inputs"],
            "created_at": now,
            "updated_at": now,
            "warnings": [],
            "_candidates": self._plan(job_id, body["inputs"]),
            "_failure": self.fail_jobs,
        }
        self.jobs[job_id] = job
        self._gets[job_id] = 0
        if operation:
            self._by_operation[operation] = job_id
        return _reply(201, self._public(job), self._locations(job_id))

    def _locations(self, job_id: str) -> dict[str, str]:
        url = f"{self.server.endpoint}/agent_optimization_jobs/{job_id}?api-version=v1"
        return {"Operation-Location": url, "Location": url}

    def _plan(self, job_id: str, inputs: dict[str, Any]) -> list[dict[str, Any]]:
        """The candidates this job will report: the baseline and up to two mutations."""
        options = inputs.get("options") or {}
        config = options.get("optimization_config") or {}
        agent = inputs["agent"]["agent_name"]
        prompt = str(config.get("system_prompt") or "")
        model = str(config.get("model") or "gpt-4.1-mini")
        space = [m for m in config.get("model_search_space") or [] if m != model]
        baseline = {"name": agent, "agent_name": agent, "model": model, "system_prompt": prompt}
        for key in ("skills", "tools"):
            if key in config:
                baseline[key] = config[key]
        plans = [("baseline", {}, 0.61, baseline)]
        better = prompt + "\nAlways state the 30-day refund window."
        plans.append(
            (
                "instruction-v1",
                {"system_prompt": better},
                0.82,
                {**baseline, "system_prompt": better},
            )
        )
        if space:
            plans.append(("model-v1", {"model": space[0]}, 0.7, {**baseline, "model": space[0]}))
        limit = int(options.get("max_candidates") or 5)
        out = []
        for n, (name, mutations, score, cfg) in enumerate(plans[: limit + 1]):
            cid = f"cand_{job_id[-4:]}_{n}"
            out.append(
                {
                    "candidate_id": cid,
                    "name": name,
                    "mutations": mutations,
                    "avg_score": score,
                    "avg_tokens": 300.0 + 10 * n,
                    "eval_id": f"eval_opt_{job_id}",
                    "eval_run_id": f"evalrun_opt_{job_id}_{n}",
                }
            )
            items = len((inputs.get("train_dataset") or {}).get("items") or []) or 5
            passed = round(score * items)
            self.server.evals.seed_run(
                f"eval_opt_{job_id}",
                f"evalrun_opt_{job_id}_{n}",
                {"total": items, "passed": passed, "failed": items - passed},
            )
            self.configs[(job_id, cid)] = cfg
            self.files[(job_id, cid)] = {
                f"skills/{s['name']}/SKILL.md": (
                    f"---\nname: {s['name']}\ndescription: {s.get('description', '')}\n---\n"
                    f"{s.get('body', '')}\n"
                )
                for s in cfg.get("skills") or []
            }
        return out

    def _public(self, job: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in job.items() if not k.startswith("_")}

    def _advance(self, job: dict[str, Any]) -> None:
        if job["status"] in TERMINAL:
            return
        self._gets[job["id"]] += 1
        step = self._gets[job["id"]] // max(1, self.server.polls_per_state)
        planned = job["_candidates"]
        job["updated_at"] = job["created_at"] + step
        if step == 0:
            return
        if job.get("_failure"):
            job["status"], job["error"] = "failed", dict(job["_failure"])
            return
        shown = min(step, len(planned))
        job["status"] = "in_progress"
        job["result"] = {"baseline": planned[0]["candidate_id"], "candidates": planned[:shown]}
        scores = [c["avg_score"] for c in planned[:shown]]
        job["progress"] = {
            "candidates_completed": shown,
            "baseline_score": planned[0]["avg_score"],
            "best_score": max(scores),
            "elapsed_seconds": float(step),
        }
        if step > len(planned):
            best = max(planned, key=lambda c: c["avg_score"])
            job["status"] = "succeeded"
            job["result"]["best"] = best["candidate_id"]

    def get(self, req: Logged, m: re.Match[str]) -> Reply:
        if (refused := self._feature(req)) is not None:
            return refused
        job = self._job(m.group(1))
        if job is None:
            return _error(404, "NotFound", f"job {m.group(1)} not found")
        self._advance(job)
        return _reply(200, self._public(job))

    def list(self, req: Logged, m: re.Match[str]) -> Reply:
        if (refused := self._feature(req)) is not None:
            return refused
        limit = int(req.query.get("limit", "20"))
        if not 1 <= limit <= 100:
            return _error(400, "invalid_request", "limit must be between 1 and 100")
        jobs = sorted(
            self.jobs.values(), key=lambda j: j["id"], reverse=req.query.get("order") != "asc"
        )
        if req.query.get("status"):
            jobs = [j for j in jobs if j["status"] == req.query["status"]]
        if req.query.get("after"):
            ids = [j["id"] for j in jobs]
            jobs = jobs[ids.index(req.query["after"]) + 1 :] if req.query["after"] in ids else []
        page = jobs[:limit]
        data = [
            {
                **{
                    k: v
                    for k, v in self._public(j).items()
                    if k not in ("inputs", "result", "warnings")
                },
                "agent": j["inputs"]["agent"],
            }
            for j in page
        ]
        return _reply(
            200,
            {
                "data": data,
                "first_id": data[0]["id"] if data else None,
                "last_id": data[-1]["id"] if data else None,
                "has_more": len(jobs) > limit,
            },
        )

    def cancel(self, req: Logged, m: re.Match[str]) -> Reply:
        if (refused := self._feature(req)) is not None:
            return refused
        job = self._job(m.group(1))
        if job is None:
            return _error(404, "NotFound", f"job {m.group(1)} not found")
        if job["status"] in TERMINAL:
            return _error(409, "Conflict", f"job {job['id']} is already {job['status']}")
        job["status"] = "cancelled"
        job["updated_at"] = int(time.time())
        return _reply(200, self._public(job))

    # -- candidates --------------------------------------------------------------------------
    def _candidate(self, job_id: str, cid: str) -> dict[str, Any] | None:
        job = self._job(job_id)
        if job is None:
            return None
        return next((c for c in job["_candidates"] if c["candidate_id"] == cid), None)

    def config(self, req: Logged, m: re.Match[str]) -> Reply:
        if (refused := self._feature(req)) is not None:
            return refused
        if self._candidate(m.group(1), m.group(2)) is None:
            return _error(404, "NotFound", "candidate not found")
        return _reply(200, self.configs[(m.group(1), m.group(2))])

    def manifest(self, req: Logged, m: re.Match[str]) -> Reply:
        if (refused := self._feature(req)) is not None:
            return refused
        if self._candidate(m.group(1), m.group(2)) is None:
            return _error(404, "NotFound", "candidate not found")
        files = self.files[(m.group(1), m.group(2))]
        return _reply(200, {"files": [{"path": p, "type": "skill"} for p in files]})

    def file(self, req: Logged, m: re.Match[str]) -> Reply:
        if (refused := self._feature(req)) is not None:
            return refused
        files = self.files.get((m.group(1), m.group(2)))
        path = req.query.get("path", "")
        if files is None or path not in files:
            return _error(404, "NotFound", f"no file {path!r}")
        return _reply(200, files[path])

    def promote(self, req: Logged, m: re.Match[str]) -> Reply:
        if (refused := self._feature(req)) is not None:
            return refused
        candidate = self._candidate(m.group(1), m.group(2))
        if candidate is None:
            return _error(404, "NotFound", "candidate not found")
        body = req.body if isinstance(req.body, dict) else {}
        if not body.get("agent_name") or not body.get("agent_version"):
            return _error(400, "ValidationError", "agent_name and agent_version are required")
        candidate["promotion"] = {
            "promoted_at": int(time.time()),
            "agent_name": body["agent_name"],
            "agent_version": body["agent_version"],
        }
        return _reply(200, candidate["promotion"])
