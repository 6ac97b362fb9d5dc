"""Run `dspy.GEPA` on the scripted benchmark (executed by the throwaway dspy venv's python).

    <dspy-venv>/bin/python run_gepa.py config.json result.json

Standard library + dspy only: agentopt is not installed in that venv. The config holds the
fake server's base URL, the three splits, the starting instructions, the judge prompt layout
and the metric-call budget; the result holds the validation scores GEPA measured (baseline =
candidate 0, best = its `best_idx`), both programs' scores on the held-out test split, and
the best instructions. Every model call (program, judge, reflection) goes to the fake server.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no fetch from GitHub

import dspy


def lm(base_url: str, name: str, **kw: Any) -> dspy.LM:
    return dspy.LM(
        f"openai/{name}", api_base=base_url, api_key="x", num_retries=0, cache=True, **kw
    )


def main(config_path: str, result_path: str) -> int:
    with open(config_path, encoding="utf-8") as fh:
        cfg = json.load(fh)
    dspy.configure_cache(enable_disk_cache=False, enable_memory_cache=True)
    base = cfg["base_url"]
    dspy.configure(lm=lm(base, "agent"))
    judge = lm(base, "judge")

    def examples(split: str) -> list[dspy.Example]:
        return [
            dspy.Example(question=t["query"], criterion=t["criterion"]).with_inputs("question")
            for t in cfg[split]
        ]

    def judged(gold: dspy.Example, pred: Any) -> tuple[float, str]:
        answer = str(getattr(pred, "answer", "") or "")
        prompt = cfg["judge_template"].format(
            query=gold.question, criterion=gold.criterion, response=answer
        )
        reply = judge(messages=[{"role": "user", "content": prompt}])[0]
        verdict = json.loads(reply if isinstance(reply, str) else reply["text"])["verdicts"][0]
        return (1.0 if verdict["passed"] else 0.0), str(verdict["reason"])

    def metric(
        gold: dspy.Example,
        pred: Any,
        trace: Any = None,
        pred_name: str | None = None,
        pred_trace: Any = None,
    ) -> dspy.Prediction:
        score, reason = judged(gold, pred)
        return dspy.Prediction(score=score, feedback=reason)

    signature = dspy.Signature("question -> answer", cfg["instructions"])
    program = dspy.Predict(signature)
    train, val, test = examples("train"), examples("validation"), examples("test")
    t0 = time.perf_counter()
    gepa = dspy.GEPA(
        metric=metric,
        max_metric_calls=cfg["max_metric_calls"],
        reflection_lm=lm(base, "reflect"),
        reflection_minibatch_size=cfg.get("minibatch", 3),
        seed=cfg["seed"],
        track_stats=True,
        num_threads=cfg.get("threads", 2),
    )
    best = gepa.compile(program, trainset=train, valset=val)
    seconds = time.perf_counter() - t0
    details = best.detailed_results

    def test_score(prog: dspy.Module) -> float:
        scores = [judged(ex, prog(**ex.inputs()))[0] for ex in test]
        return sum(scores) / len(scores)

    result = {
        "dspy_version": dspy.__version__,
        "val_baseline": details.val_aggregate_scores[0],
        "val_best": details.val_aggregate_scores[details.best_idx],
        "test_baseline": test_score(program),
        "test_best": test_score(best),
        "best_instructions": best.predictors()[0].signature.instructions,
        "candidates": len(details.candidates),
        "metric_calls": details.total_metric_calls,
        "seconds": seconds,
    }
    with open(result_path, "w", encoding="utf-8") as fh:
        json.dump(result, fh, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
