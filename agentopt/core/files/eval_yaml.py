"""`eval.yaml` — the suite and the optimization run (files.md §3), as pydantic models.

These models hold the file *after* loading: aliases mapped to canonical keys, unknown keys
dropped (with a warning), bare evaluator names turned into entries, and every relative path
resolved against the eval.yaml folder. `None` means "not set in the file", so that CLI flags
and built-in defaults can be layered on top by the caller. Load with
`agentopt.core.files.eval_yaml_load.load_eval_config`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import AfterValidator, ConfigDict, Field
from pydantic_core import PydanticCustomError

from agentopt.core.files.azure_eval import RowShape
from agentopt.core.lazy_model import LazyModel
from agentopt.core.plugins import PROVIDERS_GROUP, TARGETS_GROUP, PluginRegistry, installed_names

BUILTIN_TARGETS = ("local", "hosted", "endpoint", "command", "foundry")
"""The agent targets agentopt ships, in the order files.md lists them."""
BUILTIN_PROVIDER_TYPES = (
    "openai",
    "azure",
    "foundry",
    "ollama",
    "vllm",
    "compat",
    "local",
    "mock",
)
"""The provider types agentopt ships, in the order models.md lists them."""
OptimizeTarget = Literal["instructions", "tools", "skills", "model", "toolset"]


def _one_of(builtin: tuple[str, ...], group: str) -> AfterValidator:
    """A name agentopt ships, or one a plugin registers under `group` (its entry point)."""

    def check(value: str) -> str:
        if value in builtin or PluginRegistry.declared(group, value):
            return value
        plugins = [n for n in installed_names(group) if n not in builtin]
        shown = [f"'{n}'" for n in (*builtin, *plugins)]
        raise PydanticCustomError(
            "literal_error",
            "Input should be {expected}",
            {"expected": ", ".join(shown[:-1]) + " or " + shown[-1]},
        )

    return AfterValidator(check)


AgentTargetName = Annotated[str, _one_of(BUILTIN_TARGETS, TARGETS_GROUP)]
ProviderType = Annotated[str, _one_of(BUILTIN_PROVIDER_TYPES, PROVIDERS_GROUP)]
StructuredOutput = Literal["auto", "json_schema", "json_object", "guided_json", "prompt"]
ToolCalling = Literal["auto", "native", "prompted"]

_STRICT = ConfigDict(extra="forbid", coerce_numbers_to_str=True)


class InstructionFile(LazyModel):
    """`agent.instruction: {file: path}` — instructions kept in a separate file."""

    model_config = _STRICT

    file: Path
    """Resolved against the eval.yaml folder."""


class _Instructed:
    """An entry with an `instruction:` (the agent's, or a variant's)."""

    if TYPE_CHECKING:
        instruction: str | InstructionFile | None

    def instruction_text(self) -> str | None:
        """The instructions: inline as written, the file form read from its file; None when
        not set."""
        if isinstance(self.instruction, InstructionFile):
            from agentopt.core.files.yaml_source import read_text

            return read_text(self.instruction.file, kind="text")
        return self.instruction


class AgentSection(_Instructed, LazyModel):
    """`agent:` — which agent the suite runs and how to reach it."""

    model_config = _STRICT

    name: str | None = None
    """Service / agent name (the azure.yaml service, or a free name)."""
    kind: Literal["prompt", "hosted"] | None = None
    """prompt: instructions + model + tools; hosted: the user's own agent process."""
    version: str | None = None
    """Deployed agent version (Foundry), optional."""
    config: Path | None = None
    """`.agent_configs/<id>/metadata.yaml` holding the optimizable configuration."""
    model: str | None = None
    """Baseline model override, `[provider:]model`."""
    target: AgentTargetName | None = None
    """How agentopt runs the agent; None = decide by the rule in agents.md."""
    instruction: str | InstructionFile | None = None
    """Inline instructions or `{file: path}`; azd ignores it, agentopt honours it."""
    endpoint: str | None = None
    """URL of a running agent (target `endpoint`)."""
    protocol: Literal["responses", "chat_completions"] | None = None
    """Wire protocol of `endpoint` (default responses)."""
    command: list[str] | None = None
    """Program for target `command` (a string is split like a shell would)."""
    port: int | None = Field(default=None, ge=1, le=65535)
    """Port a hosted agent listens on (default 8088)."""
    headers: dict[str, str] = Field(default_factory=dict)
    """Header name → name of the environment variable holding its value."""


