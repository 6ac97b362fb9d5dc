"""Optimizer efficiency: score gained per 100 model calls on a scripted benchmark, agentopt's
loop beside `dspy.GEPA` (when DSPy installs).

The benchmark (`bench/gepa_peer/scripted.py`): a local fake OpenAI-compatible server plays the
agent, the judge and the reflection model. Each task's topic has a hidden rule (a phrase);
the agent's answer passes with probability 0.85 when its system prompt contains the rule and
0.15 otherwise, drawn deterministically per (task, rules in the prompt). The rules can only be
learnt from the judge's reasons. Splits are fixed and shared: 16 train, 16 validation and 16
held-out test tasks.

Both optimizers get the same budget of agent + judge calls, test split included:
- agentopt: `optimize --budget-calls BUDGET` (it keeps back the calls the test split needs);
- GEPA: `max_metric_calls = (BUDGET − test calls) / 2 − one iteration` (each metric call = one
  program call + one judge call), then the baseline and its best program on the test split.
  GEPA checks `max_metric_calls` only between iterations, so it overshot it by up to one
  iteration (a minibatch on parent and child plus the whole validation split: 2 × 3 + 16 metric
  calls; one seed sent 516 agent + judge requests against a budget of 480). The budget is
  enforced by keeping that iteration back, and every run's agent + judge requests are checked
  against it: a run over budget says so in its row.
Reflection calls come on top for both. Reported per system (mean over `SEEDS`): validation
gain and test gain (best − baseline, as a pass rate) per 100 requests the server received
(agent + judge + reflection, cache hits cost nothing). A row averages the seeds on which every
system has a score for that split (a run whose test split was cut short says why). DSPy goes
into a throwaway venv under `~/.cache/agentopt/bench-peers/`; if it cannot install or run, the
reason is the GEPA row. Whether the systems differ is a paired test over the seeds: per seed,
agentopt's test gain per 100 calls minus GEPA's, with the exact sign-flip p-value of their mean
(with 3 seeds the smallest possible p is 0.25: no difference can be significant at 0.05
until there are 6 seeds or more). About 15 s once DSPy is installed (the first install takes a
minute or two).

    python -m bench optimizer_efficiency
"""

from __future__ import annotations

import itertools
import json
import subprocess
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from agentopt.contracts.optimize_job import JobRecord
from agentopt.workflows.optimize import (
    NullOptimizeSink,
    OptimizeOptions,
    prepare_optimize,
    run_optimize,
)
from bench.gepa_peer.install import install_dspy
from bench.gepa_peer.scripted import (
    BASE_INSTRUCTIONS,
    BenchTask,
    ScriptedServer,
    judge_prompt,
    make_tasks,
)
from bench.peers.install import Peer
from tests.fake_openai import FakeOpenAI

BENCH = "optimizer_efficiency"
BUDGET_CALLS = 480
"""Agent + judge calls per run, the test split's included."""
SEEDS = (1, 2, 3)
MAX_CANDIDATES = 50
"""High enough that the call budget, not the candidate count, ends agentopt's search."""
GEPA_SCRIPT = Path(__file__).parent / "gepa_peer" / "run_gepa.py"
GEPA_TIMEOUT = 300.0
GEPA_MINIBATCH = 3
"""GEPA's reflection minibatch (`reflection_minibatch_size`)."""


@dataclass
class Result:
    """One optimizer run on one seed (scores are pass rates)."""

    seed: int
    val_baseline: float
    val_best: float
    test_baseline: float | None
    test_best: float | None
    """None when the test split was not fully evaluated (see `note`)."""
    requests: Counter[str]
    """Requests the fake server received, by model name (agent, judge, reflect)."""
    seconds: float
    stop: str
    """Why the search ended."""
    candidates: int
    """Candidates the search fully evaluated on validation (baseline not counted)."""
    note: str = ""
    """Anything odd (e.g. why the test split has no score)."""

    @property
    def calls(self) -> int:
        return sum(self.requests.values())

    @property
    def over_budget(self) -> int:
        """Agent + judge requests beyond `BUDGET_CALLS` (0: within it)."""
        return max(0, self.requests["agent"] + self.requests["judge"] - BUDGET_CALLS)

    def gain_per_100(self, split: str) -> float:
        return (getattr(self, f"{split}_best") - getattr(self, f"{split}_baseline")) / (
            self.calls / 100
        )


