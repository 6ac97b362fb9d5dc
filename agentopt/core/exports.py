"""Package re-exports that import their module on first use (PEP 562).

A package's `__init__` names its public surface (`__all__`) and where each name lives; importing
one submodule, or the package, then builds no class the caller never uses — `eval validate`
does not pay for the optimizer's records. Type checkers read the same names from an
`if TYPE_CHECKING:` block of ordinary imports.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from typing import Any


def lazy_exports(package: str, homes: dict[str, str]) -> Callable[[str], Any]:
    """The package's `__getattr__`: `homes` maps each exported name to its module."""

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home), name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__
