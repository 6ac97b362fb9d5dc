"""Every world of the optimizer benchmark, in the order the table shows them: the six of
`worlds.py` (issue 18), then the seven built to trap an optimizer (`traps.py`, issue 31)."""

from __future__ import annotations

from bench.gepa_peer.traps import TRAPS
from bench.gepa_peer.worlds import WORLDS as BASE_WORLDS
from bench.gepa_peer.worlds import World

WORLDS: dict[str, World] = {**BASE_WORLDS, **{w.name: w for w in TRAPS}}
