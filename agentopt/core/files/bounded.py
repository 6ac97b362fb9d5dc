"""The one bounded reader every loader uses: whatever the bytes, a located problem — never a
traceback, never a hang.

Bounds, each with the failure it prevents (measured by the adversarial pass of issue 14):
- **size** per kind of file (`LIMITS`): a 10 MB YAML line kept the pure-Python YAML scanner
  busy for minutes; YAML configs are kilobytes, datasets may be large but JSON parses in C;
- **nesting depth** (`MAX_DEPTH`): deep JSON/YAML raised `RecursionError`;
- **integer digits** (`MAX_INT_DIGITS`): Python refuses to convert more than 4,300 digits
  with a `ValueError`;
- **decoding**: a latin-1 byte is reported with its line and column;
- **lone surrogates** (`"\\ud800"` in JSON): valid JSON, not valid text — it cannot be printed
  or written back as UTF-8, so it is refused where it is found;
- `NaN`/`Infinity`: not JSON, refused.
YAML alias expansion is capped where the plain data is built (`yaml_source`).
"""

from __future__ import annotations

import errno
import json
import os
import re
import stat
from pathlib import Path
from typing import Any, BinaryIO, Literal

from agentopt.core.errors import InputError
from agentopt.core.json_scan import bracket_depths

FileKind = Literal["yaml", "json", "dataset", "text", "results"]

KIB = 1024
MIB = 1024 * KIB
LIMITS: dict[str, int] = {
    "yaml": 256 * KIB,
    "json": 16 * MIB,
    "text": 4 * MIB,
    "dataset": 256 * MIB,
    "results": 256 * MIB,
}
"""Largest file accepted per kind: YAML configs (eval.yaml, azure.yaml, agent.yaml, evaluator
YAML, metadata.yaml), small JSON (rubric, tools.json, azd config), text (instructions, skills,
.env), datasets (JSONL, M365, CSV) and files agentopt wrote itself (results.json, job.json)."""

MAX_DEPTH = 64
"""Deepest nesting of lists/mappings in any user file (real ones stay below 10)."""
TOO_DEEP = f"lists and mappings are nested deeper than {MAX_DEPTH} levels"
MAX_INT_DIGITS = 1000
"""Longest integer literal accepted (Python's own cap is 4,300 digits, then a ValueError)."""

_SURROGATE = re.compile(r"[\ud800-\udfff]")
_ESCAPED_SURROGATE = re.compile(
    r"\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F][0-9a-fA-F]{2})"
    r"|(?<![0-9a-fA-F]{2}\\u[dD][89abAB])\\u[dD][c-fC-F][0-9a-fA-F]{2}"
)
_LONG_INT = re.compile(rf"(?<![\w.])-?\d{{{MAX_INT_DIGITS + 1},}}")


def human_size(n: int) -> str:
    return f"{n / MIB:.1f} MiB" if n >= MIB else f"{max(1, n // KIB)} KiB"


def read_bytes(path: Path, *, shown: str | None = None, kind: FileKind = "json") -> bytes:
    """The file's bytes, or an InputError naming it: missing, not a regular file (a folder, a
    FIFO, a socket, a device, a symlink loop), too big, unreadable."""
    name = shown or str(path)
    limit = LIMITS[kind]
    with open_regular(path, shown=name) as fh:
        size = os.fstat(fh.fileno()).st_size
        if size > limit:
            raise InputError.at(
                name,
                "",
                f"the file is {human_size(size)}; files of this kind are read up to "
                f"{human_size(limit)} (is it the right file?)",
            )
        try:
            # The size it has, and one byte more to see it grew: `read(limit + 1)` allocated
            # the limit (256 MB) for every file, which moved glibc's threshold for giving
            # memory back and kept ~13 MB of a 100,000-task load resident for the whole run.
            data = fh.read(size + 1)
            if len(data) > size:  # it grows while we read it: read on, to the limit
                data += fh.read(limit + 1 - len(data))
        except OSError as exc:
            raise InputError.at(name, "", f"cannot read: {exc.strerror or exc}") from None
    if len(data) > limit:  # it grew while we read it
        raise InputError.at(name, "", f"the file is larger than {human_size(limit)}")
    return data


