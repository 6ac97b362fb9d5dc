"""One registry of evaluator factories. Built-ins register exactly as a plugin would.

    @evaluator("builtin.exact_match", m365=True, kind="deterministic")
    class ExactMatch(EvaluatorBase): ...

A class registered without a `name` of its own takes the registered one. `m365=True` says the
evaluator is also one of M365's: its alias (`ExactMatch`) and score key (`exactMatch`) follow
from the name (`builtin_index.m365_names`).

Plugins register the same way from a module named by an `agentopt.evaluators` entry point
(`agentopt.core.plugins`). A lookup of a built-in spelling imports the one module that
registers it (`builtin_index.py`); any other lookup, and every listing, imports the built-in
modules (`evaluators/deterministic/`, `evaluators/judges/`), then every entry point. Names are
case-insensitive on input; results carry the canonical name.
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

from agentopt.core.errors import ConfigError, Problem
from agentopt.core.plugins import EVALUATORS_GROUP, PluginRegistry
from agentopt.evaluators.base import BuildContext, Evaluator, flat_options
from agentopt.evaluators.builtin_index import builtin_modules, m365_names
from agentopt.evaluators.options import (
    EvaluatorOptions,
    JudgeOptions,
    check_options,
    option_problems,
)

Kind = Literal["deterministic", "judge", "embedding", "rubric", "code", "prompt"]
Factory = Callable[..., Evaluator]
F = TypeVar("F", bound=Factory)


@dataclass(frozen=True)
class EvaluatorInfo:
    """A registered evaluator.

    Attributes:
        name: canonical name (`builtin.relevance`).
        factory: `factory(options=dict, context=BuildContext)` -> Evaluator.
        aliases: other accepted names (M365 `Relevance`); matched case-insensitively.
        kind: what it needs to run (a judge model, embeddings, nothing).
        description: one line for `--help` and error messages.
        m365_key: the camelCase score key M365 documents use for it, if any.
        options: the pydantic model of the options it accepts (None: not checked, for
            plugins that declare none).
    """

    name: str
    factory: Factory
    aliases: tuple[str, ...] = ()
    kind: Kind = "deterministic"
    description: str = ""
    m365_key: str | None = None
    needs: tuple[str, ...] = field(default_factory=tuple)
    options: type[EvaluatorOptions] | None = None


EVALUATORS: PluginRegistry[EvaluatorInfo] = PluginRegistry(
    "evaluator",
    EVALUATORS_GROUP,
    ("agentopt.evaluators.deterministic", "agentopt.evaluators.judges"),
)
_LOOKUP: dict[str, str] = {}
"""Every accepted spelling (lower-cased canonical names and aliases) → canonical name."""


def evaluator(
    name: str,
    *,
    aliases: list[str] | tuple[str, ...] = (),
    kind: Kind = "deterministic",
    description: str = "",
    m365_key: str | None = None,
    m365: bool = False,
    needs: tuple[str, ...] = (),
    options: type[EvaluatorOptions] | None = None,
) -> Callable[[F], F]:
    """Register an evaluator factory (a class or function taking `options=` and `context=`);
    `options` is the model its options are checked against before it is built; `m365` adds
    the M365 alias and score key the name implies (`m365_names`)."""
    if m365:
        alias, m365_key = m365_names(name)
        aliases = [*aliases, alias]

    def register(factory: F) -> F:
        keys = [name, *aliases]
        if name.startswith("builtin."):
            keys.append(name.removeprefix("builtin."))
        for key in keys:
            home = builtin_modules().get(key.lower())
            if home is not None and factory.__module__ != f"agentopt.evaluators.{home}":
                raise ConfigError(
                    f"evaluator '{name}' ({factory.__module__}): '{key}' is the name of a "
                    "built-in evaluator; give the plugin a name of its own"
                )
        info = EvaluatorInfo(
            name=name,
            factory=factory,
            aliases=tuple(aliases),
            kind=kind,
            description=description or (factory.__doc__ or "").strip().split("\n")[0],
            m365_key=m365_key,
            needs=needs,
            options=options,
        )
        if isinstance(factory, type) and not factory.__dict__.get("name"):
            factory.name = name  # type: ignore[attr-defined]
        EVALUATORS.add(name, info)
        for key in keys:
            _LOOKUP[key.lower()] = name
        return factory

    return register


def judge(
    name: str,
    *,
    needs: tuple[str, ...],
    m365: bool = False,
    options: type[JudgeOptions] = JudgeOptions,
    description: str = "",
) -> Callable[[F], F]:
    """`@evaluator` for a built-in LLM judge: kind "judge", its options a `JudgeOptions`."""
    return evaluator(
        name, kind="judge", description=description, m365=m365, needs=needs, options=options
    )


def unregister(name: str) -> None:
    """Remove a registered evaluator and its aliases (plugins' tests; reloading)."""
    EVALUATORS.remove(name)
    for key in [k for k, v in _LOOKUP.items() if v == name]:
        del _LOOKUP[key]


def load_plugins() -> None:
    """Import the built-in evaluator modules, then every installed plugin (once)."""
    EVALUATORS.load()


def registered() -> list[EvaluatorInfo]:
    """Every registered evaluator, sorted by canonical name."""
    return [info for _name, info in sorted(EVALUATORS.items())]


def lookup(name: str) -> EvaluatorInfo | None:
    """The registered evaluator a user-written name means (case-insensitive), or None."""
    key = name.strip().lower()
    if key not in _LOOKUP:
        home = builtin_modules().get(key)
        if home is not None:
            importlib.import_module(f"agentopt.evaluators.{home}")
        else:
            load_plugins()
    canonical = _LOOKUP.get(key)
    return EVALUATORS.get(canonical) if canonical else None


def canonical_name(name: str) -> str:
    """`Relevance` → `builtin.relevance`; a name that is not registered comes back unchanged."""
    info = lookup(name)
    return info.name if info else name.strip()


def reads_answer(ev: Evaluator) -> bool:
    """Whether the evaluator judges the agent's answer. False only for a registered evaluator
    whose declared inputs leave the answer out (tool calls, retrieval, latency, tokens, a
    simulated user's goal): those still have something to score when the answer is empty.
    Custom, rubric, prompt and code evaluators read the answer."""
    inner = getattr(ev, "inner", ev)  # a builtin under a registered name (`Renamed`)
    info = lookup(str(getattr(inner, "name", "")))
    return info is None or not info.needs or "response" in info.needs


def m365_score_key(name: str) -> str:
    """The key an M365 document's `scores` uses for this evaluator: the M365 camelCase key
    (`exactMatch`), else the canonical name (`builtin.fluency`), else the name as written."""
    info = lookup(name)
    if info:
        return info.m365_key or info.name
    return name.strip()


def valid_names() -> list[str]:
    """Canonical names and aliases, for error messages."""
    names: list[str] = []
    for info in registered():
        names.append(info.name)
        names.extend(info.aliases)
    return names


def unknown_evaluator(
    name: str, *, file: str = "", location: str = "", extra: str = ""
) -> ConfigError:
    """The error for a name nothing resolves: lists the valid names, with a did-you-mean."""
    names = valid_names()
    lowered = {n.lower(): n for n in names}
    close = difflib.get_close_matches(name.lower(), list(lowered), n=1, cutoff=0.6)
    hint = f"did you mean '{lowered[close[0]]}'? " if close else ""
    message = f"unknown evaluator '{name}': {hint}valid names are {', '.join(names)}{extra}"
    return ConfigError(problems=[Problem(file, location, message)])


def written_options_problems(
    name: str, options: dict[str, Any], *, file: str, where: str
) -> list[Problem]:
    """What is wrong with the options a file gives evaluator `name` at key path `where` (for
    `eval validate`, the same check `build_registered` makes). Nothing for a name no
    registered evaluator has, or one that declares no options model: those are checked (or
    refused) when the evaluator is built."""
    info = lookup(name)
    if info is None or info.options is None:
        return []
    return option_problems(info.name, info.options, flat_options(options), file=file, where=where)


def build_registered(
    info: EvaluatorInfo, options: dict[str, Any], context: BuildContext
) -> Evaluator:
    """Call a registered factory, its options checked against its declared model first."""
    if info.options is not None:
        check_options(info.name, info.options, flat_options(options))
    return info.factory(options=options, context=context)
