"""Turn a configured evaluator (`EvaluatorUse`) into a runnable `Evaluator`.

Resolution, first that applies:
1. `local_uri`: a rubric_dimensions.json, an evaluator YAML, a `.py` file, or a folder with one;
2. a registered name or alias (`builtin.relevance`, `Relevance`, `relevance`), case-insensitive;
3. an M365 custom evaluator `custom-evaluators/<name>/`: an LLM judge when it holds
   `<name>.prompty` (run by agentopt's judge path; the `.py` wrapper beside it, which calls
   promptflow, is not imported), else the code evaluator `<name>.py`;
4. a registered evaluator version `.azure/.foundry/evaluators/<name>.v<N>.yaml` (pinned or latest);
5. a working copy `evaluators/<name>/rubric_dimensions.json` beside eval.yaml;
otherwise a ConfigError listing the valid names, with a did-you-mean.
"""

from __future__ import annotations

# The judges and the prompty parser (jinja2: 55 ms of a 0.4 s start) are imported by the
# branches that build them: a run of deterministic evaluators never loads them.
import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentopt.contracts.eval_result import EvalResult
from agentopt.core.errors import ConfigError, InputError, Problem
from agentopt.core.files import bounded
from agentopt.core.files.evaluator_yaml import (
    BuiltinConfigDefinition,
    CodeDefinition,
    EvaluatorSpec,
    PromptDefinition,
    RubricDefinition,
    load_evaluator_yaml,
)
from agentopt.core.files.m365_schemas import RETIRED_HINT, retired_evaluator
from agentopt.core.files.rubric import load_rubric
from agentopt.core.files.yaml_source import read_text
from agentopt.core.paths import registry_dir
from agentopt.core.versions import find_version, latest_version, version_key
from agentopt.evaluators.base import (
    BuildContext,
    EvalSample,
    Evaluator,
    EvaluatorUse,
    Offload,
)
from agentopt.evaluators.code_evaluators import (
    CUSTOM_DIR,
    CodeEvaluator,
    custom_folder_file,
    load_entry_point,
    load_first_class,
)
from agentopt.evaluators.code_worker import UserCode
from agentopt.evaluators.registry import build_registered, lookup, unknown_evaluator

if TYPE_CHECKING:
    from agentopt.models.call import CallLayer

RUBRIC_FILE = "rubric_dimensions.json"
SEEN_MAX = 64
"""Specs an `EvaluatorCache` remembers by identity (a task's own evaluators are new objects)."""
_VERSION = re.compile(r"^(?P<name>.+)\.v(?P<version>[0-9A-Za-z][0-9A-Za-z._-]*)\.ya?ml$")


def build_evaluator(
    spec: EvaluatorUse | str | dict[str, Any] | Any,
    *,
    judge_model: str | None = None,
    layer: CallLayer | None = None,
    project_dir: Path | str = ".",
    offload: Offload | None = None,
    run_code: bool = True,
) -> Evaluator:
    """Build the evaluator a configuration entry names.

    Args:
        spec: an `EvaluatorUse`, a name, an eval.yaml entry or M365 `EvaluatorRef`.
        judge_model: the model LLM judges call (eval.yaml `options.eval_model`).
        layer: the call layer (`agentopt.models.call.CallLayer`) for judge and embedding calls.
        project_dir: the agent project folder (custom evaluators, registry, rubric copies).
        offload: the run's process pool, for code evaluators that burn CPU (code_worker.py).
        run_code: False = check code evaluators without importing them (`--dry-run` and the
            checks before a run: no code from an eval file runs without a real run).

    Raises:
        ConfigError: unknown name (listing the valid ones), a broken definition file, bad
            options, or a judge evaluator without a judge model.
    """
    ctx = BuildContext(
        judge_model=judge_model,
        layer=layer,
        project_dir=Path(project_dir),
        offload=offload,
        run_code=run_code,
    )
    return build_in(EvaluatorUse.coerce(spec), ctx)


