"""One eval of an azure.eval.yaml → the suite (`EvalConfig`) `eval run` and `optimize` run.

`load_suite` is the one place a suite file's kind is told apart: agentopt's (and the older
azd extension's) eval.yaml is loaded as before; azd's evaluations file is read by its own
loader and the chosen eval becomes an `EvalConfig` — its dataset, its evaluators with their
options, its level and simulation — so there is no second engine. A rubric the file declares
(from `source:` or inline) is registered in the project's `.azure/.foundry/` as a version,
the local counterpart of the extension publishing it on `azd ai eval create`, so every run
records exactly which rubric scored it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from agentopt.core.errors import ConfigError, InputError, Problem
from agentopt.core.files.azure_eval import (
    AzureEvalFile,
    EvalDecl,
    EvaluatorDecl,
    EvaluatorUseDecl,
    RowShape,
)
from agentopt.core.files.azure_eval_load import is_azure_eval_file, load_azure_eval
from agentopt.core.files.azure_eval_rules import mapping_source
from agentopt.core.files.eval_yaml import (
    AgentSection,
    DatasetRef,
    EvalConfig,
    EvaluatorEntry,
    Options,
)
from agentopt.core.files.eval_yaml_load import load_eval_config
from agentopt.core.files.problems import closest
from agentopt.evaluators.registry import lookup, registered
from agentopt.registry import Registry
from agentopt.workflows.detect import find_azure_yaml
from agentopt.workflows.suite_assets import find_project_dir


def _refused(file: str, where: str, message: str, hint: str | None = None) -> ConfigError:
    return ConfigError(problems=[Problem(file, where, message)], hint=hint)


Choose = Callable[[list[str]], str]
"""Asks the user to pick one of several names (a picker under a terminal)."""
MAPPABLE = ("query", "response", "ground_truth", "context")
"""Evaluator inputs a data_mapping may bind: the fields of agentopt's task turn."""


def load_suite(path: Path, eval_name: str | None = None) -> tuple[EvalConfig, list[Problem]]:
    """The suite in `path`: an eval.yaml as it is, or one eval of an azure.eval.yaml.

    Raises:
        ConfigError: bad file, unknown or ambiguous eval, or an eval agentopt cannot run
            locally (trace and response sources), each naming the flag or key to change.
    """
    if not is_azure_eval_file(path):
        if eval_name is not None:
            raise ConfigError.at(
                "",
                "--eval",
                f"--eval picks an eval of an azure.eval.yaml; {path} is an "
                "eval.yaml suite (it holds one suite)",
            )
        return load_eval_config(path)
    file, loaded = load_azure_eval(path)
    warnings = list(loaded)
    decl = pick_eval(file, eval_name)
    return to_eval_config(file, decl, warnings=warnings), warnings


def pick_eval(file: AzureEvalFile, name: str | None, choose: Choose | None = None) -> EvalDecl:
    """`--eval NAME` (a name or an eval id), else the only eval, else the picker."""
    names = [e.name for e in file.evals]
    if not names:
        raise _refused(
            str(file.path),
            "evals",
            "the file declares no evals",
            hint="add one under evals:, or run `agentopt eval init --format azure-eval`",
        )
    if name is not None:
        found = file.eval(name)
        if found is None:
            guess = closest(name, names)
            hint = f'; did you mean "{guess}"?' if guess else ""
            raise ConfigError.at(
                "", "--eval", f'no eval "{name}" in {file.path} (evals: {", ".join(names)}){hint}'
            )
        return found
    if len(names) == 1:
        return file.evals[0]
    if choose is None:
        raise ConfigError.at(
            "",
            "--eval",
            f"{file.path} declares {len(names)} evals ({', '.join(names)}); "
            "pass --eval NAME to pick one",
        )
    picked = choose(names)
    found = file.eval(picked)
    if found is None:
        raise ConfigError.at("", "--eval", f'no eval "{picked}" (evals: {", ".join(names)})')
    return found


def check_local(decl: EvalDecl, file: AzureEvalFile) -> None:
    """Refuse what agentopt cannot play: rows that live only in the Foundry project."""
    if decl.source is None:
        return
    where = f"evals.{decl.name}.source"
    if decl.source.type == "traces":
        raise _refused(
            str(file.path),
            where,
            f"eval {decl.name} reads its rows from the agent's traces in "
            "the project's Application Insights, which agentopt cannot query",
            hint="run it with `azd ai eval run start`, or turn exported traces into a dataset "
            "with `agentopt eval generate --from-traces FILE|DIR` and point an eval at it",
        )
    raise _refused(
        str(file.path),
        where,
        f"eval {decl.name} grades stored responses by id "
        f"({', '.join(decl.source.response_ids) or 'none listed'}), which live in the Foundry "
        "project only",
        hint="run it with `azd ai eval run start`",
    )


