"""Read YAML and JSON user files into plain Python data, remembering the line of every key so
that a problem found later can say "eval.yaml: evaluators[2].name (line 14)"."""

from __future__ import annotations

import io
import json
import warnings
from datetime import datetime
from pathlib import Path
from typing import Any

import yaml
from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.constructor import ConstructorError, RoundTripConstructor
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.scalarbool import ScalarBoolean

from agentopt.core.errors import InputError, Problem
from agentopt.core.files import bounded
from agentopt.core.files.bounded import FileKind
from agentopt.core.files.problems import KeyPath, LineIndex, format_path


def read_text(path: Path, *, shown: str | None = None, kind: FileKind = "text") -> str:
    """The file's UTF-8 text within the size bound of its kind, or an InputError naming it."""
    return bounded.read_text(path, shown=shown, kind=kind)


class _Constructor(RoundTripConstructor):
    """Round-trip construction with an integer digit cap (Python raises past 4,300)."""

    def construct_yaml_int(self, node: Any) -> Any:
        digits = sum(ch.isdigit() for ch in str(node.value))
        if digits > bounded.MAX_INT_DIGITS:
            raise ConstructorError(
                problem=f"an integer of {digits} digits (at most "
                f"{bounded.MAX_INT_DIGITS} are read)",
                problem_mark=node.start_mark,
            )
        return super().construct_yaml_int(node)


_Constructor.add_constructor("tag:yaml.org,2002:int", _Constructor.construct_yaml_int)


def parse_yaml(text: str, file: str) -> tuple[Any, LineIndex]:
    """Parse YAML text into plain dict/list/scalars and a key-path → line index, within the
    bounds of `bounded` (size, nesting, integer digits, alias expansion, valid text)."""
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
    yaml = YAML(typ="rt")
    yaml.Constructor = _Constructor
    yaml.allow_duplicate_keys = False
    try:
        with warnings.catch_warnings():
            # A reused anchor is legal YAML (the later one wins); ruamel warns on stderr.
            warnings.simplefilter("ignore")
            node = yaml.load(io.StringIO(text))
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"line {mark.line + 1}" if mark is not None else ""
        what = (exc.problem or exc.context or "invalid YAML").strip()
        raise InputError(problems=[Problem(file, where, f"invalid YAML: {what}")]) from None
    except YAMLError as exc:
        raise InputError.at(file, "", f"invalid YAML: {exc}") from None
    except RecursionError:
        raise InputError.at(file, "", f"invalid YAML: {_TOO_DEEP}") from None
    except ValueError as exc:  # a scalar ruamel could not convert (a timestamp out of range)
        raise InputError.at(file, "", f"invalid YAML: {exc}") from None
    except (KeyError, IndexError, TypeError, AttributeError) as exc:
        # ruamel's own failures on input it does not expect (`%YAML 9.9` → KeyError (9, 9))
        raise InputError.at(
            file, "", f"invalid YAML: the parser could not read it ({type(exc).__name__} {exc})"
        ) from None
    lines = LineIndex()
    plain = _Plain(file, lines)
    return plain.convert(node, ()), lines


def load_yaml(path: Path, *, shown: str | None = None) -> tuple[Any, LineIndex]:
    """Read and parse a YAML file (see `parse_yaml`)."""
    name = shown or str(path)
    return parse_yaml(read_text(path, shown=name, kind="yaml"), name)


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


_TOO_DEEP = bounded.TOO_DEEP
MAX_YAML_VALUES = 100_000
"""Values a YAML file may expand to: aliases (`*name`) are copied when the plain data is
built, so a file of a few lines ("billion laughs") could otherwise grow to gigabytes."""


class _Plain:
    """Converts ruamel's round-trip types to builtins, recording each key's line, counting
    values (alias expansion cap) and nesting, and refusing text that is not valid Unicode."""

    def __init__(self, file: str, lines: LineIndex) -> None:
        self.file = file
        self.lines = lines
        self.values = 0

    def _fail(self, path: KeyPath, message: str, *, show_path: bool = True) -> InputError:
        line = self.lines.line(path)
        where = format_path(path) if show_path else ""
        if line is not None:
            where = f"{where} (line {line})" if where else f"line {line}"
        return InputError.at(self.file, where, message)

    def convert(self, node: Any, path: KeyPath) -> Any:
        self.values += 1
        if self.values > MAX_YAML_VALUES:
            raise self._fail(
                (),
                f"invalid YAML: the file expands to more than {MAX_YAML_VALUES} values "
                "(aliases copied over and over)",
            )
        if len(path) > bounded.MAX_DEPTH:
            raise self._fail(path, f"invalid YAML: {_TOO_DEEP}", show_path=False)
        return _plain(node, path, self)


def _plain(node: Any, path: KeyPath, conv: _Plain) -> Any:
    """Convert ruamel's round-trip types to builtins, recording each key's line."""
    lines = conv.lines
    if isinstance(node, CommentedMap):
        out: dict[str, Any] = {}
        for key, value in node.items():
            k = str(key)
            try:
                line, _col = node.lc.key(key)
                lines.set((*path, k), line + 1)
            except (KeyError, TypeError):
                pass
            out[k] = conv.convert(value, (*path, k))
        return out
    if isinstance(node, CommentedSeq):
        items = []
        for i, value in enumerate(node):
            try:
                line, _col = node.lc.item(i)
                lines.set((*path, i), line + 1)
            except (KeyError, TypeError, IndexError):
                pass
            items.append(conv.convert(value, (*path, i)))
        return items
    if isinstance(node, bool) or node is None:
        return node
    if isinstance(node, ScalarBoolean):
        return bool(node)
    if isinstance(node, str):
        text = str(node)
        if not text.isascii() and bounded.check_value(text) is not None:
            raise conv._fail(path, f"invalid YAML: {bounded.surrogate_message(text)}")
        return text
    if isinstance(node, int):
        return int(node)
    if isinstance(node, float):
        return float(node)
    if isinstance(node, dict):
        return {str(k): conv.convert(v, (*path, str(k))) for k, v in node.items()}
    if isinstance(node, list):
        return [conv.convert(v, (*path, i)) for i, v in enumerate(node)]
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
