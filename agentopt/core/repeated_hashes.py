"""Which of many hashes occur more than once, in 8 bytes a hash.

Finding two alike among 100,000 names with a set or a sorted list of their hashes holds an int
object and a pointer for each (~5 MB); here the hashes go into 256 arrays by their low byte,
and each array alone is sorted, so at most one part's list exists at a time. Two names whose
hashes meet are then compared (two different names can share a hash, rarely).
"""

from __future__ import annotations

import itertools
from array import array
from collections.abc import Iterable


def repeated_hashes(hashes: Iterable[int]) -> set[int]:
    """The hashes that occur at least twice."""
    parts = [array("q") for _ in range(256)]
    for digest in hashes:
        parts[digest & 255].append(digest)
    return {a for part in parts for a, b in itertools.pairwise(sorted(part)) if a == b}
