"""`eval init` and the input side of `eval generate`: from flags, the detected agent and (when
a person is there) answers to questions, to one resolved `SuiteRequest`.

The questions themselves are asked by the CLI through an `Asker`; here we only decide what
is missing and what the defaults are. Without an asker (`--no-prompt`, CI, no terminal) a
missing required value is an error that names the flag to pass, and an existing eval.yaml is
kept (and the message says so) unless `--reset-defaults` is given.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal, Protocol

from pydantic import ConfigDict, Field

from agentopt.core.errors import ConfigError, InputError, Problem
from agentopt.core.files.agent_config import METADATA_FILE, write_agent_config
from agentopt.core.files.agent_definition import AgentDefinition
from agentopt.core.files.eval_yaml import EvalConfig
from agentopt.core.files.eval_yaml_load import load_eval_config
from agentopt.core.files.yaml_source import read_text
from agentopt.core.lazy_model import LazyModel
from agentopt.core.paths import AGENT_CONFIGS_DIR
from agentopt.registry import default_dataset_name, default_evaluator_name
from agentopt.workflows.detect import DetectedTarget
from agentopt.workflows.eval_model import resolve_eval_model
from agentopt.workflows.generate.config import find_rubric_entry
from agentopt.workflows.generate.dataset import parse_categories
from agentopt.workflows.generate.prompts import tool_summaries
from agentopt.workflows.generate.suite import DEFAULT_EVAL_MODEL, SuiteRequest
from agentopt.workflows.resolve_suite import GENERATE, resolve_suite

DEFAULT_MAX_SAMPLES = 15
INSTRUCTION_MISSING = "a generation instruction is required"
INSTRUCTION_FLAGS = "pass -g/--gen-instruction or --gen-instruction-file"


class Asker(Protocol):
    """How the CLI asks a person (rich prompts); tests pass a scripted one."""

    def text(self, question: str, default: str | None = None) -> str: ...

    def confirm(self, question: str, default: bool = False) -> bool: ...

    def integer(self, question: str, default: int, lo: int, hi: int) -> int: ...


class GenerateOptions(LazyModel):
    """The flags of `eval init` / `eval generate`; None = not given. Paths are absolute."""

    model_config = ConfigDict(extra="forbid")

    gen_instruction: str | None = None
    gen_instruction_file: Path | None = None
    eval_model: str | None = None
    max_samples: int | None = None
    dataset: Path | None = None
    evaluators: list[str] = Field(default_factory=list)
    name: str | None = None
    out_file: Path | None = None
    reset_defaults: bool = False
    categories: str | None = None
    multi_turn: int = 0
    evaluation_level: Literal["item", "conversation"] | None = None
    """`--evaluation-level`: conversation makes the multi-turn tasks simulated-user tasks."""
    seed: int = 0
    remote: bool = False
    cwd: Path = Path(".")
    """Where a typed `@FILE` answer is resolved from (the command's working folder)."""
    why_no_prompt: str = "--no-prompt"
    """Said when an existing eval.yaml is kept because nobody can be asked."""


class Kept(LazyModel):
    """An existing eval.yaml was left as it is (nothing to generate)."""

    model_config = ConfigDict(extra="forbid")

    config_path: Path
    message: str


def ensure_baseline(target: DetectedTarget) -> Path | None:
    """Write `.agent_configs/baseline/` from the agent definition when it is missing and the
    definition has instructions; the folder written, else None."""
    defn = target.definition
    if target.baseline_dir is not None or defn is None or not (defn.instructions or "").strip():
        return None
    folder = target.project_dir / AGENT_CONFIGS_DIR / "baseline"
    if (folder / METADATA_FILE).is_file():
        return None
    write_agent_config(folder, defn)
    target.baseline_dir = folder
    return folder


INSTRUCTIONS_FILE = "instructions.md"
AZD_SKILL_DIRS = ("skills", "skill")
"""The skill folders azd's baseline picks up beside the agent (`writeBaselineConfig`)."""


def write_instruction_baseline(target: DetectedTarget, options: GenerateOptions) -> Path | None:
    """azd's `writeBaselineIfNeeded` (eval_helpers.go, azure.ai.agents in Azure/azure-dev):
    for an azd project's agent (an azure.yaml service), when no agent configuration is
    resolved (no eval.yaml `agent.config`, no
    `.agent_configs/baseline/metadata.yaml`) and the agent's definition has no instructions
    (a hosted agent; a prompt agent defined by a `config:` block), the `-g` text (or the
    `--gen-instruction-file` content) becomes the baseline, written as azd writes it:
    `instructions.md` holding the text as given, and `metadata.yaml` with `instruction_file`
    and, when the agent folder has `skills/` (or `skill/`), `skill_dir` relative to it. An
    existing baseline is never overwritten. Returns the metadata.yaml written, else None."""
    defn = target.definition
    if target.azure_yaml is None or target.baseline_dir is not None:
        return None  # azd writes it for an azd project's agent only
    if defn is not None and (defn.instructions or "").strip():
        return None
    text = options.gen_instruction or ""
    if not text.strip() and options.gen_instruction_file is not None:
        text = read_text(options.gen_instruction_file, shown=str(options.gen_instruction_file))
    if not text.strip():
        return None
    folder = target.project_dir / AGENT_CONFIGS_DIR / "baseline"
    if (folder / METADATA_FILE).is_file():
        return None
    lines = [f"instruction_file: {INSTRUCTIONS_FILE}"]
    skills = next((d for d in AZD_SKILL_DIRS if (target.project_dir / d).is_dir()), None)
    if skills is not None:
        lines.append(f"skill_dir: ../../{skills}")
    files = {
        INSTRUCTIONS_FILE: text.encode("utf-8"),
        METADATA_FILE: ("\n".join(lines) + "\n").encode("utf-8"),
    }
    # Files given: the definition only names the folder's agent; a folder without
    # metadata.yaml (a half-made baseline) is kept beside it as `baseline.<time>`.
    write_agent_config(folder, AgentDefinition(name="baseline"), overwrite=True, files=files)
    target.baseline_dir = folder
    return folder / METADATA_FILE


def plan_suite(
    options: GenerateOptions,
    target: DetectedTarget,
    *,
    asker: Asker | None,
    wizard: bool = False,
) -> SuiteRequest | Kept:
    """Resolve every input of the suite, asking for what is missing when `asker` is given.

    Args:
        options: the flags.
        target: the detected agent.
        asker: None = never ask (`--no-prompt`): missing required values are errors.
        wizard: `eval init`: also ask for the suite name, eval model and max samples.
    """
    config_path = options.out_file or target.eval_yaml
    existing = _existing(config_path, options.reset_defaults)
    write_dataset = write_evaluator = fresh = True
    if config_path.exists() and not options.reset_defaults:
        shown = config_path.name
        if asker is None:
            return Kept(
                config_path=config_path,
                message=f"{shown} already exists; kept it unchanged "
                f"({options.why_no_prompt}). Pass --reset-defaults to regenerate the dataset "
                "and the evaluator.",
            )
        write_dataset = asker.confirm(f"{shown} exists. Regenerate the dataset?", False)
        write_evaluator = asker.confirm(f"{shown} exists. Regenerate the evaluator?", False)
        if not (write_dataset or write_evaluator):
            return Kept(config_path=config_path, message=f"Kept {shown} unchanged.")
        fresh = False
    agent_name = target.agent_name or target.service or target.project_dir.resolve().name
    defn = target.definition
    fallback = (defn.model if defn else None) or DEFAULT_EVAL_MODEL
    suite = resolve_suite(
        GENERATE, options, existing, target, defaults={"name": agent_name}, judge_default=fallback
    )
    suite_name = suite["name"]
    if wizard and asker is not None and not options.name:
        suite_name = asker.text("Suite name", suite_name).strip() or suite_name
    instruction = _instruction(options, asker, defn)
    # The same resolution as eval run and optimize; with nothing configured, the agent's own
    # model is offered (and then written to eval.yaml, so every later command agrees).
    model_default = resolve_eval_model(None, existing, target, default=fallback).name
    eval_model = suite["judge_model"]
    if wizard and asker is not None and not options.eval_model:
        eval_model = asker.text("Eval model (judge and generator)", model_default).strip()
    max_samples = suite["max_samples"]
    if max_samples is None:
        max_samples = DEFAULT_MAX_SAMPLES
        if wizard and asker is not None and options.dataset is None and write_dataset:
            max_samples = asker.integer("How many tasks to generate", max_samples, 1, 1000)
    dataset_name = default_dataset_name(agent_name)
    evaluator_name = default_evaluator_name(agent_name)
    if existing is not None and not fresh:
        if existing.dataset is not None and existing.dataset.name:
            dataset_name = existing.dataset.name
        evaluator_name = find_rubric_entry(existing, evaluator_name)
    meta = target.baseline_dir / METADATA_FILE if target.baseline_dir else None
    return SuiteRequest(
        project_dir=target.project_dir,
        config_path=config_path,
        suite_name=suite_name,
        agent_name=agent_name,
        agent_kind=target.kind,
        agent_config=meta if meta is not None and meta.is_file() else None,
        agent_instructions=defn.instructions if defn else None,
        tools=list(defn.tools) if defn else [],
        skills=[{"name": k.name, "description": k.description} for k in defn.skills]
        if defn
        else [],
        instruction=instruction,
        eval_model=eval_model,
        max_samples=max_samples,
        categories=parse_categories(options.categories),
        multi_turn=options.multi_turn,
        evaluation_level=options.evaluation_level
        or (existing.options.evaluation_level if existing else None),
        seed=options.seed,
        dataset_file=options.dataset,
        extra_evaluators=list(options.evaluators),
        dataset_name=dataset_name,
        evaluator_name=evaluator_name,
        write_dataset=write_dataset,
        write_evaluator=write_evaluator,
        fresh_config=fresh,
        remote=options.remote,
        project_endpoint=target.project_endpoint,
        base_config=existing if fresh else None,
    )


def read_instruction_file(path: Path) -> str:
    """The generation instruction from a file; an empty file is an error."""
    text = read_text(path, shown=str(path)).strip()
    if not text:
        raise InputError.at(
            str(path), "", "expected the generation instruction, found an empty file"
        )
    return text


def derived_instruction(defn: AgentDefinition) -> str | None:
    """The generation instruction azd derives when `-g` is not given: the agent's own
    instructions, tools and skills describe it (they are also in the prompt in full), so the
    paragraph only says who the agent is and what it has; None when it has no instructions."""
    if not (defn.instructions or "").strip():
        return None
    first = f'The agent "{defn.name}"'
    text = f"{first}: {defn.description.strip()}" if defn.description else first
    text = text.rstrip(".") + ". It does what its own instructions below say."
    tools = tool_summaries(defn.tools)
    if tools:
        text += " It can call these tools: " + ", ".join(t["name"] for t in tools) + "."
    if defn.skills:
        text += " It can load these skills: " + ", ".join(k.name for k in defn.skills) + "."
    return text


def _instruction(
    options: GenerateOptions, asker: Asker | None, defn: AgentDefinition | None = None
) -> str:
    if options.gen_instruction and options.gen_instruction_file:
        raise ConfigError(
            problems=[
                Problem(
                    "",
                    "--gen-instruction",
                    "give the generation instruction once: -g/--gen-instruction TEXT or "
                    "--gen-instruction-file PATH, not both",
                )
            ]
        )
    if options.gen_instruction and options.gen_instruction.strip():
        return options.gen_instruction.strip()
    if options.gen_instruction_file is not None:
        return read_instruction_file(options.gen_instruction_file)
    derived = derived_instruction(defn) if defn is not None else None
    if asker is None:
        if derived is not None:
            return derived
        raise ConfigError(INSTRUCTION_MISSING, hint=INSTRUCTION_FLAGS)
    answer = asker.text(
        "Describe what the agent does, in one paragraph (or @FILE to read it from a file)",
        derived,
    ).strip()
    if answer.startswith("@"):
        return read_instruction_file(options.cwd / Path(answer[1:]).expanduser())
    if not answer:
        raise ConfigError(INSTRUCTION_MISSING, hint=INSTRUCTION_FLAGS)
    return answer


def _existing(path: Path, reset: bool) -> EvalConfig | None:
    if not path.is_file():
        return None
    try:
        return load_eval_config(path)[0]
    except InputError:
        if reset:  # it is about to be replaced (after a backup): its content does not matter
            return None
        raise