class PinnedAsset(LazyModel):
    """A registered asset (dataset, evaluator) pinned by registry name/version, with an
    editable working copy beside it: `eval update` and the suite readers treat both kinds
    alike (the copy is compared by content hash with the pinned version)."""

    model_config = _STRICT

    name: str | None = None
    """Registry name (datasets: under `.azure/.foundry/datasets/`)."""
    version: str | None = None
    """Registered version ("1", "2", …); None = latest (built-in evaluators have none)."""
    local_uri: Path | None = None
    """Editable working copy: a dataset file, or folder holding one *.jsonl/*.json; an
    evaluator's file, e.g. `evaluators/<name>/rubric_dimensions.json`."""


class DatasetRef(PinnedAsset):
    """A dataset pinned by registry name/version, or a local file or folder, or both."""


class EvaluatorEntry(PinnedAsset):
    """One evaluator of the suite (a bare name in the file becomes `{name: ...}`)."""

    name: str
    """`builtin.*`, an M365 alias, or a registered evaluator name."""
    initialization_parameters: dict[str, Any] = Field(default_factory=dict)
    """Options passed to the evaluator (threshold, patterns, mode, …)."""


class OptimizationConfig(LazyModel):
    """`options.optimization_config:`."""

    model_config = _STRICT

    model_search_space: list[str] = Field(default_factory=list)
    """Models the `model` strategy may switch to."""
    candidate_screening_sample_size: int | None = Field(default=None, ge=1)
    """Train tasks per screening minibatch (default 3)."""


class ProviderConfig(LazyModel):
    """`options.providers.<name>:` — a named model provider (models.md §2)."""

    model_config = _STRICT

    type: ProviderType
    """Which adapter serves it."""
    base_url: str | None = None
    """OpenAI-compatible base URL (ollama, compat, openai)."""
    api_key_env: str | None = None
    """Name of the environment variable holding the key (never the key itself)."""
    api_version: str | None = None
    """Azure OpenAI API version."""
    endpoint: str | None = None
    """Azure OpenAI or Foundry project endpoint."""
    headers: dict[str, str] = Field(default_factory=dict)
    """Extra header name → environment variable name."""
    reasoning: bool | None = None
    """Treat its models as reasoning models (max_completion_tokens, no temperature)."""
    default: bool = False
    """Bare model names go to this provider (else to the first declared one)."""
    structured_output: StructuredOutput = "auto"
    """How JSON answers are asked for: `auto` probes the ladder (json_schema strict →
    non-strict → json_object + schema in the prompt → schema in the prompt) once and remembers
    what the server accepted; any other value uses that mode and skips the probe
    (`guided_json` is vLLM's own)."""
    tool_calling: ToolCalling = "auto"
    """`native` sends `tools`; `prompted` describes the tools in the prompt and reads a JSON
    tool call back; `auto` sends `tools` and falls back to prompted when the server refuses
    or ignores them."""

    @property
    def url(self) -> str | None:
        """The address to call: `base_url`, else `endpoint` (Azure OpenAI, Foundry)."""
        return self.base_url or self.endpoint


class Price(LazyModel):
    """`options.prices.<model>:` — USD per million tokens."""

    model_config = _STRICT

    input: float = Field(ge=0)
    output: float = Field(ge=0)
    cached_input: float | None = Field(default=None, ge=0)