@dataclass
class Row:
    """A system's results over the seeds."""

    system: str
    results: list[Result] = field(default_factory=list)
    unavailable: str = ""

    def scored(self, split: str, seeds: set[int] | None = None) -> list[Result]:
        """Runs with a score on `split` (and among `seeds` when given)."""
        return [
            r
            for r in self.results
            if getattr(r, f"{split}_best") is not None and (seeds is None or r.seed in seeds)
        ]

    def per_100(self, split: str, seeds: set[int]) -> float:
        """Mean gain over mean requests, × 100."""
        runs = self.scored(split, seeds)
        gain = sum(getattr(r, f"{split}_best") - getattr(r, f"{split}_baseline") for r in runs)
        return gain / sum(r.calls for r in runs) * 100

    def detail(self, split: str, seeds: set[int]) -> str:
        runs = self.scored(split, seeds)
        n = len(runs)
        calls = Counter[str]()
        for r in runs:
            calls.update(r.requests)
        mix = ", ".join(f"{k} {calls[k] / n:.0f}" for k in ("agent", "judge", "reflect"))
        base = sum(getattr(r, f"{split}_baseline") for r in runs) / n
        best = sum(getattr(r, f"{split}_best") for r in runs) / n
        stops = Counter(r.stop for r in runs)
        candidates = sum(r.candidates for r in runs) / n
        seconds = sum(r.seconds for r in runs) / n
        notes = [r.note for r in self.results if r.note]
        notes += [
            f"seed {r.seed}: {r.over_budget} agent+judge requests over budget"
            for r in runs
            if r.over_budget
        ]
        return (
            f"pass rate {base:.2f} → {best:.2f}; {sum(calls.values()) / n:.0f} requests/run "
            f"({mix}); seeds {', '.join(str(r.seed) for r in runs)}; stop: "
            + ", ".join(f"{k} ×{v}" for k, v in stops.items())
            + f"; {candidates:.1f} candidates validated; {seconds:.1f}s/run"
            + "".join(f"; {note}" for note in notes)
        )