def build_in(use: EvaluatorUse, ctx: BuildContext) -> Evaluator:
    """`use` built in `ctx` (the resolution order of this module's docstring): what
    `build_evaluator` and `EvaluatorCache` both do, from one context."""
    if use.local_uri:
        path = Path(use.local_uri)
        if not path.is_absolute():
            path = ctx.project_dir / path
        return _from_path(use, path, ctx)
    info = lookup(use.name)
    if info is not None:
        return build_registered(info, use.options, ctx)
    prompty = ctx.project_dir / CUSTOM_DIR / use.name / f"{use.name}.prompty"
    if bounded.is_file(prompty):
        return _prompty(use, prompty, ctx)
    custom = custom_folder_file(ctx.project_dir, use.name)
    if custom is not None:
        return CodeEvaluator(
            name=use.name,
            target=load_first_class(custom, use.name, run=ctx.run_code),
            options=use.options,
            context=ctx,
            source=UserCode("class_file", str(custom), use.name),
        )
    registered = registered_yaml(ctx.project_dir, use.name, use.version)
    if registered is not None:
        return from_evaluator_yaml(load_evaluator_yaml(registered), use, ctx)
    working = ctx.project_dir / "evaluators" / use.name / RUBRIC_FILE
    if bounded.is_file(working):
        return _rubric(use, working, ctx)
    retired = retired_evaluator(use.name)
    if retired is not None:
        raise ConfigError(retired, hint=RETIRED_HINT)
    raise unknown_evaluator(
        use.name,
        extra=f", a custom evaluator {CUSTOM_DIR}/{use.name}/{use.name}.py, or a registered "
        "evaluator (.azure/.foundry/evaluators/<name>.v<N>.yaml)",
    )


def registered_yaml(project_dir: Path, name: str, version: str | None) -> Path | None:
    """The registered YAML of `name` at `version` (None = the highest version), if any."""
    folder = registry_dir(project_dir) / "evaluators"
    if not folder.is_dir():
        return None
    versions: dict[str, Path] = {}
    for path in folder.iterdir():
        m = _VERSION.match(path.name)
        if m and m.group("name") == name:
            versions[m.group("version")] = path
    if not versions:
        return None
    if version is None:
        return versions[str(latest_version(versions))]
    found = find_version(versions, version)  # "1.0" (azd's) is "1"
    if found is None:
        known = ", ".join(sorted(versions, key=version_key))
        raise ConfigError(
            problems=[
                Problem(
                    "", f"evaluators.{name}.version", f"no version {version} (registered: {known})"
                )
            ]
        )
    return versions[found]


def from_evaluator_yaml(spec: EvaluatorSpec, use: EvaluatorUse, ctx: BuildContext) -> Evaluator:
    """Build from a registered evaluator YAML; the eval.yaml options override its own."""
    from agentopt.evaluators.judges.prompt_judge import PromptJudge
    from agentopt.evaluators.judges.rubric import RubricEvaluator

    name = use.name
    definition = spec.definition
    if isinstance(definition, RubricDefinition):
        return RubricEvaluator(
            name=name,
            dimensions=definition.dimensions,
            threshold=spec.threshold,
            options=use.options,
            context=ctx,
        )
    if isinstance(definition, PromptDefinition):
        return PromptJudge(
            name=name,
            definition=definition,
            threshold=spec.threshold,
            options=use.options,
            context=ctx,
        )
    if isinstance(definition, CodeDefinition):
        options = {**definition.options, **use.options}
        if spec.threshold is not None:
            options.setdefault("threshold", spec.threshold)
        target = load_entry_point(
            definition.entry_point, ctx.project_dir, shown=spec.name, run=ctx.run_code
        )
        source = UserCode("entry", definition.entry_point, spec.name, str(ctx.project_dir))
        return CodeEvaluator(name=name, target=target, options=options, context=ctx, source=source)
    assert isinstance(definition, BuiltinConfigDefinition)
    info = lookup(definition.evaluator)
    if info is None:
        raise unknown_evaluator(
            definition.evaluator, file=spec.name, location="definition.evaluator"
        )
    options = {**definition.initialization_parameters, **use.options}
    if spec.threshold is not None:
        options.setdefault("threshold", spec.threshold)
    return Renamed(build_registered(info, options, ctx), name)


