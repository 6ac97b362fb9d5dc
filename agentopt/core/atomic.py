"""Atomic writes and backups: a crash never leaves a half-written user or registry file."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from agentopt.core.ids import timestamp

_BINARY = getattr(os, "O_BINARY", 0)
"""Windows' flag for bytes written as given (no newline translation); 0 elsewhere."""


def write_bytes_atomic(path: Path, data: bytes) -> None:
    """Write to a temp file in the same folder, fsync, then rename over the target."""
    write_files_atomic({Path(path): data})


def write_files_atomic(files: Mapping[Path, bytes]) -> None:
    """`write_bytes_atomic` for several files at once: each is written to a temp file and
    fsynced, then each renamed over its target, then each folder fsynced once. Every file is
    replaced whole or not at all, as alone; files side by side share their folder's fsync
    (job.json and report.html, saved together at the end of an optimize run, took 4.7-9.8 ms
    one after the other)."""
    staged: dict[Path, str] = {}
    try:
        for path, data in files.items():
            staged[path] = _staged(path, data)
        for path, tmp in list(staged.items()):
            try:
                os.replace(tmp, path)
            except OSError as exc:
                raise named(exc, path) from exc
            del staged[path]
    finally:
        for tmp in staged.values():
            Path(tmp).unlink(missing_ok=True)
    for folder in dict.fromkeys(path.parent for path in files):
        fsync_folder(folder)


def _staged(path: Path, data: bytes) -> str:
    """A temp file beside `path` holding `data`, fsynced, with the target's mode."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise named(exc, path) from exc
    try:
        # mkstemp makes 0600 files; keep the target's mode, else the user's umask default.
        os.chmod(tmp, path.stat().st_mode & 0o7777 if path.exists() else 0o666 & ~_umask())
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
    except BaseException as exc:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise named(exc, path) from exc
        raise
    return tmp


def write_staged_files(folder: Path, files: Mapping[str, bytes]) -> None:
    """Write `files` (relative path -> bytes) into `folder`, a staging folder nobody reads
    until its caller renames it into place: each file is created (never replaced), written and
    fsynced, then each folder is fsynced once, so the rename publishes complete files. A temp
    file and a rename per file (`write_bytes_atomic`) protect nothing more inside such a
    folder, and took twice the fsyncs: ~16 ms a candidate folder in an optimize run."""
    folders = {folder}
    for name, data in files.items():
        if Path(name).is_absolute() or ".." in Path(name).parts:
            raise ValueError(f"{name!r} is not a path inside {folder}")
        path = folder / name
        try:
            if path.parent not in folders:
                path.parent.mkdir(parents=True, exist_ok=True)
                folders.update(p for p in path.parents if p.is_relative_to(folder))
            with open(path, "xb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
        except OSError as exc:
            raise named(exc, path) from exc
    for written in sorted(folders, key=lambda p: len(p.parts), reverse=True):
        fsync_folder(written)


def write_text_atomic(path: Path, text: str) -> None:
    """UTF-8 text variant of `write_bytes_atomic`."""
    write_bytes_atomic(path, text.encode("utf-8"))


def json_bytes(data: Any, *, indent: int | None = 2) -> bytes:
    """The bytes `write_json_atomic` writes (UTF-8, non-ASCII kept readable, a final newline),
    for a caller that serialises on one thread and writes on another."""
    return (json.dumps(data, indent=indent, ensure_ascii=False, default=str) + "\n").encode()


def write_json_atomic(path: Path, data: Any, *, indent: int | None = 2) -> None:
    """JSON variant of `write_bytes_atomic` (UTF-8, non-ASCII kept readable)."""
    write_bytes_atomic(path, json_bytes(data, indent=indent))


def backup(path: Path) -> Path:
    """Copy `path` to `<path>.bak.<YYYYMMDDHHMMSS>` (never overwriting an older backup)."""
    path = Path(path)
    target = free_aside_name(path, ".bak")
    shutil.copy2(path, target)
    return target


def free_aside_name(path: Path, infix: str = "") -> Path:
    """`<path><infix>.<YYYYMMDDHHMMSS>`, or with `.1`, `.2`… added: a name no earlier backup or
    set-aside folder holds, so keeping the old copy never replaces an older one."""
    target = path.with_name(f"{path.name}{infix}.{timestamp()}")
    n = 1
    while target.exists():
        target = path.with_name(f"{path.name}{infix}.{timestamp()}.{n}")
        n += 1
    return target


def append_line_fsync(path: Path, line: str) -> None:
    """Append one line and fsync, so a journal survives a crash up to the last full line."""
    path.parent.mkdir(parents=True, exist_ok=True)
    append_lines_fsync(path, [(line.rstrip("\n") + "\n").encode("utf-8")])


def append_lines_fsync(path: Path, lines: Sequence[bytes], *, fsync: bool = True) -> None:
    """Append encoded lines (each ending in a newline) in one write and one fsync: a batch
    writer's journal write (`core/batch_writer.py`).

    Whole lines or nothing: a write the disk cannot take (ENOSPC, a quota) is cut back to
    where the file ended, so no torn line is left for `--resume` to meet; the OSError then
    names the file. The writes are the file descriptor's own, unbuffered: a buffered file
    kept what the disk refused and wrote it on close, into the room the cut had just freed,
    as a line's tail at the start of a line."""
    data = memoryview(b"".join(lines))
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | _BINARY, 0o666)
    except OSError as exc:
        raise named(exc, path) from exc
    try:
        start = os.lseek(fd, 0, os.SEEK_END)
        try:
            while data:
                data = data[os.write(fd, data) :]  # a write may take part of what it is given
            if fsync:
                os.fsync(fd)
        except OSError:
            _cut_back(fd, start)
            raise
    except OSError as exc:
        raise named(exc, path) from exc
    finally:
        os.close(fd)


def _cut_back(fd: int, size: int) -> None:
    # Shrinking needs no free space; should it fail anyway, the reader skips a torn last line
    # and resume ends it (workflows/run/store.py).
    with contextlib.suppress(OSError):
        os.ftruncate(fd, size)


def named(exc: OSError, path: Path) -> OSError:
    """`exc` with the file it was about, for the one line the CLI prints (cli/errors.py)."""
    if exc.filename is not None:
        return exc
    return type(exc)(exc.errno, exc.strerror, str(path))


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def fsync_folder(folder: Path) -> None:
    """Make the renames and creations inside `folder` durable (where a folder cannot be
    opened or fsynced, as on Windows, nothing is done)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
