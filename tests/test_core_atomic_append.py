"""A journal batch (`atomic.append_lines_fsync`) is appended whole or not at all, also when the
disk takes part of it: the write stops where the file may grow no more (a file-size limit, as a
full disk or a quota stops it), the file is cut back to where it ended, and nothing of the batch
is written after that — a torn line would be the first thing `--resume` meets."""

from __future__ import annotations

import resource
import subprocess
import sys
from pathlib import Path

import pytest

CHILD = """
import sys
from pathlib import Path
from agentopt.core.atomic import append_lines_fsync
path = Path(sys.argv[1])
lines = [(str(i) * 2999).encode() + b"\\n" for i in (7, 8)]
try:
    append_lines_fsync(path, lines)
except OSError as exc:
    print("refused:", exc.filename == str(path), exc.errno)
else:
    print("written")
"""


@pytest.mark.parametrize("room", [1_000, 3_500, 5_999])
def test_a_batch_the_file_takes_only_part_of_leaves_the_file_as_it_was(
    tmp_path: Path, room: int
) -> None:
    """6,000 bytes appended where the file may grow by `room` only: the kernel writes `room`
    of them and refuses the rest (EFBIG; Python ignores SIGXFSZ). Cutting the file back frees
    that room again, where a buffered file would then write the rest of the batch on close."""
    journal = tmp_path / "journal.jsonl"
    before = b"".join((str(i) * 999).encode() + b"\n" for i in range(6))
    journal.write_bytes(before)
    limit = len(before) + room
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(journal)],
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit)),
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith("refused: True"), done.stdout
    assert journal.read_bytes() == before


def test_a_batch_with_room_is_appended_whole(tmp_path: Path) -> None:
    from agentopt.core.atomic import append_lines_fsync

    journal = tmp_path / "journal.jsonl"
    journal.write_bytes(b'{"a":1}\n')
    append_lines_fsync(journal, [b'{"b":2}\n', b'{"c":3}\n'])
    append_lines_fsync(tmp_path / "new.jsonl", [b"{}\n"], fsync=False)
    assert journal.read_bytes() == b'{"a":1}\n{"b":2}\n{"c":3}\n'
    assert (tmp_path / "new.jsonl").read_bytes() == b"{}\n"