def write_project(root: Path, tasks: list[BenchTask], base_url: str) -> Path:
    """An agent project with the three splits given explicitly in eval.yaml."""
    base = root / ".agent_configs" / "baseline"
    base.mkdir(parents=True)
    (base / "instructions.md").write_text(BASE_INSTRUCTIONS + "\n", encoding="utf-8")
    meta = {"model": f"compat:agent@{base_url}", "instruction_file": "instructions.md"}
    (base / "metadata.yaml").write_text(yaml.safe_dump(meta), encoding="utf-8")
    data = root / "data"
    data.mkdir()
    for split in ("train", "validation", "test"):
        rows = [json.dumps(t.row()) for t in tasks if t.split == split]
        (data / f"{split}.jsonl").write_text("\n".join(rows) + "\n", encoding="utf-8")
    config = {
        "name": "scripted-store",
        "agent": {"name": "store", "config": ".agent_configs/baseline/metadata.yaml"},
        "dataset": {"local_uri": "data/train.jsonl"},
        "validation_dataset": {"local_uri": "data/validation.jsonl"},
        "test_dataset": {"local_uri": "data/test.jsonl"},
        "evaluators": ["builtin.task_adherence"],
        "options": {
            "eval_model": f"compat:judge@{base_url}",
            "optimization_model": f"compat:reflect@{base_url}",
        },
    }
    (root / "eval.yaml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return root


def _score(summary: Any) -> float:
    return float(summary.score) if summary is not None and summary.score is not None else 0.0


def run_agentopt(srv: FakeOpenAI, tasks: list[BenchTask], seed: int, root: Path) -> Result:
    script = ScriptedServer(seed, {t.name: t for t in tasks})
    srv.handler = script
    project = write_project(root, tasks, srv.base_url)
    t0 = time.perf_counter()
    opts = OptimizeOptions(budget_calls=BUDGET_CALLS, max_candidates=MAX_CANDIDATES, seed=seed)
    job: JobRecord = run_optimize(prepare_optimize(opts, project, None), NullOptimizeSink()).job
    seconds = time.perf_counter() - t0
    base = job.baseline
    best = job.candidate(job.best) if job.best else base
    assert base is not None and best is not None and job.test is not None
    complete = job.test.baseline_score is not None and job.test.best_score is not None
    note = "" if complete else f"seed {seed}: no test score ({job.test.note})"
    return Result(
        seed=seed,
        val_baseline=_score(base.validation),
        val_best=_score(best.validation),
        test_baseline=_score(job.test.baseline_score) if complete else None,
        test_best=_score(job.test.best_score) if complete else None,
        requests=Counter(script.counts),
        seconds=seconds,
        stop=str(job.termination_reason),
        candidates=sum(1 for c in job.candidates if c.validation is not None) - 1,
        note=note,
    )


def gepa_metric_budget(test_calls: int, validation: int) -> int:
    """GEPA's `max_metric_calls`: the budget's metric calls less the test split's and one
    iteration's worst case (GEPA stops only between iterations)."""
    iteration = 2 * GEPA_MINIBATCH + validation
    return (BUDGET_CALLS - test_calls) // 2 - iteration


def sign_flip_p(diffs: list[float]) -> float:
    """Two-sided exact p-value of the mean of paired differences under random signs."""
    observed = abs(sum(diffs))
    flips = list(itertools.product((1, -1), repeat=len(diffs)))
    sums = (abs(sum(s * d for s, d in zip(signs, diffs, strict=True))) for signs in flips)
    hits = sum(1 for total in sums if total >= observed - 1e-12)
    return hits / len(flips)


def paired_row(ours: Row, peer: Row) -> dict[str, Any] | None:
    """agentopt − GEPA, test gain per 100 calls, paired by seed."""
    theirs = {r.seed: r for r in peer.scored("test")}
    pairs = [(r, theirs[r.seed]) for r in ours.scored("test") if r.seed in theirs]
    if not pairs:
        return None
    diffs = [a.gain_per_100("test") - b.gain_per_100("test") for a, b in pairs]
    p = sign_flip_p(diffs)
    shown = ", ".join(f"seed {a.seed} {d:+.3f}" for (a, _), d in zip(pairs, diffs, strict=True))
    verdict = "significant" if p < 0.05 else "not significant"
    return {
        "bench": BENCH,
        "case": "agentopt − GEPA: test gain per 100 calls, paired over seeds",
        "value": f"{sum(diffs) / len(diffs):+.3f}",
        "detail": f"{shown}; exact sign-flip p = {p:.2f} ({verdict} at 0.05, "
        f"{len(diffs)} seeds; smallest possible p {2 / 2 ** len(diffs):.2f})",
    }


def run_gepa(
    peer: Peer, srv: FakeOpenAI, tasks: list[BenchTask], seed: int, root: Path
) -> Result | str:
    """GEPA in the dspy venv's python; the reason as text when it fails."""
    assert peer.command is not None
    script = ScriptedServer(seed, {t.name: t for t in tasks})
    srv.handler = script
    test = [t for t in tasks if t.split == "test"]
    test_calls = 2 * len(test) * 2  # baseline and best, one program + one judge call each
    template = judge_prompt("{query}", "{criterion}", "{response}")

    def split(name: str) -> list[dict[str, str]]:
        return [
            {"name": t.name, "query": t.query, "criterion": t.criterion}
            for t in tasks
            if t.split == name
        ]

    config = {
        "base_url": srv.base_url,
        "seed": seed,
        "instructions": BASE_INSTRUCTIONS,
        "judge_template": template,
        "max_metric_calls": gepa_metric_budget(test_calls, len(split("validation"))),
        "minibatch": GEPA_MINIBATCH,
        "train": split("train"),
        "validation": split("validation"),
        "test": split("test"),
    }
    cfg_path, out_path = root / "gepa_config.json", root / "gepa_result.json"
    cfg_path.write_text(json.dumps(config, indent=2), encoding="utf-8")
    try:
        proc = subprocess.run(
            [*peer.command, str(GEPA_SCRIPT), str(cfg_path), str(out_path)],
            capture_output=True, text=True, timeout=GEPA_TIMEOUT, cwd=root,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        return f"GEPA did not finish within {GEPA_TIMEOUT:.0f}s"
    if proc.returncode != 0 or not out_path.exists():
        tail = (proc.stderr or proc.stdout).strip().splitlines()
        return f"GEPA failed (exit {proc.returncode}): {tail[-1][:200] if tail else ''}"
    out = json.loads(out_path.read_text(encoding="utf-8"))
    return Result(
        seed=seed,
        val_baseline=out["val_baseline"],
        val_best=out["val_best"],
        test_baseline=out["test_baseline"],
        test_best=out["test_best"],
        requests=Counter(script.counts),
        seconds=out["seconds"],
        stop=f"max_metric_calls {config['max_metric_calls']}",
        candidates=out["candidates"] - 1,
    )


def run(seeds: tuple[int, ...] = SEEDS) -> list[dict[str, Any]]:
    """agentopt's rows, then GEPA's (or why GEPA is unavailable)."""
    tasks = make_tasks()
    ours, peer_row = Row("agentopt"), Row("dspy.GEPA")
    peer = install_dspy()
    if peer.unavailable:
        peer_row.unavailable = peer.unavailable
    with FakeOpenAI() as srv:
        for seed in seeds:
            with tempfile.TemporaryDirectory() as tmp:
                ours.results.append(run_agentopt(srv, tasks, seed, Path(tmp)))
            if peer_row.unavailable:
                continue
            with tempfile.TemporaryDirectory() as tmp:
                outcome = run_gepa(peer, srv, tasks, seed, Path(tmp))
            if isinstance(outcome, str):
                peer_row.unavailable = outcome
            else:
                peer_row.results.append(outcome)
    if peer_row.unavailable:
        peer_row.results = []
    rows: list[dict[str, Any]] = []
    compared = [row for row in (ours, peer_row) if row.results]
    for row in (ours, peer_row):
        label = row.system if row is ours else f"{row.system} (dspy {peer.version or '?'})"
        if not row.results:
            detail = f"unavailable: {row.unavailable}"
            rows.append({"bench": BENCH, "case": label, "value": "n/a", "detail": detail})
            continue
        for split, key in (("validation", "val"), ("test", "test")):
            # The same seeds for every system: those on which each has a score on the split.
            common = set.intersection(*({r.seed for r in o.scored(key)} for o in compared))
            if not common:
                continue
            rows.append(
                {
                    "bench": BENCH,
                    "case": f"{label}: {split} gain per 100 calls",
                    "value": f"{row.per_100(key, common):+.3f}",
                    "detail": row.detail(key, common)
                    + f"; budget {BUDGET_CALLS} agent+judge calls",
                }
            )
    if ours.results and peer_row.results:
        paired = paired_row(ours, peer_row)
        if paired is not None:
            rows.append(paired)
    return rows


if __name__ == "__main__":
    for r in run():
        print(r)
