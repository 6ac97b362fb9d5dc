"""One registry of evaluator factories. Built-ins register exactly as a plugin would.

    @evaluator("builtin.exact_match", aliases=["ExactMatch"], kind="deterministic")
    class ExactMatch(EvaluatorBase): ...

Plugins register the same way from a module named by an `agentopt.evaluators` entry point
(llm's `DEFAULT_PLUGINS` habit): `load_plugins()` imports the built-in modules first, then every
entry point. Names are case-insensitive on input; results carry the canonical name.
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from typing import Any, Literal, TypeVar

from agentopt.core.errors import ConfigError, Problem
from agentopt.evaluators.base import BuildContext, Evaluator

Kind = Literal["deterministic", "judge", "embedding", "rubric", "code", "prompt"]
Factory = Callable[..., Evaluator]
F = TypeVar("F", bound=Factory)

BUILTIN_MODULES: tuple[str, ...] = (
    "agentopt.evaluators.deterministic.exact_match",
    "agentopt.evaluators.deterministic.partial_match",
    "agentopt.evaluators.deterministic.regex_match",
    "agentopt.evaluators.deterministic.citations",
    "agentopt.evaluators.deterministic.retrieval_query",
    "agentopt.evaluators.deterministic.retrieval_result",
    "agentopt.evaluators.deterministic.json_schema",
    "agentopt.evaluators.deterministic.run_metrics",
    "agentopt.evaluators.deterministic.semantic_similarity",
    "agentopt.evaluators.judges.scale_judges",
    "agentopt.evaluators.judges.task_adherence",
)
PLUGIN_GROUP = "agentopt.evaluators"


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
    """

    name: str
    factory: Factory
    aliases: tuple[str, ...] = ()
    kind: Kind = "deterministic"
    description: str = ""
    m365_key: str | None = None
    needs: tuple[str, ...] = field(default_factory=tuple)


_REGISTRY: dict[str, EvaluatorInfo] = {}
_LOOKUP: dict[str, str] = {}
_loaded = False


def evaluator(
    name: str,
    *,
    aliases: list[str] | tuple[str, ...] = (),
    kind: Kind = "deterministic",
    description: str = "",
    m365_key: str | None = None,
    needs: tuple[str, ...] = (),
) -> Callable[[F], F]:
    """Register an evaluator factory (a class or function taking `options=` and `context=`)."""

    def register(factory: F) -> F:
        info = EvaluatorInfo(
            name=name,
            factory=factory,
            aliases=tuple(aliases),
            kind=kind,
            description=description or (factory.__doc__ or "").strip().split("\n")[0],
            m365_key=m365_key,
            needs=needs,
        )
        _REGISTRY[name] = info
        keys = [name, *aliases]
        if name.startswith("builtin."):
            keys.append(name.removeprefix("builtin."))
        for key in keys:
            _LOOKUP[key.lower()] = name
        return factory

    return register


def unregister(name: str) -> None:
    """Remove a registered evaluator and its aliases (plugins' tests; reloading)."""
    _REGISTRY.pop(name, None)
    for key in [k for k, v in _LOOKUP.items() if v == name]:
        del _LOOKUP[key]


def load_plugins() -> None:
    """Import the built-in evaluator modules, then every installed plugin (once)."""
    global _loaded
    if _loaded:
        return
    _loaded = True
    for module in BUILTIN_MODULES:
        importlib.import_module(module)
    for ep in entry_points(group=PLUGIN_GROUP):
        ep.load()


def registered() -> list[EvaluatorInfo]:
    """Every registered evaluator, sorted by canonical name."""
    load_plugins()
    return [_REGISTRY[k] for k in sorted(_REGISTRY)]


def lookup(name: str) -> EvaluatorInfo | None:
    """The registered evaluator a user-written name means (case-insensitive), or None."""
    load_plugins()
    canonical = _LOOKUP.get(name.strip().lower())
    return _REGISTRY.get(canonical) if canonical else None


def canonical_name(name: str) -> str:
    """`Relevance` → `builtin.relevance`; a name that is not registered comes back unchanged."""
    info = lookup(name)
    return info.name if info else name.strip()


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


def build_registered(
    info: EvaluatorInfo, options: dict[str, Any], context: BuildContext
) -> Evaluator:
    """Call a registered factory."""
    return info.factory(options=options, context=context)
