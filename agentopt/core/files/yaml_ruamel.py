"""The ruamel.yaml half of `yaml_source.parse_yaml`: round-trip parsing (for key lines) and the
conversion to plain data within `bounded`'s limits. Its own module so that a command that
reads no YAML never imports ruamel (18 ms)."""

from __future__ import annotations

import io
import warnings
from datetime import datetime
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.constructor import ConstructorError, RoundTripConstructor
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.scalarbool import ScalarBoolean

from agentopt.core.errors import InputError, Problem
from agentopt.core.files import bounded
from agentopt.core.files.problems import KeyPath, LineIndex, format_path


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


def parse_checked(text: str, file: str) -> tuple[Any, LineIndex]:
    """Parse text that passed the size and flow-depth checks (see `yaml_source.parse_yaml`)."""
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
    if _expanded_values(node, {}, set(), 0) > MAX_YAML_VALUES:
        raise plain._fail((), _TOO_MANY)
    return plain.convert(node, ()), lines


def _expanded_values(node: Any, memo: dict[int, int], active: set[int], depth: int) -> int:
    """How many values `node` becomes once its aliases are copied, counted over the parsed
    graph (each shared node once, memoised), so a "billion laughs" file is refused in a few
    hundred steps rather than after building 100,000 values. A cycle or a nesting past
    `bounded.MAX_DEPTH` counts as one value here: the conversion names those itself."""
    if not isinstance(node, dict | list) or depth > bounded.MAX_DEPTH:
        return 1
    key = id(node)
    if key in memo:
        return memo[key]
    if key in active:
        return 1
    active.add(key)
    total = 1
    for child in node.values() if isinstance(node, dict) else node:
        total += _expanded_values(child, memo, active, depth + 1)
        if total > MAX_YAML_VALUES:
            break
    active.discard(key)
    memo[key] = total
    return total


_TOO_DEEP = bounded.TOO_DEEP
MAX_YAML_VALUES = 100_000
"""Values a YAML file may expand to: aliases (`*name`) are copied when the plain data is
built, so a file of a few lines ("billion laughs") could otherwise grow to gigabytes."""
_TOO_MANY = (
    f"invalid YAML: the file expands to more than {MAX_YAML_VALUES} values "
    "(aliases copied over and over)"
)


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
            raise self._fail((), _TOO_MANY)
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
