"""The flags of `agentopt optimize` and the settings they resolve to (cli.md, files.md §3).

Precedence, like azd: a flag → eval.yaml `options` → the built-in default. `None` in
`OptimizeOptions` means "not given", so eval.yaml can fill it.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from pydantic import ConfigDict, Field

from agentopt.contracts.optimize_job import empty_limit
from agentopt.contracts.resolved_suite import ResolvedSuite
from agentopt.core.lazy_model import LazyModel
from agentopt.models.settings import DEFAULT_CONCURRENCY
from agentopt.workflows.suite_flags import SuiteFlags

TARGETS: tuple[str, ...] = ("instructions", "tools", "skills", "model", "toolset")
DEFAULT_MAX_CANDIDATES = 5
DEFAULT_MAX_STALLS = 5
DEFAULT_PARALLEL_PROPOSALS = 2
DEFAULT_SCREENING_SIZE = 3


@dataclass
class OptimizeOptions(SuiteFlags):
    """What the user asked for on the command line (None = not given); `concurrency` is the
    agent pool across all proposals."""

    dataset: Path | None = None
    optimize_model: str | None = None
    max_candidates: int | None = None
    max_stalls: int | None = None
    budget_calls: int | None = None
    targets: list[str] | None = None
    model_search_space: list[str] | None = None
    real_tools: bool | None = None
    parallel_proposals: int | None = None
    require_improvement: bool = False
    from_matrix: str | None = None
    """`--from-matrix ID|latest`: start from the best variant of a matrix run (its model and
    instructions become the baseline's)."""

    def snapshot(self) -> dict[str, Any]:
        """The options as recorded in job.json (paths as text), for --resume: in job.json's
        own key order (`SNAPSHOT_ORDER`), which saved records keep whatever order the fields
        are declared in."""
        out: dict[str, Any] = {}
        for name in SNAPSHOT_ORDER:
            value = getattr(self, name)
            if value is not None:
                out[name] = str(value) if isinstance(value, Path) else value
        return out

    @classmethod
    def from_snapshot(cls, data: dict[str, Any]) -> OptimizeOptions:
        known = {f.name for f in fields(cls)}
        values = {k: v for k, v in data.items() if k in known}
        for key in ("config", "dataset"):
            if values.get(key) is not None:
                values[key] = Path(values[key])
        return cls(**values)


SNAPSHOT_ORDER: tuple[str, ...] = (
    *("config", "eval_name", "agent", "environment", "project_endpoint", "dataset"),
    *("eval_model", "optimize_model", "evaluators", "max_candidates", "max_stalls"),
    *("budget_calls", "max_cost", "targets", "model_search_space", "real_tools"),
    *("parallel_proposals", "seed", "concurrency", "call_timeout", "require_improvement"),
    "from_matrix",
)
"""job.json's `options` keys, in the order job.json has always written them (`resume`,
`dry_run`, `executor` and `ray_address` belong to one invocation and are not recorded)."""


def split_list(text: str | None) -> list[str] | None:
    """`"a, b,c"` → ["a", "b", "c"]; None/"" → None."""
    if text is None:
        return None
    items = [part.strip() for part in text.split(",")]
    return [i for i in items if i] or None


class OptimizeSettings(LazyModel):
    """The numbers the loop runs with, after flags and eval.yaml were combined."""

    model_config = ConfigDict(extra="forbid")

    max_candidates: int = DEFAULT_MAX_CANDIDATES
    """Candidates fully evaluated on validation before stopping."""
    max_stalls: int = DEFAULT_MAX_STALLS
    """Failed screenings in a row before stopping (`stop.StopRule` widens it)."""
    budget_calls: int | None = None
    """Cap on agent + judge provider calls (cache hits are free)."""
    max_cost: float | None = None
    """USD cap over every pool."""
    parallel_proposals: int = DEFAULT_PARALLEL_PROPOSALS
    """Mutations proposed and screened at once."""
    screening_size: int = DEFAULT_SCREENING_SIZE
    """Train tasks per screening minibatch."""
    seed: int = 0
    """Seed of the split, the parent sampling and the reflection calls."""
    real_tools: bool = False
    """False: tool mocks only (nothing real fires during optimization)."""
    concurrency: int = DEFAULT_CONCURRENCY["agent"]
    """The agent pool's limit, as the call layer (its owner) resolved it; kept in job.json."""
    targets: list[str] = Field(default_factory=list)
    """What may change, in round-robin order."""
    model_search_space: list[str] = Field(default_factory=list)
    max_errors: int = 0
    """Evaluations that may end in an error before the job exits 3 (eval.yaml
    `options.max_errors`; default 0: any error means the decision is unknown)."""

    @property
    def max_empty(self) -> int:
        return empty_limit(self.max_stalls)


def resolve_settings(suite: ResolvedSuite) -> OptimizeSettings:
    """The loop's numbers from the merged settings (`workflows.resolve_suite`: flags over
    eval.yaml `options` over defaults); targets are resolved separately."""
    return OptimizeSettings(
        max_candidates=suite["max_candidates"],
        max_stalls=suite["max_stalls"],
        budget_calls=suite["budget_calls"],
        max_cost=suite["max_cost"],
        parallel_proposals=suite["parallel_proposals"],
        screening_size=suite["screening_size"],
        seed=suite["seed"],
        real_tools=bool(suite["real_tools"]),
        model_search_space=list(suite["model_search_space"] or []),
        max_errors=suite["max_errors"],
    )
