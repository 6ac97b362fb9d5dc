"""Read YAML and JSON user files into plain Python data, remembering the line of every key so
that a problem found later can say "eval.yaml: evaluators[2].name (line 14)"."""

from __future__ import annotations

import io
import json
from datetime import datetime
from pathlib import Path
from typing import Any

import yaml
from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.scalarbool import ScalarBoolean

from agentopt.core.errors import InputError, Problem
from agentopt.core.files.problems import KeyPath, LineIndex


def read_text(path: Path, *, shown: str | None = None) -> str:
    """The file's UTF-8 text, or an InputError that names it."""
    name = shown or str(path)
    try:
        return Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError.at(name, "", "file not found") from None
    except IsADirectoryError:
        raise InputError.at(name, "", "expected a file, found a folder") from None
    except UnicodeDecodeError as exc:
        raise InputError.at(name, "", f"not UTF-8 text ({exc.reason})") from None
    except OSError as exc:
        raise InputError.at(name, "", f"cannot read: {exc.strerror}") from None


def parse_yaml(text: str, file: str) -> tuple[Any, LineIndex]:
    """Parse YAML text into plain dict/list/scalars and a key-path → line index."""
    yaml = YAML(typ="rt")
    yaml.allow_duplicate_keys = False
    try:
        node = yaml.load(io.StringIO(text))
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"line {mark.line + 1}" if mark is not None else ""
        what = (exc.problem or exc.context or "invalid YAML").strip()
        raise InputError(problems=[Problem(file, where, f"invalid YAML: {what}")]) from None
    except YAMLError as exc:
        raise InputError.at(file, "", f"invalid YAML: {exc}") from None
    lines = LineIndex()
    return _plain(node, (), lines), lines


def load_yaml(path: Path, *, shown: str | None = None) -> tuple[Any, LineIndex]:
    """Read and parse a YAML file (see `parse_yaml`)."""
    name = shown or str(path)
    return parse_yaml(read_text(path, shown=name), name)


def parse_json(text: str, file: str) -> Any:
    """Parse JSON, turning a syntax error into a located Problem."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError.at(
            file, f"line {exc.lineno}, column {exc.colno}", f"invalid JSON: {exc.msg}"
        ) from None


def load_json(path: Path, *, shown: str | None = None) -> Any:
    name = shown or str(path)
    return parse_json(read_text(path, shown=name), name)


def _plain(node: Any, path: KeyPath, lines: LineIndex) -> Any:
    """Convert ruamel's round-trip types to builtins, recording each key's line."""
    if isinstance(node, CommentedMap):
        out: dict[str, Any] = {}
        for key, value in node.items():
            k = str(key)
            try:
                line, _col = node.lc.key(key)
                lines.set((*path, k), line + 1)
            except (KeyError, TypeError):
                pass
            out[k] = _plain(value, (*path, k), lines)
        return out
    if isinstance(node, CommentedSeq):
        items = []
        for i, value in enumerate(node):
            try:
                line, _col = node.lc.item(i)
                lines.set((*path, i), line + 1)
            except (KeyError, TypeError, IndexError):
                pass
            items.append(_plain(value, (*path, i), lines))
        return items
    if isinstance(node, bool) or node is None:
        return node
    if isinstance(node, ScalarBoolean):
        return bool(node)
    if isinstance(node, str):
        return str(node)
    if isinstance(node, int):
        return int(node)
    if isinstance(node, float):
        return float(node)
    if isinstance(node, dict):
        return {str(k): _plain(v, (*path, str(k)), lines) for k, v in node.items()}
    if isinstance(node, list):
        return [_plain(v, (*path, i), lines) for i, v in enumerate(node)]
    # Dates and timestamps stay as ISO text: the files store them as strings.
    if isinstance(node, datetime):
        return node.replace(tzinfo=None).isoformat().replace("+00:00", "") + "Z"
    return node.isoformat() if hasattr(node, "isoformat") else str(node)


class _Dumper(yaml.SafeDumper):
    """Readable YAML for files people review: multi-line strings as `|` blocks, and strings
    that would read back as another type (`"1"`, `"2026-11-29"`) in double quotes."""


def _str_representer(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style: str | None = None
    if "\n" in value:
        style = "|"
    elif dumper.resolve(yaml.ScalarNode, value, (True, False)) != "tag:yaml.org,2002:str":
        style = '"'
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str_representer)


def dump_yaml(data: Any) -> str:
    """YAML text in the given key order (see `_Dumper`)."""
    return yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100)
