"""The hot paths' SHA-256 is hashlib's digest, whatever the size (fed in pieces that keep
the GIL)."""

from __future__ import annotations

import hashlib

import pytest

from agentopt.core.digest import PIECE, sha256_hex


@pytest.mark.parametrize(
    "size", [0, 1, PIECE - 1, PIECE, PIECE + 1, 2 * PIECE, 3 * PIECE + 5, 100_000]
)
def test_the_digest_is_hashlibs(size: int) -> None:
    data = bytes((i * 131 + 7) % 256 for i in range(size))
    assert sha256_hex(data) == hashlib.sha256(data).hexdigest()
