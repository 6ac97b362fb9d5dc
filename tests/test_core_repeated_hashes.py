"""`repeated_hashes`: the hashes that occur twice or more, whatever their low byte."""

from __future__ import annotations

import random

from agentopt.core.repeated_hashes import repeated_hashes


def test_it_finds_exactly_the_hashes_that_repeat() -> None:
    rng = random.Random(5)
    hashes = [rng.getrandbits(64) - (1 << 63) for _ in range(5_000)]
    new = hashes[3] & ~255 | (hashes[4] & 255)  # in the part of another's low byte
    twice = [*hashes[10:20], new]
    given = [*hashes, *hashes[10:20], new, new]
    rng.shuffle(given)
    assert repeated_hashes(given) == set(twice)
    assert repeated_hashes(hashes) == set()
    assert repeated_hashes([]) == set()