def _from_path(use: EvaluatorUse, path: Path, ctx: BuildContext) -> Evaluator:
    shown = use.local_uri or str(path)
    if path.is_dir():
        candidates = (RUBRIC_FILE, f"{use.name}.prompty", f"{path.name}.prompty", f"{use.name}.py")
        for candidate in (*(path / c for c in candidates), path / f"{path.name}.py"):
            if bounded.is_file(candidate):
                return _from_path(use, candidate, ctx)
        raise ConfigError(
            problems=[
                Problem(shown, "", f"expected a folder holding {RUBRIC_FILE} or {use.name}.py")
            ]
        )
    if not bounded.is_file(path):
        raise ConfigError(problems=[Problem(shown, "", "evaluator file not found")])
    suffix = path.suffix.lower()
    if suffix == ".json":
        return _rubric(use, path, ctx)
    if suffix in (".yaml", ".yml"):
        return from_evaluator_yaml(load_evaluator_yaml(path), use, ctx)
    if suffix == ".py":
        target = load_first_class(path, use.name, run=ctx.run_code)
        source = UserCode("class_file", str(path), use.name)
        return CodeEvaluator(
            name=use.name, target=target, options=use.options, context=ctx, source=source
        )
    if suffix == ".prompty":
        return _prompty(use, path, ctx)
    raise ConfigError(
        problems=[
            Problem(
                shown, "", f"expected a {RUBRIC_FILE}, an evaluator .yaml, a .prompty or a .py file"
            )
        ]
    )


def _prompty(use: EvaluatorUse, path: Path, ctx: BuildContext) -> Evaluator:
    from agentopt.core.files.prompty import parse_prompty
    from agentopt.evaluators.judges.prompty_judge import PromptyJudge

    try:
        shown = str(path.relative_to(ctx.project_dir))
    except ValueError:
        shown = str(path)
    try:
        parsed = parse_prompty(read_text(path, shown=shown), shown)
    except InputError as exc:  # a broken evaluator stops the run before it starts
        raise ConfigError(problems=exc.problems) from None
    return PromptyJudge(name=use.name, prompty=parsed, options=use.options, context=ctx)


def _rubric(use: EvaluatorUse, path: Path, ctx: BuildContext) -> Evaluator:
    from agentopt.evaluators.judges.rubric import RubricEvaluator

    return RubricEvaluator(
        name=use.name, dimensions=load_rubric(path), options=use.options, context=ctx
    )


class Renamed:
    """A builtin with pinned options under its registered name (`type: builtin-config`)."""

    def __init__(self, inner: Evaluator, name: str) -> None:
        self.inner = inner
        self.name = name

    async def evaluate(self, sample: EvalSample) -> EvalResult:
        result = await self.inner.evaluate(sample)
        details = {**result.details, "builtin": self.inner.name}
        return result.model_copy(update={"evaluator": self.name, "details": details})


class EvaluatorCache:
    """Builds each distinct configured evaluator once per run (user code imports once), every
    one in the run's one build context (judge model, call layer, project, CPU pool)."""

    def __init__(self, context: BuildContext) -> None:
        self.context = context
        self._built: dict[str, Evaluator] = {}
        self._seen: dict[int, tuple[object, Evaluator]] = {}
        """The specs asked for lately, by identity: a run asks with the same few objects for
        every unit, and the key (a dump and a sorted `json.dumps`) was ~2% of an exact-match
        run's CPU. The spec is held, so its id is not reused while it is here."""

    def get(self, spec: EvaluatorUse | str | dict[str, Any] | Any) -> Evaluator:
        seen = self._seen.get(id(spec))
        if seen is not None and seen[0] is spec and not isinstance(spec, dict):
            return seen[1]
        use = EvaluatorUse.coerce(spec)
        key = json.dumps(use.model_dump(), sort_keys=True, default=str)
        if key not in self._built:
            self._built[key] = build_in(use, self.context)
        if len(self._seen) >= SEEN_MAX:
            self._seen.clear()
        self._seen[id(spec)] = (spec, self._built[key])
        return self._built[key]
