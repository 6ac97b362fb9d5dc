"""Parameters coerced without building a pydantic adapter when none is needed.

Typer (0.2x) coerces every non-flag parameter through a pydantic `TypeAdapter` it builds the
first time the parameter is processed, given or not. Building the first one imports typer's
adapter module, pydantic's field and type modules and (through pydantic's plugin loader)
`importlib.metadata`: ~0.03 s of CPU. `eval validate` of 5 tasks has a budget of 0.25 s
(issue 37) and needs none of it: its global options (`-C`, `-e`, `-o`, `--call-timeout`,
global_options.py) are absent, and its files are plain paths.

- A missing value (None) is answered by typer's own rule (`RuntimeParam.coerce`: None, or
  `()` for a multi-value parameter), which never uses the adapter: it is built for the first
  value given.
- A plain `Path` or `list[Path]` (no parser, no `path_type`, no `allow_dash`) given as text is
  checked by typer's own path check (`coerce_cli_path`: exists, file or folder, readable …)
  and made a `Path`, what typer's adapter does for text.

Anything else is typer's, unchanged; on a typer without this coercion layer nothing changes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, get_args, get_origin

from typer import core

_Parameter: Any = getattr(core, "_TyperParameter", None)
_build: Any = getattr(_Parameter, "get_runtime_param", None)
try:
    from typer._coercion import RuntimeParam
    from typer._param_types import coerce_cli_path
except ImportError:  # typer before its coercion layer
    RuntimeParam = coerce_cli_path = None  # type: ignore[assignment, misc]


def _plain_path(param: Any) -> bool | None:
    """True for `list[Path]`, False for `Path`, None for anything else."""
    info = param.type_descriptor.parameter_info
    if info.parser is not None or info.path_type is not None or info.allow_dash:
        return None
    annotation = param.type_descriptor.annotation
    if annotation is Path:
        return False
    if get_origin(annotation) is list and get_args(annotation) == (Path,):
        return True
    return None


class _Unbuilt:
    """Stands in for a parameter's coercion until a value needs typer's adapter."""

    coerce = RuntimeParam.coerce if RuntimeParam is not None else None
    """Typer's own: None → None (or `()`), a value → `_coerce_value`."""

    @staticmethod
    def _coerce_value(value: Any, param: Any, ctx: Any) -> Any:
        many = _plain_path(param)
        if many is not None:
            items = value if many and isinstance(value, list | tuple) else [value]
            if all(isinstance(item, str) for item in items):
                info = param.type_descriptor.parameter_info
                paths = [
                    Path(str(coerce_cli_path(item, info, path_type=None, param=param, ctx=ctx)))
                    for item in items
                ]
                return paths if many else paths[0]
        return _build(param)._coerce_value(value, param=param, ctx=ctx)


_UNBUILT = _Unbuilt()


def _runtime_param(self: Any) -> Any:
    built = getattr(self, "_runtime_param", None)
    return built if built is not None else _UNBUILT


if _Parameter is not None and _build is not None and RuntimeParam is not None:
    _Parameter.get_runtime_param = _runtime_param
