"""Run GEPA on one benchmark world (executed by the throwaway dspy venv's python).

    <dspy-venv>/bin/python run_gepa.py config.json result.json

Standard library + dspy/gepa only: agentopt is not installed in that venv. Worlds without tools
run `dspy.GEPA` on a `dspy.Predict("question -> answer")` program with the world's starting
instructions. The tool world runs the GEPA library itself (`gepa.optimize`, the engine
`dspy.GEPA` drives) with a small adapter whose candidate has three text components — the
instructions and each tool's description — with dspy.GEPA's defaults (Pareto selection,
round-robin components, merge on, 5 merges at most, minibatch 3, two threads).

The budget is held exactly: search calls go to the models `agent` / `judge`, which the
server refuses past `budget − test calls`; a stop condition ends GEPA at the next iteration
once one was refused, and a candidate whose validation ran into the refusal is not eligible
as the best (its score would be an undercount). The test split uses `agent-test` /
`judge-test`, so it always has its calls. `seconds` covers the search and the test split.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
import urllib.request
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no fetch from GitHub

import dspy
import gepa
from gepa.core.adapter import EvaluationBatch

THREADS = 2
MINIBATCH = 3


def post(base: str, body: dict[str, Any]) -> dict[str, Any]:
    req = urllib.request.Request(
        f"{base}/chat/completions",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", "Authorization": "Bearer x"},
    )
    with urllib.request.urlopen(req, timeout=60) as resp:
        return json.loads(resp.read())


class BudgetStop:
    """GEPA's stop condition: True once the server refused a call. `trusted` is how many
    candidates were complete before the iteration that met the refusal began."""

    def __init__(self, base: str) -> None:
        self.url = base.rsplit("/v1", 1)[0] + "/v1/bench/budget"
        self.trusted = 1
        self.stopped = False

    def refused(self) -> int:
        with urllib.request.urlopen(self.url, timeout=30) as resp:
            return int(json.loads(resp.read())["refused"])

    def __call__(self, state: Any) -> bool:
        if self.refused():
            self.stopped = True
            return True
        self.trusted = len(state.program_candidates)
        return False

    def best(self, scores: list[float]) -> int:
        """GEPA's best (highest mean validation score, first on ties) among the candidates
        whose validation the budget covered (all of them when nothing was refused; GEPA's
        own stop may come first, so the server is asked once more)."""
        pool = scores[: self.trusted] if self.stopped or self.refused() else scores
        return max(range(len(pool)), key=lambda i: (pool[i], -i))


_judged: dict[str, tuple[float, str]] = {}
_lock = threading.Lock()


def judge_call(
    base: str, cfg: dict[str, Any], model: str, task: dict[str, str], answer: str
) -> tuple[float, str]:
    """(score, reason); a repeated judgement costs nothing (as with dspy's LM cache). A world
    scored by an expected answer is checked here, without a call (`metric` "contains")."""
    if cfg.get("metric") == "contains":
        truth = task["truth"]
        if truth.lower() in answer.lower():
            return 1.0, f"Correct: the answer contains the expected answer '{truth}'."
        return 0.0, f"The answer did not contain the expected answer '{truth}'."
    prompt = cfg["judge_template"].format(
        query=task["query"], criterion=task["criterion"], response=answer
    )
    key = f"{model}\n{prompt}"
    with _lock:
        if key in _judged:
            return _judged[key]
    body = {"model": model, "messages": [{"role": "user", "content": prompt}]}
    reply = post(base, body)["choices"][0]["message"]["content"]
    verdict = json.loads(reply)["verdicts"][0]
    outcome = (1.0 if verdict["passed"] else 0.0), str(verdict["reason"])
    with _lock:
        _judged[key] = outcome
    return outcome


# -- worlds without tools: dspy.GEPA ---------------------------------------------------------------


def run_dspy(cfg: dict[str, Any], stop: BudgetStop) -> dict[str, Any]:
    base = cfg["base_url"]

    def lm(name: str) -> dspy.LM:
        return dspy.LM(f"openai/{name}", api_base=base, api_key="x", num_retries=0, cache=True)

    dspy.configure_cache(enable_disk_cache=False, enable_memory_cache=True)
    dspy.configure(lm=lm("agent"))

    def example(t: dict[str, str]) -> dspy.Example:
        return dspy.Example(question=t["query"], criterion=t["criterion"], task=t).with_inputs(
            "question"
        )

    def metric(gold: Any, pred: Any, trace: Any = None, name: Any = None, ptrace: Any = None):
        answer = str(getattr(pred, "answer", "") or "")
        score, reason = judge_call(base, cfg, "judge", gold.task, answer)
        return dspy.Prediction(score=score, feedback=reason)

    program = dspy.Predict(dspy.Signature("question -> answer", cfg["instructions"]))
    train, val = [example(t) for t in cfg["train"]], [example(t) for t in cfg["validation"]]
    optimizer = dspy.GEPA(
        metric=metric,
        max_metric_calls=cfg["max_metric_calls"],
        reflection_lm=lm("reflect"),
        reflection_minibatch_size=MINIBATCH,
        seed=cfg["seed"],
        track_stats=True,
        num_threads=THREADS,
        gepa_kwargs={"stop_callbacks": [stop]},
    )
    result = optimizer.compile(program, trainset=train, valset=val).detailed_results
    best = stop.best(result.val_aggregate_scores)
    chosen = result.candidates[best]

    def test_score(prog: dspy.Module) -> float:
        scores = []
        with dspy.context(lm=lm("agent-test")):
            for t in cfg["test"]:
                answer = str(prog(question=t["query"]).answer or "")
                scores.append(judge_call(base, cfg, "judge-test", t, answer)[0])
        return sum(scores) / len(scores)

    return {
        "val_baseline": result.val_aggregate_scores[0],
        "val_best": result.val_aggregate_scores[best],
        "test_baseline": test_score(program),
        "test_best": test_score(chosen),
        "best": {"instructions": chosen.predictors()[0].signature.instructions},
        "candidates": len(result.candidates),
        "metric_calls": result.total_metric_calls,
    }


# -- the tool world: gepa.optimize with an adapter ----------------------------------------------


class ToolAgentAdapter:
    """Instructions + tool descriptions as GEPA text components; tools answer from mocks."""

    propose_new_texts = None  # GEPA's own reflection proposes the texts

    def __init__(self, cfg: dict[str, Any], agent: str, judge: str) -> None:
        self.cfg, self.agent, self.judge = cfg, agent, judge
        self.cache: dict[str, Any] = {}
        self.pool = ThreadPoolExecutor(THREADS)

    def call(self, body: dict[str, Any]) -> dict[str, Any]:
        key = json.dumps(body, sort_keys=True)  # like dspy's LM cache: a repeat costs nothing
        if key not in self.cache:
            self.cache[key] = post(self.cfg["base_url"], body)
        return self.cache[key]

    def run_one(self, candidate: dict[str, str], task: dict[str, str]) -> dict[str, Any]:
        tools = json.loads(json.dumps(self.cfg["tools"]))
        for tool in tools:
            tool["function"]["description"] = candidate[f"tool:{tool['function']['name']}"]
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": candidate["instructions"]},
            {"role": "user", "content": task["query"]},
        ]
        called: list[str] = []
        for _ in range(4):
            body = {"model": self.agent, "messages": messages, "tools": tools}
            message = self.call(body)["choices"][0]["message"]
            if not message.get("tool_calls"):
                break
            messages.append(message)
            for tc in message["tool_calls"]:
                name = tc["function"]["name"]
                called.append(name)
                result = self.cfg["tool_mocks"].get(name, {}).get("return", "unknown tool")
                messages.append({"role": "tool", "tool_call_id": tc["id"], "content": result})
        answer = str(message.get("content") or "")
        score, reason = judge_call(self.cfg["base_url"], self.cfg, self.judge, task, answer)
        return {"task": task, "called": called, "answer": answer, "score": score, "reason": reason}

    def evaluate(self, batch: list[Any], candidate: dict[str, str], capture_traces: bool = False):
        runs = list(self.pool.map(lambda t: self.run_one(candidate, t), batch))
        return EvaluationBatch(
            outputs=runs,
            scores=[r["score"] for r in runs],
            trajectories=runs if capture_traces else None,
        )

    def make_reflective_dataset(
        self, candidate: dict[str, str], eval_batch: Any, components: list[str]
    ):
        out: dict[str, list[dict[str, Any]]] = {}
        for component in components:
            about = (
                "" if component == "instructions" else f"\nTool being described: {component[5:]}"
            )
            out[component] = [
                {
                    "Inputs": run["task"]["query"] + about,
                    "Generated Outputs": f"called {', '.join(run['called']) or 'no tool'}; "
                    f"answered: {run['answer']}",
                    "Feedback": run["reason"],
                }
                for run in eval_batch.trajectories
            ]
        return out


def run_tools(cfg: dict[str, Any], stop: BudgetStop) -> dict[str, Any]:
    base = cfg["base_url"]
    seed = {"instructions": cfg["instructions"]}
    seed.update(
        {f"tool:{t['function']['name']}": t["function"]["description"] for t in cfg["tools"]}
    )

    def reflect(prompt: str) -> str:
        body = {"model": "reflect", "messages": [{"role": "user", "content": prompt}]}
        return str(post(base, body)["choices"][0]["message"]["content"])

    adapter = ToolAgentAdapter(cfg, "agent", "judge")
    result = gepa.optimize(
        seed_candidate=seed,
        trainset=cfg["train"],
        valset=cfg["validation"],
        adapter=adapter,
        reflection_lm=reflect,
        candidate_selection_strategy="pareto",
        reflection_minibatch_size=MINIBATCH,
        module_selector="round_robin",
        use_merge=True,
        max_merge_invocations=5,
        max_metric_calls=cfg["max_metric_calls"],
        stop_callbacks=[stop],
        seed=cfg["seed"],
        display_progress_bar=False,
    )
    best = stop.best(result.val_aggregate_scores)
    chosen = result.candidates[best]
    tester = ToolAgentAdapter(cfg, "agent-test", "judge-test")

    def test_score(candidate: dict[str, str]) -> float:
        return sum(tester.evaluate(cfg["test"], candidate).scores) / len(cfg["test"])

    return {
        "val_baseline": result.val_aggregate_scores[0],
        "val_best": result.val_aggregate_scores[best],
        "test_baseline": test_score(seed),
        "test_best": test_score(chosen),
        "best": dict(chosen),
        "candidates": len(result.candidates),
        "metric_calls": result.total_metric_calls,
    }


def main(config_path: str, result_path: str) -> int:
    with open(config_path, encoding="utf-8") as fh:
        cfg = json.load(fh)
    stop = BudgetStop(cfg["base_url"])
    runner: Callable[[dict[str, Any], BudgetStop], dict[str, Any]] = (
        run_tools if cfg.get("tools") else run_dspy
    )
    t0, c0 = time.perf_counter(), time.process_time()
    result = runner(cfg, stop)
    result.update(
        seconds=time.perf_counter() - t0,
        cpu_seconds=time.process_time() - c0,
        dspy_version=dspy.__version__,
        stopped_by_budget=stop.stopped,
        trusted_candidates=stop.trusted,
    )
    with open(result_path, "w", encoding="utf-8") as fh:
        json.dump(result, fh, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
