"""Read YAML and JSON user files into plain Python data, remembering the line of every key so
that a problem found later can say "eval.yaml: evaluators[2].name (line 14)"."""

from __future__ import annotations

import copy
import json
from collections import OrderedDict
from pathlib import Path
from typing import Any

from agentopt.core.errors import InputError
from agentopt.core.files import bounded
from agentopt.core.files.bounded import FileKind
from agentopt.core.files.problems import Collector, LineIndex, describe

_TOO_DEEP = bounded.TOO_DEEP
_PARSED: OrderedDict[tuple[str, str], tuple[Any, LineIndex]] = OrderedDict()
"""The last few texts parsed, by (file, text): an optimize start read its eval.yaml three
times and the agent's metadata.yaml twice, each parse 2-5 ms of ruamel.yaml."""
_PARSED_MAX = 8
_PARSED_MAX_CHARS = 64 * 1024


def read_text(path: Path, *, shown: str | None = None, kind: FileKind = "text") -> str:
    """The file's UTF-8 text within the size bound of its kind, or an InputError naming it."""
    return bounded.read_text(path, shown=shown, kind=kind)


def parse_yaml(text: str, file: str) -> tuple[Any, LineIndex]:
    """Parse YAML text into plain dict/list/scalars and a key-path → line index, within the
    bounds of `bounded` (size, nesting, integer digits, alias expansion, valid text). The
    caller owns what it gets (a text parsed again comes back as a fresh copy)."""
    key = (file, text)
    seen = _PARSED.get(key)
    if seen is None:
        seen = _parse(text, file)
        if len(text) <= _PARSED_MAX_CHARS:
            _PARSED[key] = seen
            while len(_PARSED) > _PARSED_MAX:
                _PARSED.popitem(last=False)
    else:
        _PARSED.move_to_end(key)
    return copy.deepcopy(seen[0]), seen[1].copy()


def _parse(text: str, file: str) -> tuple[Any, LineIndex]:
    if len(text) > bounded.LIMITS["yaml"]:
        raise InputError.at(
            file,
            "",
            f"the file is {bounded.human_size(len(text.encode('utf-8', 'surrogatepass')))}; "
            f"YAML files are read up to {bounded.human_size(bounded.LIMITS['yaml'])}",
        )
    deep = bounded.flow_depth_exceeded(text)
    if deep is not None:
        line = text.count("\n", 0, deep) + 1
        raise InputError.at(file, f"line {line}", f"invalid YAML: {_TOO_DEEP}")
    from agentopt.core.files.yaml_ruamel import parse_checked

    return parse_checked(text, file)


def load_yaml(path: Path, *, shown: str | None = None) -> tuple[Any, LineIndex]:
    """Read and parse a YAML file (see `parse_yaml`)."""
    name = shown or str(path)
    return parse_yaml(read_text(path, shown=name, kind="yaml"), name)


def load_yaml_mapping(path: Path, expected: str) -> tuple[dict[str, Any], Collector]:
    """A YAML file that must hold a mapping (an empty file reads as an empty one), and the
    collector of its problems; anything else is a ConfigError at once, worded `expected` then
    what was found ("expected a mapping with name and services, found a list")."""
    data, lines = load_yaml(path, shown=str(path))
    c = Collector(str(path), lines)
    if data is None:
        data = {}
    if not isinstance(data, dict):
        c.error((), f"{expected} {describe(data)}")
        c.raise_if_errors(config=True)
    return data, c


def parse_json(text: str, file: str) -> Any:
    """Parse JSON within the bounds of `bounded`, turning any problem into a located one."""
    try:
        return bounded.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError.at(
            file, f"line {exc.lineno}, column {exc.colno}", f"invalid JSON: {exc.msg}"
        ) from None


def load_json(path: Path, *, shown: str | None = None) -> Any:
    name = shown or str(path)
    return parse_json(read_text(path, shown=name, kind="json"), name)


def dump_yaml(data: Any) -> str:
    """YAML text in the given key order: multi-line strings as `|` blocks, and strings that
    would read back as another type (`"1"`, `"2026-11-29"`) in double quotes."""
    from agentopt.core.files.yaml_dump import dump

    return dump(data)
