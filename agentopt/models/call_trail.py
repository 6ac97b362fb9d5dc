"""Which cached answers one unit of work stood on, so that a rerun can replay the unit whole.

A unit (one task × repeat of `eval run`) opens a trail; every model call made under it, in
any task it spawns, adds the cache key of the answer it used (a hit, or an answer it kept),
and the pool that counted it. A call that did not end as a cached answer (an error, a cut-off
answer, caching off) spoils the trail: such a unit is never replayed
(`workflows/run/unit_replay.py`). Outside a unit nothing is recorded.
"""

from __future__ import annotations

from collections import Counter
from contextvars import ContextVar
from dataclasses import dataclass, field


@dataclass
class CallTrail:
    """The cached answers a unit used, and whether every call it made is among them."""

    keys: list[str] = field(default_factory=list)
    hits: Counter[str] = field(default_factory=Counter)
    """Per pool, the cache hits a replay of the unit counts (what the call layer counted)."""
    clean: bool = True

    def used(self, keys: list[str], pool: str) -> None:
        self.keys.extend(keys)
        self.hits[pool] += 1

    def spoil(self) -> None:
        self.clean = False


_CURRENT: ContextVar[CallTrail | None] = ContextVar("agentopt_call_trail", default=None)


def note(keys: list[str] | None, pool: str) -> None:
    """A call of the unit being played here ended as the cached answers `keys` (a hit, or an
    answer kept), or as none (None): the unit then cannot be replayed."""
    trail = _CURRENT.get()
    if trail is None:
        return
    if keys:
        trail.used(keys, pool)
    else:
        trail.spoil()


def open_trail() -> CallTrail:
    """A new trail for the calls made from here on in this context (and tasks it starts)."""
    trail = CallTrail()
    _CURRENT.set(trail)
    return trail