def to_eval_config(
    file: AzureEvalFile,
    decl: EvalDecl,
    *,
    warnings: list[Problem] | None = None,
) -> EvalConfig:
    """The suite of one eval (see the module docstring)."""
    check_local(decl, file)
    project = registry_home(file.path)
    dataset = _dataset(file, decl, project)
    warnings = warnings if warnings is not None else []
    entries = [_evaluator(file, decl, u, project, warnings) for u in decl.evaluators]
    for entry in entries:
        _fraction_threshold(file, decl, entry, warnings)
    judge = next(
        (
            str(u.initialization_parameters["model"])
            for u in decl.evaluators
            if u.initialization_parameters.get("model")
        ),
        None,
    )
    options = Options(
        eval_model=judge,
        evaluation_level="conversation" if decl.evaluation_level == "conversation" else None,
    )
    if decl.simulation is not None:
        sim = decl.simulation
        options.simulator_model = sim.model.split("/", 1)[-1]
        options.desired_num_turns = sim.max_turns
        options.repeat = sim.num_conversations
    agent = None
    if decl.target is not None and decl.target.type == "agent":
        agent = AgentSection(name=decl.target.name)
    return EvalConfig(
        name=decl.name,
        agent=agent,
        dataset=dataset,
        evaluators=entries,
        options=options,
        path=file.path,
        base_dir=file.base_dir,
        rows=RowShape(
            eval_name=decl.name,
            columns=_columns(file, decl),
            captured=decl.target is None,
            cap=decl.max_samples or None,
        ),
    )


def registry_home(path: Path) -> Path:
    """The project whose `.azure/.foundry/` holds this file's versions: the folder that
    already has a registry at or above the file, else the azd project root (azure.yaml's
    folder), else the folder holding `evals/` (the extension's layout), else the file's."""
    found = find_project_dir(path)
    if (found / ".azure" / ".foundry").is_dir():
        return found
    folder = path.resolve().parent
    azure = find_azure_yaml(folder)
    if azure is not None:
        return azure.parent
    return folder.parent if folder.name == "evals" else folder


def suite_home(config: EvalConfig | None) -> Path | None:
    """Where an eval of azure.eval.yaml keeps its runs: the azd project it belongs to (the
    extension's state is per project), whatever folder the agent's code is in; None for
    agentopt's own eval.yaml."""
    if config is None or config.rows is None or config.path is None:
        return None
    return registry_home(config.path)


def _dataset(file: AzureEvalFile, decl: EvalDecl, project: Path) -> DatasetRef:
    ds = file.dataset(decl.dataset or "")
    assert ds is not None  # the loader checked evals[].dataset against datasets[]
    if ds.file is not None:
        if not ds.file.is_file():
            raise ConfigError.at(
                str(file.path),
                f"datasets.{ds.name}.file",
                f"expected a .jsonl file, found nothing at {ds.file}",
            )
        return DatasetRef(name=ds.name, local_uri=ds.file)
    try:
        path = Registry(project).lookup("datasets", ds.name, ds.version)
    except InputError:
        raise _refused(
            str(file.path),
            f"datasets.{ds.name}",
            f'dataset "{ds.name}"'
            f"{' version ' + ds.version if ds.version else ''} is registered in the Foundry "
            f"project only (not in {project / '.azure' / '.foundry'})",
            hint="download it (`azd ai eval dataset download`) and declare it with file:",
        ) from None
    return DatasetRef(name=ds.name, version=ds.version, local_uri=path)