def special_kind(mode: int) -> str | None:
    """What a file that is not a regular file is, in words; None for a regular file."""
    for test, what in _SPECIAL:
        if test(mode):
            return what
    return None if stat.S_ISREG(mode) else "not a regular file"


_SPECIAL = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


def check_regular(path: Path, *, shown: str | None = None) -> os.stat_result:
    """`os.stat(path)` of a regular file, else an InputError naming the path and what it
    is. Checked before anything opens the file: `open()` of a FIFO blocks until a writer
    comes (forever), a device never ends (`/dev/zero`), a symlink loop raises."""
    name = shown or str(path)
    try:
        st = os.stat(path)
    except FileNotFoundError:
        if os.path.islink(path):
            raise InputError.at(name, "", "a symbolic link to a file that does not exist") from None
        raise InputError.at(name, "", "file not found") from None
    except OSError as exc:
        raise InputError.at(name, "", _os_reason(exc)) from None
    except ValueError:  # an embedded NUL byte in the name
        raise InputError.at(name, "", "the file name holds a NUL byte") from None
    what = special_kind(st.st_mode)
    if what is not None:
        if what == "a folder":
            raise InputError.at(name, "", "expected a file, found a folder")
        raise InputError.at(name, "", f"expected a regular file, found {what}")
    return st


def open_regular(path: Path, *, shown: str | None = None) -> BinaryIO:
    """A regular file opened for reading, never blocking: checked first (`check_regular`),
    opened with O_NONBLOCK (a FIFO swapped in after the check cannot block either) and
    checked again on the open descriptor."""
    name = shown or str(path)
    check_regular(path, shown=name)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise InputError.at(name, "", _os_reason(exc)) from None
    what = special_kind(os.fstat(fd).st_mode)
    if what is not None:
        os.close(fd)
        raise InputError.at(name, "", f"expected a regular file, found {what}")
    return os.fdopen(fd, "rb")


def _os_reason(exc: OSError) -> str:
    if exc.errno == errno.ELOOP:
        return "a symbolic link loop (the link leads back to itself)"
    if exc.errno == errno.ENAMETOOLONG:
        return "cannot read: the file name is too long"
    if exc.errno == errno.ENOENT:
        return "file not found"
    if exc.errno == errno.EISDIR:
        return "expected a file, found a folder"
    return f"cannot read: {exc.strerror or exc}"


