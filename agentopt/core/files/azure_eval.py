"""`evals/azure.eval.yaml` — the file of azd's evaluations extension (azd-eval.md §3), as the
typed declarations it holds *after* loading: `$ref`s spliced in, the older dataset `source:`
spelling read as `file:`, rubric files read, and every relative path resolved against the
file's folder. `eval run` and `optimize` never run these declarations themselves: one eval is
turned into the suite they already run (`workflows.azure_eval.suite`). Load with
`agentopt.core.files.azure_eval_load.load_azure_eval`.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal

from pydantic import ConfigDict, Field

from agentopt.core.files.rubric import RubricDimension
from agentopt.core.lazy_model import LazyModel

ASSET_NAME_RE = re.compile(r"^[A-Za-z0-9_-]{1,255}$")
"""Dataset and evaluator names: letters, digits, `-` and `_`, at most 255 (the extension's
rule for names it registers)."""
BUILTIN_PREFIX = "builtin."
EVAL_HOST = "azure.ai.eval"
"""The azure.yaml `host:` of an evaluation service."""
DEFAULT_FILE = Path("evals") / "azure.eval.yaml"
"""Where `azd ai eval init` puts the file, relative to the azd project root."""

_FROZEN = ConfigDict(extra="forbid", frozen=True)


class DatasetDecl(LazyModel):
    """`datasets[]`: a `.jsonl` published on deploy, or a registered dataset by name."""

    model_config = _FROZEN

    name: str
    file: Path | None = None
    """Absolute; None = already registered under `name`."""
    version: str | None = None
    """Pin a registered version (with `file`: publish as exactly this version, 1.0.39)."""
    tags: dict[str, str] = Field(default_factory=dict)
    line: int | None = None
    """Where the declaration starts in the file, for messages."""


class EvaluatorDecl(LazyModel):
    """`evaluators[]`: a custom evaluator, a rubric from a file or written inline, or a
    registered one pinned by version."""

    model_config = _FROZEN

    name: str
    source: Path | None = None
    """Absolute path of the rubric `.json` (what `azd ai eval generate` writes)."""
    dimensions: list[RubricDimension] | None = None
    """The rubric, read from `source` or from the inline `definition`; None = registered."""
    pass_threshold: float | None = None
    """A generated rubric's own `pass_threshold`, when it holds one."""
    version: str | None = None
    line: int | None = None

    @property
    def registered_only(self) -> bool:
        return self.dimensions is None


class TraceSource(LazyModel):
    """`source: {type: traces}`: rows read from the agent's recorded spans."""

    model_config = _FROZEN

    type: Literal["traces"] = "traces"
    agent_name: str | None = None
    agent_version: str | None = None
    lookback_hours: int | None = None
    start_time: str | None = None
    end_time: str | None = None
    max_traces: int | None = None


class ResponsesSource(LazyModel):
    """`source: {type: responses}`: rows read from stored responses by id."""

    model_config = _FROZEN

    type: Literal["responses"] = "responses"
    response_ids: list[str] = Field(default_factory=list)
    max_turns: int | None = None


class Target(LazyModel):
    """`target:` — what each row invokes: an agent service or a model deployment."""

    model_config = _FROZEN

    type: Literal["agent", "model"] = "agent"
    name: str


class Simulation(LazyModel):
    """`simulation:` (1.0.39): rows are seeds for simulated conversations."""

    model_config = _FROZEN

    model: str
    num_conversations: int | None = None
    max_turns: int | None = None


class EvaluatorUseDecl(LazyModel):
    """One entry of an eval's `evaluators:`."""

    model_config = _FROZEN

    evaluator: str
    """`builtin.<name>` or a catalog (declared or registered) name."""
    name: str | None = None
    """Criterion label, needed when one evaluator appears twice."""
    version: str | None = None
    initialization_parameters: dict[str, Any] = Field(default_factory=dict)
    data_mapping: dict[str, str] = Field(default_factory=dict)
    """Evaluator input → `{{item.<column>}}` or `{{sample.<field>}}`."""

    @property
    def is_builtin(self) -> bool:
        return self.evaluator.startswith(BUILTIN_PREFIX)

    @property
    def label(self) -> str:
        return self.name or self.evaluator


class EvalDecl(LazyModel):
    """`evals[]`: one evaluation over the catalogs."""

    model_config = _FROZEN

    name: str
    id: str | None = None
    description: str | None = None
    dataset: str | None = None
    source: TraceSource | ResponsesSource | None = None
    evaluation_level: Literal["turn", "conversation"] | None = None
    max_samples: int | None = None
    evaluators: list[EvaluatorUseDecl] = Field(default_factory=list)
    target: Target | None = None
    simulation: Simulation | None = None
    line: int | None = None

    @property
    def rows_from(self) -> str:
        """`dataset`, `traces` or `responses`: where the eval's rows come from."""
        return self.source.type if self.source is not None else "dataset"


class AzureEvalFile(LazyModel):
    """A loaded azure.eval.yaml (or the inline body of an `azure.ai.eval` service)."""

    model_config = ConfigDict(extra="forbid")

    path: Path
    """The file the declarations were read from (azure.yaml for an inline service body)."""
    service: str | None = None
    """The azure.yaml service the file belongs to, when it was found through azure.yaml."""
    datasets: list[DatasetDecl] = Field(default_factory=list)
    evaluators: list[EvaluatorDecl] = Field(default_factory=list)
    evals: list[EvalDecl] = Field(default_factory=list)

    @property
    def base_dir(self) -> Path:
        """Relative paths inside the file resolve against its folder (azd-eval.md §3.1)."""
        return self.path.resolve().parent

    def dataset(self, name: str) -> DatasetDecl | None:
        return next((d for d in self.datasets if d.name == name), None)

    def evaluator(self, name: str) -> EvaluatorDecl | None:
        return next((e for e in self.evaluators if e.name == name), None)

    def eval(self, name: str) -> EvalDecl | None:
        return next((e for e in self.evals if e.name == name or e.id == name), None)


class RowShape(LazyModel):
    """How the rows of the eval an EvalConfig was made from become its tasks: the columns its
    evaluators' `data_mapping` names, whether the rows already hold the responses (no
    `target:`), and its `max_samples` cap. Applied once, when the dataset is loaded
    (`datasets.row_shape.shape_rows`)."""

    model_config = _FROZEN

    eval_name: str
    """The eval of azure.eval.yaml the suite was made from."""
    columns: dict[str, str] = Field(default_factory=dict)
    """Task field (`ground_truth`, `context`, `query`, `response`) → the row's column."""
    captured: bool = False
    """No target: each row's `response` column is the answer to score."""
    cap: int | None = None
    """`max_samples`: the first N rows (None or 0: all)."""