def _evaluator(
    file: AzureEvalFile,
    decl: EvalDecl,
    use: EvaluatorUseDecl,
    project: Path,
    warnings: list[Problem] | None = None,
) -> EvaluatorEntry:
    params = dict(use.initialization_parameters)
    where = f"evals.{decl.name}.evaluators.{use.label}"
    if use.is_builtin:
        if lookup(use.evaluator) is None:
            known = [i.name for i in registered() if i.name.startswith("builtin.")]
            guess = closest(use.evaluator, known)
            hint = f'did you mean "{guess}"? ' if guess else ""
            raise _refused(
                str(file.path),
                where,
                f"{use.evaluator} is a Foundry built-in agentopt does not implement",
                hint=f"{hint}run this eval with `azd ai eval run start`, or use one of: "
                + ", ".join(known),
            )
        return EvaluatorEntry(name=use.evaluator, initialization_parameters=params)
    declared = file.evaluator(use.evaluator)
    if declared is not None and not declared.registered_only:
        version = _register(declared, project, file)
        if use.version is not None and use.version != version and warnings is not None:
            warnings.append(
                Problem(
                    str(file.path),
                    f"{where}.version",
                    f"pins version {use.version} (a version published to Foundry); agentopt "
                    f"scores with the rubric {_shown(declared)}, registered here as version "
                    f"{version}",
                    "warning",
                )
            )
        path = Registry(project).lookup("evaluators", declared.name, version)
        return EvaluatorEntry(
            name=declared.name, version=version, local_uri=path, initialization_parameters=params
        )
    pinned = use.version or (declared.version if declared else None)
    try:
        path = Registry(project).lookup("evaluators", use.evaluator, pinned)
    except InputError:
        raise _refused(
            str(file.path),
            where,
            f'evaluator "{use.evaluator}"'
            f"{' version ' + pinned if pinned else ''} is registered in the Foundry project "
            "only",
            hint="declare its rubric under evaluators: with source: or definition:",
        ) from None
    return EvaluatorEntry(
        name=use.evaluator, version=pinned, local_uri=path, initialization_parameters=params
    )


FRACTION_SCORED = ("builtin.task_adherence",)
"""Built-ins whose agentopt score is the share of checks met (0–1), where Foundry's is 1–5."""


def _fraction_threshold(
    file: AzureEvalFile, decl: EvalDecl, entry: EvaluatorEntry, warnings: list[Problem]
) -> None:
    threshold = entry.initialization_parameters.get("threshold")
    if entry.name not in FRACTION_SCORED or not isinstance(threshold, int | float):
        return
    if threshold <= 1:
        return
    del entry.initialization_parameters["threshold"]
    warnings.append(
        Problem(
            str(file.path),
            f"evals.{decl.name}.evaluators.{entry.name}.initialization_parameters.threshold",
            f"{threshold:g} is on Foundry's 1–5 scale; agentopt's {entry.name} scores the share "
            "of the task's checks met (0–1) and passes when all are met, so it is not applied "
            "here",
            "warning",
        )
    )


def _shown(decl: EvaluatorDecl) -> str:
    return f"in {decl.source}" if decl.source else "written inline"


def _register(decl: EvaluatorDecl, project: Path, file: AzureEvalFile) -> str:
    assert decl.dimensions is not None
    source = {"kind": "azure.eval.yaml", "file": str(decl.source or file.path)}
    registered = Registry(project).register_rubric(
        decl.name, decl.dimensions, source, threshold=decl.pass_threshold
    )
    return registered.version


def _columns(file: AzureEvalFile, decl: EvalDecl) -> dict[str, str]:
    """Task field → row column, from every evaluator's data_mapping (they must agree)."""
    columns: dict[str, str] = {}
    for use in decl.evaluators:
        for field, template in use.data_mapping.items():
            where = f"evals.{decl.name}.evaluators.{use.label}.data_mapping.{field}"
            found = mapping_source(template)
            if found is None:
                continue
            scope, column = found
            if field not in MAPPABLE:
                raise ConfigError.at(
                    str(file.path),
                    where,
                    f"agentopt binds {', '.join(MAPPABLE)}; "
                    f'"{field}" has no counterpart in its tasks',
                )
            if scope == "sample":
                if field != "response":
                    raise ConfigError.at(
                        str(file.path),
                        where,
                        "{{sample.…}} is the agent's answer: only response can be bound to it",
                    )
                continue
            if field == "response" and decl.target is not None:
                raise ConfigError.at(
                    str(file.path),
                    where,
                    "the eval invokes a target, whose answer is the response; drop this mapping",
                )
            if columns.get(field, column) != column:
                raise ConfigError.at(
                    str(file.path),
                    where,
                    f'{field} is bound to "{column}" '
                    f'here and to "{columns[field]}" by another evaluator',
                )
            if column != field:
                columns[field] = column
    return columns