class Options(LazyModel):
    """`options:` — azd's keys first, then agentopt's own (documented in the README)."""

    model_config = _STRICT

    eval_model: str | None = None
    """Judge and generator model."""
    optimization_model: str | None = None
    """Reflection model of `optimize`."""
    max_candidates: int | None = Field(default=None, ge=1)
    """Candidates fully evaluated by `optimize` (default 5)."""
    max_stalls: int | None = Field(default=None, ge=1)
    """Failed screenings in a row before `optimize` stops (default 5)."""
    max_concurrent_agent_runs: int | None = Field(default=None, ge=1)
    """Agent pool concurrency (default 8)."""
    evaluation_level: Literal["item", "conversation"] | None = None
    """None / item: every agent turn is scored; conversation: every task is played as a
    conversation (simulated when it has no scripted turns) and scored as a whole."""
    optimization_config: OptimizationConfig = Field(default_factory=OptimizationConfig)
    """Search-space settings of `optimize`."""
    # agentopt's own keys
    providers: dict[str, ProviderConfig] = Field(default_factory=dict)
    """Named providers, usable as `<name>:<model>`."""
    prices: dict[str, Price] = Field(default_factory=dict)
    """Price overrides per model name."""
    judge_concurrency: int | None = Field(default=None, ge=1)
    """Judge pool concurrency (default 16)."""
    repeat: int | None = Field(default=None, ge=1)
    """Runs per task (like `--repeat`)."""
    seed: int | None = None
    """Seed for splits, sampling and providers that accept one."""
    max_errors: int | None = Field(default=None, ge=0)
    """Agent/judge errors tolerated before exit 3 (like `--max-errors`)."""
    max_cost: float | None = Field(default=None, ge=0)
    """USD cap for the run (like `--max-cost`)."""
    budget_calls: int | None = Field(default=None, ge=1)
    """Cap on agent + judge calls of `optimize`."""
    timeout_seconds: float | None = Field(default=None, gt=0)
    """Per-turn agent timeout (default 120)."""
    attempt_timeout_seconds: float | None = Field(default=None, gt=0)
    """Timeout of one model-call attempt whose progress cannot be watched, before it is
    retried (default: the call deadline when `call_timeout_seconds` is set, else 120 s / 6
    attempts, at least 10 s)."""
    call_timeout_seconds: float | None = Field(default=None, gt=0)
    """Deadline of one model call, retries included (like `--call-timeout`; default 120 s,
    raised for the embedded model and self-hosted servers to what the tokens asked need at
    the measured speed)."""
    stall_timeout_seconds: float | None = Field(default=None, gt=0)
    """A streaming model call (embedded model, self-hosted servers) with no new token for
    this long is cut and retried (default 60)."""
    targets: list[OptimizeTarget] | None = None
    """What `optimize` may change (default: all the agent has)."""
    parallel_proposals: int | None = Field(default=None, ge=1)
    """Mutations proposed and screened at once (default 2)."""
    fail_under: float | None = Field(default=None, ge=0, le=1)
    """Quality gate on the run score (like `--fail-under`)."""
    min_pass_rate: float | None = Field(default=None, ge=0, le=1)
    """Quality gate on the pass rate (like `--min-pass-rate`)."""
    real_tools: bool | None = None
    """Let `optimize` call real tools instead of mocks (like `--real-tools`)."""
    executor: Literal["local", "ray"] | None = None
    """Where tasks are played: this process (default) or a Ray cluster (like `--executor`)."""
    simulator_model: str | None = None
    """Model of the simulated user (default: `eval_model`)."""
    desired_num_turns: int | None = Field(default=None, ge=1, le=20)
    """Most agent turns of a simulated conversation when its task sets none (default 5)."""
    max_answer_bytes: int | None = Field(default=None, ge=1024)
    """Largest answer, tool result or judge reply accepted, in bytes of UTF-8 (default 1 MiB);
    a larger one is an error and is discarded, never stored or forwarded."""
    secrets: list[str] = Field(default_factory=list)
    """Names of environment variables whose values are masked in every file and message
    agentopt writes (besides the `*_KEY`, `*_TOKEN`, `*_SECRET`, `*_PASSWORD` and
    `*_CONNECTION_STRING` variables and every configured header, which always are)."""


class VariantEntry(_Instructed, LazyModel):
    """One entry of `variants:` (agentopt): the suite's agent again with another model and/or
    other instructions. Two or more entries make `eval run` a matrix run."""

    model_config = _STRICT

    name: str | None = None
    """Column head (default: what the variant changes, e.g. the model name)."""
    model: str | None = None
    """The agent model for this variant (default: the agent's own)."""
    instruction: str | InstructionFile | None = None
    """Inline instructions or `{file: path}` (default: the agent's own)."""


class EvalConfig(LazyModel):
    """A loaded eval.yaml."""

    model_config = _STRICT

    name: str | None = None
    """Suite name."""
    agent: AgentSection | None = None
    """The agent under test."""
    dataset: DatasetRef | None = None
    """The tasks."""
    validation_dataset: DatasetRef | None = None
    """Optimize only: ranking split."""
    test_dataset: DatasetRef | None = None
    """Optimize only: held-out split (agentopt)."""
    evaluators: list[EvaluatorEntry] = Field(default_factory=list)
    """Evaluators run on every task."""
    options: Options = Field(default_factory=Options)
    """Models, limits and optimizer settings."""
    max_samples: int | None = Field(default=None, ge=1, le=1000)
    """Tasks `eval generate` writes (default 15)."""
    variants: list[VariantEntry] = Field(default_factory=list)
    """agentopt: run the tasks against each of these variants of the agent (a matrix run)."""

    path: Path | None = Field(default=None, exclude=True)
    """Where the file was read from (not a key of the file)."""
    base_dir: Path = Field(default=Path("."), exclude=True)
    """Folder relative paths were resolved against (not a key of the file)."""
    rows: RowShape | None = Field(default=None, exclude=True)
    """Made from one eval of an azure.eval.yaml: how its rows become tasks (not a key of the
    file)."""


INTERNAL_FIELDS = frozenset({"path", "base_dir", "rows"})
