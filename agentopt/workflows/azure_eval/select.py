"""Which eval of an azure.eval.yaml a command runs, and what that means for its options.

Called once by `eval run` and `optimize` before their usual resolution: it finds the file
(`--config`, else azure.yaml's `azure.ai.eval` service when the folder has no eval.yaml or
`--eval` is given), picks the eval (`--eval NAME`, the only one, or the picker) and turns its
`target:` into the options the existing resolution reads — an agent service by name, a model
as an ad-hoc agent, no target as the rows' own responses. The suite itself is then loaded by
`suite.load_suite` where eval.yaml always was.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

from agentopt.core.errors import ConfigError, Problem
from agentopt.core.files.azure_eval import AzureEvalFile, EvalDecl
from agentopt.core.files.azure_eval_load import (
    find_azure_eval,
    is_azure_eval_file,
    load_azure_eval,
)
from agentopt.core.files.azure_yaml import load_azure_yaml
from agentopt.core.files.problems import closest
from agentopt.workflows.azure_eval.suite import Choose, check_local, pick_eval
from agentopt.workflows.detect import EVAL_YAML, find_azure_yaml
from agentopt.workflows.optimize.options import OptimizeOptions
from agentopt.workflows.run.inputs import RunOptions


@dataclass
class Selection:
    """The eval a command will run, for the line that says so."""

    file: AzureEvalFile
    eval: EvalDecl
    warnings: list[Problem]

    def describe(self, cwd: Path) -> str:
        ev = self.eval
        try:
            shown = self.file.path.resolve().relative_to(cwd.resolve())
        except ValueError:
            shown = self.file.path
        rows = f"dataset {ev.dataset}" if ev.dataset else ev.rows_from
        target = f"{ev.target.type} {ev.target.name}" if ev.target else "the rows' own responses"
        cap = f", first {ev.max_samples} rows" if ev.max_samples else ""
        return (
            f"Eval {ev.name} of {shown}: {rows}{cap}, {len(ev.evaluators)} evaluator"
            f"{'s' if len(ev.evaluators) != 1 else ''}, target {target}"
        )


def azure_eval_path(
    config: Path | None, cwd: Path, eval_name: str | None, *, discover: bool = True
) -> Path | None:
    """The azure.eval.yaml (or azure.yaml with an inline evaluation service) to use, or None
    for agentopt's own eval.yaml flow. Without --config it is found through azure.yaml when
    `--eval` is given, or (`discover`) when the folder holds no eval.yaml."""
    if config is not None:
        path = config if config.is_absolute() else cwd / config
        return path if path.is_file() and is_azure_eval_file(path) else None
    if eval_name is None and (not discover or (cwd / EVAL_YAML).is_file()):
        return None
    found = find_azure_eval(cwd.resolve())
    if found is None and eval_name is not None:
        raise ConfigError.at(
            "",
            "--eval",
            "--eval picks an eval of evals/azure.eval.yaml, and "
            "no azure.yaml here declares an azure.ai.eval service",
        )
    return found


def _select(path: Path, eval_name: str | None, choose: Choose | None) -> tuple[Path, Selection]:
    file, warnings = load_azure_eval(path)
    decl = pick_eval(file, eval_name, choose)
    check_local(decl, file)
    _check_agent(file, decl)
    return file.path.resolve(), Selection(file=file, eval=decl, warnings=warnings)


def select_for_run(
    opts: RunOptions, cwd: Path, choose: Choose | None
) -> tuple[RunOptions, Selection | None]:
    """The run options for the chosen eval (unchanged when no azure.eval.yaml applies)."""
    if opts.prompts or opts.prompts_file:
        _no_eval_flag(opts.eval_name, "--prompts/--prompts-file")
        return opts, None
    path = azure_eval_path(opts.config, cwd, opts.eval_name)
    if path is None:
        return opts, None
    config, selection = _select(path, opts.eval_name, choose)
    target = selection.eval.target
    changes: dict[str, object] = {"config": config, "eval_name": selection.eval.name}
    if target is None:
        if opts.remote:
            raise _remote_refused(selection.eval, "has no target: its rows hold the responses")
        changes["evaluate_only"] = True
    elif target.type == "model":
        if opts.remote:
            raise _remote_refused(selection.eval, f"targets the model {target.name}")
        changes["agent_model"] = opts.agent_model or target.name
        changes["instructions"] = opts.instructions if opts.instructions is not None else ""
    return dataclasses.replace(opts, **changes), selection  # type: ignore[arg-type]


def select_for_optimize(
    opts: OptimizeOptions, cwd: Path, choose: Choose | None
) -> tuple[OptimizeOptions, Selection | None]:
    """The optimize options for the chosen eval: its dataset and evaluators are what the
    candidates are scored on; it must invoke an agent, which is what gets optimized."""
    if opts.resume:
        return opts, None
    path = azure_eval_path(opts.config, cwd, opts.eval_name, discover=False)
    if path is None:
        return opts, None
    config, selection = _select(path, opts.eval_name, choose)
    target = selection.eval.target
    if target is None or target.type != "agent":
        what = f"the model {target.name}" if target else "nothing (its rows hold the responses)"
        raise ConfigError.at(
            str(selection.file.path),
            f"evals.{selection.eval.name}.target",
            f"optimize changes an agent, and eval {selection.eval.name} invokes {what}",
        )
    return dataclasses.replace(opts, config=config, eval_name=selection.eval.name), selection


def _no_eval_flag(eval_name: str | None, other: str) -> None:
    if eval_name is not None:
        raise ConfigError.at(
            "",
            "--eval",
            f"--eval picks an eval of azure.eval.yaml; {other} give the tasks directly",
        )


def _remote_refused(decl: EvalDecl, why: str) -> ConfigError:
    return ConfigError.at(  # type: ignore[return-value]
        "",
        "--remote",
        f"eval {decl.name} {why}; agentopt runs such evals locally "
        "(drop --remote), or run it with `azd ai eval run start`",
    )


def _check_agent(file: AzureEvalFile, decl: EvalDecl) -> None:
    """An agent target names an azure.yaml agent service (or its agent's name)."""
    target = decl.target
    if target is None or target.type != "agent":
        return
    found = find_azure_yaml(file.path.resolve().parent)
    if found is None:
        return
    azure = load_azure_yaml(found)
    names = list(azure.agent_services)
    names += [str(azure.services[s]["name"]) for s in names if azure.services[s].get("name")]
    if not names or target.name in names:
        return
    guess = closest(target.name, names)
    hint = f'; did you mean "{guess}"?' if guess else ""
    raise ConfigError.at(
        str(file.path),
        f"evals.{decl.name}.target.name",
        f'no agent service "{target.name}" in {found} (agent services: '
        f"{', '.join(azure.agent_services)}){hint}",
    )
