"""The one way agentopt finds its extensions: providers, evaluators, agent targets and optimizer
strategies (style.md rule 11; llm's and Inspect's single registration path).

Each kind has one `PluginRegistry`. An extension registers itself with that kind's decorator in its
own module (`@register_provider`, `@evaluator`, `@register_target`, `@register_strategy`);
nothing else lists it. The registry finds the modules to import on first use:

- built-ins: every module of the kind's home packages (e.g. `agentopt.models.providers`);
  those modules keep heavy imports inside functions, so importing them all stays cheap;
- plugins: every entry point of the kind's group (`agentopt.providers`, `agentopt.evaluators`,
  `agentopt.targets`, `agentopt.strategies`), whose value names the module to import.

So a new extension is one new file (plus, for a separate package, one entry point).
"""

from __future__ import annotations

import functools
import importlib
import os
import pkgutil
import re
import sys
from collections.abc import Iterator
from importlib.metadata import EntryPoint, PathDistribution, entry_points
from pathlib import Path
from typing import ClassVar, Generic, TypeVar

from agentopt.core.errors import ConfigError

T = TypeVar("T")

PROVIDERS_GROUP = "agentopt.providers"
EVALUATORS_GROUP = "agentopt.evaluators"
TARGETS_GROUP = "agentopt.targets"
STRATEGIES_GROUP = "agentopt.strategies"
GROUPS = (PROVIDERS_GROUP, EVALUATORS_GROUP, TARGETS_GROUP, STRATEGIES_GROUP)
GROUP_PREFIX = "agentopt."
_DIST_NAME = re.compile(r"[-_.]+")


@functools.cache
def _installed() -> list[EntryPoint]:
    """The installed entry points of agentopt's groups, read once per process."""
    found = scan_entry_points(GROUP_PREFIX)
    if found is None:  # a zip or other importer on sys.path: the standard library's walk
        every = entry_points()
        return [ep for group in GROUPS for ep in every.select(group=group)]
    return found


def scan_entry_points(prefix: str, path: list[str] | None = None) -> list[EntryPoint] | None:
    """The entry points whose group starts with `prefix`, as `importlib.metadata.entry_points()`
    finds them (the first distribution of a name on `path` wins, dist-info before egg-info),
    or None when an entry of `path` is not a plain folder.

    `entry_points()` builds every installed distribution and parses every entry_points.txt
    (6-11 ms with this machine's 155 distributions, on every command that loads a
    registry); here a distribution is parsed only when its file names one of our groups."""
    seen: set[str] = set()
    found: list[EntryPoint] = []
    for entry in sys.path if path is None else path:
        root = entry or "."
        try:
            names = os.listdir(root)
        except NotADirectoryError:
            return None
        except OSError:
            continue  # missing, or a path hook's name (e.g. an editable install's finder)
        infos = sorted(n for n in names if n.endswith(".dist-info"))
        eggs = sorted(n for n in names if n.endswith(".egg-info"))
        for name in infos + eggs:
            project = _DIST_NAME.sub("_", name.rsplit(".", 1)[0].partition("-")[0]).lower()
            if project in seen:
                continue
            seen.add(project)
            folder = os.path.join(root, name)
            try:
                with open(os.path.join(folder, "entry_points.txt"), encoding="utf-8") as fh:
                    text = fh.read()
            except (OSError, UnicodeDecodeError):
                continue
            if f"[{prefix}" in text:
                dist = PathDistribution(Path(folder))
                found.extend(ep for ep in dist.entry_points if ep.group.startswith(prefix))
    return found


def group_entry_points(group: str) -> list[EntryPoint]:
    """The installed entry points of `group`."""
    return [ep for ep in _installed() if ep.group == group]


def installed_names(group: str) -> list[str]:
    """Names of the entry points of `group` (read from package metadata; nothing imported)."""
    return sorted({ep.name for ep in group_entry_points(group)})


class PluginRegistry(Generic[T]):
    """Named extensions of one kind, loaded on first use.

    Args:
        kind: what they are, for messages ("provider type", "agent target", ...).
        group: the entry-point group plugins register under.
        packages: the built-ins' home packages; every module directly in them is imported.
    """

    _by_group: ClassVar[dict[str, PluginRegistry[object]]] = {}

    def __init__(self, kind: str, group: str, packages: tuple[str, ...]) -> None:
        self.kind = kind
        self.group = group
        self.packages = packages
        self.registered: dict[str, T] = {}
        """name → extension, as registered so far (in registration order)."""
        self._loaded = False
        PluginRegistry._by_group[group] = self  # type: ignore[assignment]

    def add(self, name: str, item: T) -> None:
        """Register (or replace) `name`; the kind's decorator calls this."""
        self.registered[name] = item

    def remove(self, name: str) -> None:
        self.registered.pop(name, None)

    def get(self, name: str) -> T | None:
        """The extension called `name` (built-ins and plugins are loaded on a miss)."""
        if name not in self.registered:
            self.load()
        return self.registered.get(name)

    def require(self, name: str) -> T:
        """Like `get`, but an unknown name is a ConfigError listing the valid ones."""
        item = self.get(name)
        if item is None:
            raise ConfigError(f"unknown {self.kind} '{name}'; known: {', '.join(self.names())}")
        return item

    def names(self) -> list[str]:
        """Every registered name, in registration order (built-ins first)."""
        self.load()
        return list(self.registered)

    def items(self) -> Iterator[tuple[str, T]]:
        self.load()
        yield from list(self.registered.items())

    def load(self) -> None:
        """Import the built-in modules, then every plugin of the group (once)."""
        if self._loaded:
            return
        self._loaded = True
        for package in self.packages:
            module = importlib.import_module(package)
            for info in pkgutil.iter_modules(module.__path__):
                importlib.import_module(f"{package}.{info.name}")
        for ep in group_entry_points(self.group):
            try:
                ep.load()
            except Exception as exc:
                raise ConfigError(
                    f"the {self.kind} plugin '{ep.name}' ({ep.value}) failed to load: {exc}",
                    hint=f"fix or uninstall the package that declares it under {self.group}",
                ) from exc

    @classmethod
    def declared(cls, group: str, name: str) -> bool:
        """Whether `name` is registered in `group` so far or installed as its plugin —
        without importing anything (user-file validation asks this)."""
        registry = cls._by_group.get(group)
        if registry is not None and name in registry.registered:
            return True
        return name in installed_names(group)
