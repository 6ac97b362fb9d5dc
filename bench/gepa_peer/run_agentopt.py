"""Run agentopt's optimizer on one benchmark world, in its own process (like GEPA's run), so
neither system shares the interpreter with the scripted server that answers both.

    python -m bench.gepa_peer.run_agentopt config.json result.json

`seconds` (wall) and `cpu_seconds` (this process's CPU, its threads included) cover
`prepare_optimize` + `run_optimize` (search and test split), after the
imports, as GEPA's covers its compile and test split after importing dspy and gepa. agentopt
imports on first use what dspy has loaded by its import: numpy and numpy.random (the
bootstrap), jinja2 (the prompts), ruamel.yaml (the YAML reader), jsonschema (a judge reply's
check against its full schema) and PyYAML (a candidate's files), its judges, agent targets
and strategies. They are imported here, before the clock, as GEPA's are: a
`tool-descriptions` run imported 69 modules inside the clock before (ruamel.yaml 14 ms,
numpy.random 6.5 ms, the agent targets and two strategies 6 ms); then 65 more were found
inside it, jsonschema and PyYAML with attrs, referencing and rpds (0.09 s of every run, which
dspy's own import had paid for GEPA), and it imports 3 now (a codec and a part of
ruamel.yaml). The standard library's thread pool, which `run_gepa.py` imports at its top
(its `ThreadPoolExecutor`), is imported here too: it took 2 ms inside the clock. The process
enables the freeze of long-lived objects (`agentopt.core.heap`) as the console entry point
does.
"""

from __future__ import annotations

import concurrent.futures.thread  # noqa: F401  (as run_gepa.py: see the docstring)
import json
import sys
import time
from pathlib import Path

import jinja2  # noqa: F401
import jsonschema  # noqa: F401
import numpy.random  # noqa: F401
import openai  # noqa: F401
import yaml  # noqa: F401

# Imported before the clock starts (see the module's docstring).
import agentopt.agents.local
import agentopt.core.files.yaml_dump
import agentopt.core.files.yaml_ruamel
import agentopt.evaluators.judges.task_adherence
import agentopt.models.providers.compat
import agentopt.workflows.optimize.strategies.skills
import agentopt.workflows.optimize.strategies.toolset  # noqa: F401
from agentopt.core import heap
from agentopt.core.files.agent_config import load_agent_config, write_agent_config
from agentopt.core.files.agent_definition import AgentDefinition
from agentopt.core.lazy_model import LazyModel
from agentopt.workflows.optimize import (
    NullOptimizeSink,
    OptimizeOptions,
    prepare_optimize,
    run_optimize,
)


def write_project(root: Path, cfg: dict) -> Path:
    """An agent project with the three splits given explicitly in eval.yaml."""
    base = cfg["base_url"]
    agent = AgentDefinition(
        name="store",
        model=f"compat:agent@{base}",
        instructions=cfg["instructions"],
        tools=cfg["tools"],
        tool_mocks=cfg["tool_mocks"] or None,
    )
    write_agent_config(root / ".agent_configs" / "baseline", agent)
    data = root / "data"
    data.mkdir()
    for split in ("train", "validation", "test"):
        rows = [json.dumps(row) for row in cfg[split]]
        (data / f"{split}.jsonl").write_text("\n".join(rows) + "\n", encoding="utf-8")
    config = {
        "name": "scripted-store",
        "agent": {"name": "store", "config": ".agent_configs/baseline/metadata.yaml"},
        "dataset": {"local_uri": "data/train.jsonl"},
        "validation_dataset": {"local_uri": "data/validation.jsonl"},
        "test_dataset": {"local_uri": "data/test.jsonl"},
        "evaluators": cfg.get("evaluators") or ["builtin.task_adherence"],
        "options": {
            "eval_model": f"compat:judge@{base}",
            "optimization_model": f"compat:reflect@{base}",
        },
    }
    (root / "eval.yaml").write_text(json.dumps(config), encoding="utf-8")
    return root


def texts(folder: Path) -> list[str]:
    """A candidate's optimizable texts as its folder holds them (what `apply` would copy):
    instructions, skill bodies, tool and parameter descriptions."""
    definition, _ = load_agent_config(folder, name="store")
    out = [definition.instructions or "", *(s.body or "" for s in definition.skills)]

    def walk(node: object) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "description" and isinstance(value, str):
                    out.append(value)
                else:
                    walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(definition.tools)
    return out


def build_models() -> None:
    """Build every agentopt model the imports defined, before the clock: agentopt builds a
    model on its first use (`agentopt.core.lazy_model`), dspy's import builds its own."""
    stack: list[type[LazyModel]] = [LazyModel]
    while stack:
        model = stack.pop()
        stack.extend(model.__subclasses__())
        if (
            not model.__pydantic_complete__
            and not model.__pydantic_generic_metadata__["parameters"]
        ):
            model.model_rebuild()


def main(config_path: str, result_path: str) -> int:
    build_models()
    heap.enable()  # as the console entry point does: this process ends with the job
    cfg = json.loads(Path(config_path).read_text(encoding="utf-8"))
    project = write_project(Path(cfg["root"]), cfg)
    t0, c0 = time.perf_counter(), time.process_time()
    opts = OptimizeOptions(
        budget_calls=cfg["budget"],
        max_candidates=cfg["max_candidates"],
        seed=cfg["seed"],
    )
    outcome = run_optimize(prepare_optimize(opts, project, None), NullOptimizeSink())
    seconds, cpu_seconds = time.perf_counter() - t0, time.process_time() - c0
    job = outcome.job
    base = job.baseline
    best = job.candidate(job.best) if job.best else base
    assert base is not None and best is not None and job.test is not None

    def rate(summary: object) -> float:
        return float(getattr(summary, "pass_rate", 0.0) or 0.0)

    result = {
        "val_baseline": rate(base.validation),
        "val_best": rate(best.validation),
        "test_baseline": rate(job.test.baseline_score),
        "test_best": rate(job.test.best_score),
        "seconds": seconds,
        "cpu_seconds": cpu_seconds,
        "stop": str(job.termination_reason),
        "candidates": sum(1 for c in job.candidates if c.validation is not None) - 1,
        "best_instructions": outcome.instructions.get(best.id, ""),
        "best_strategy": best.strategy,
        "rules": [r for c in job.candidates for r in c.mutation.get("rules_added", [])],
        "note": job.test.note or "",
        "leak_refusals": job.leak_refusals,
        "stop_phrase": job.stop_reason or "running",
        "stop_detail": job.stop_detail,
        # What each fully evaluated candidate held, for the bench's own leak scan.
        "evaluated_texts": {
            c.id: texts(outcome.store.candidate_dir(c.id))
            for c in job.candidates
            if c.validation is not None and c.id != "baseline"
        },
        "best_texts": texts(outcome.store.candidate_dir(best.id)),
    }
    Path(result_path).write_text(json.dumps(result, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