def decode(data: bytes, file: str) -> str:
    """UTF-8 text (a BOM is dropped); a byte that is not UTF-8 is named with line and column."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        start = exc.start
        line = data.count(b"\n", 0, start) + 1
        column = start - (data.rfind(b"\n", 0, start) + 1) + 1
        raise InputError.at(
            file,
            f"line {line}, column {column}",
            f"expected UTF-8 text, found the byte 0x{data[start]:02x}, which is not UTF-8 "
            f"({exc.reason}); save the file as UTF-8",
        ) from None


def read_text(path: Path, *, shown: str | None = None, kind: FileKind = "text") -> str:
    """`read_bytes` then `decode`."""
    name = shown or str(path)
    return decode(read_bytes(path, shown=name, kind=kind), name)


class _Refused(ValueError):
    def __init__(self, message: str, pos: int = 0) -> None:
        super().__init__(message)
        self.message = message
        self.pos = pos


def _int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise _Refused(f"an integer of {len(text)} digits (at most {MAX_INT_DIGITS} are read)")
    return int(text)


def _constant(name: str) -> Any:
    raise _Refused(f"{name} is not valid JSON (write a number or null)")


_DECODER = json.JSONDecoder(parse_int=_int, parse_constant=_constant)


def loads(text: str) -> Any:
    """`json.loads` within the bounds of this module.

    Raises:
        json.JSONDecodeError: for every problem, located by line and column, so that callers
            keep one `except` for "this is not usable JSON".
    """
    try:
        value = _DECODER.decode(text)  # what json.loads does, without a decoder per call
    except _Refused as exc:
        raise json.JSONDecodeError(exc.message, text, _position(text, exc.message)) from None
    except RecursionError:
        raise json.JSONDecodeError(TOO_DEEP, text, _deep_position(text)) from None
    if _plainly_fine(text):
        return value
    problem = check_value(value)
    if problem is not None:
        raise json.JSONDecodeError(problem, text, _position(text, problem))
    return value


def _plainly_fine(text: str) -> bool:
    """Text whose parse `check_value` cannot fault, seen without walking it: ASCII with no
    `\\u` escape holds no surrogate, and fewer brackets than `MAX_DEPTH` cannot nest deeper
    (with the one decoder, a dataset line's parse went from 9.5 to 4.5 µs)."""
    return text.isascii() and "\\u" not in text and text.count("{") + text.count("[") < MAX_DEPTH


def check_value(value: Any) -> str | None:
    """What makes parsed data unusable: nesting deeper than `MAX_DEPTH`, or a lone surrogate
    in a string or key. None when it is fine. Iterative: never recursion on user data."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, str):
            if not node.isascii() and _SURROGATE.search(node):
                return surrogate_message(node)
            continue
        if isinstance(node, dict):
            children: Any = [*node.keys(), *node.values()]
        elif isinstance(node, list):
            children = node
        else:
            continue
        if depth > MAX_DEPTH:
            return TOO_DEEP
        stack.extend((child, depth + 1) for child in children)
    return None


def surrogate_message(text: str) -> str:
    m = _SURROGATE.search(text)
    code = f"\\u{ord(m.group()):04x}" if m else "a surrogate"
    return (
        f"the text holds {code}, half of a UTF-16 pair on its own (not valid Unicode); "
        "remove it or write the whole character"
    )


def _position(text: str, message: str) -> int:
    pattern = {"integer": _LONG_INT, "UTF-16": _ESCAPED_SURROGATE}
    for word, regex in pattern.items():
        if word in message:
            m = regex.search(text)
            return m.start() if m else 0
    for constant in ("NaN", "-Infinity", "Infinity"):
        if message.startswith(constant):
            return max(0, text.find(constant))
    if "nested" in message:
        return _deep_position(text)
    return 0


def _deep_position(text: str) -> int:
    """Where nesting first passes MAX_DEPTH (brackets outside strings); error path only."""
    return next((i for i, depth in bracket_depths(text) if depth > MAX_DEPTH), 0)


def flow_depth_exceeded(text: str) -> int | None:
    """Offset where `[`/`{` nesting passes MAX_DEPTH in YAML text, or None. Quotes are not
    tracked (YAML has several quoting styles), so only a bracket run that deep counts: real
    files never come near it, and the pure-Python YAML parser would spend seconds on it."""
    depth = 0
    for m in re.finditer(r"[\[\]{}]", text):
        depth += 1 if m.group() in "[{" else -1
        if depth > MAX_DEPTH * 4:
            return m.start()
        depth = max(depth, 0)
    return None


def is_file(path: Path) -> bool:
    """`path.is_file()` that is False, not an OSError, for a name the file system refuses
    (too long, say) — paths inside user files are user input too."""
    try:
        return Path(path).is_file()
    except (OSError, ValueError):
        return False


def is_dir(path: Path) -> bool:
    """`path.is_dir()`, False for a name the file system refuses (see `is_file`)."""
    try:
        return Path(path).is_dir()
    except (OSError, ValueError):
        return False


def exists(path: Path) -> bool:
    """`path.exists()`, False for a name the file system refuses (see `is_file`)."""
    try:
        return Path(path).exists()
    except (OSError, ValueError):
        return False
