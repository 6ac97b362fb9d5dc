"""The cycle collector and the objects a command holds for its whole life.

A command imports some 600 modules and builds its inputs before its first model call. CPython's
cycle collector walks every one of those objects again in each collection of its oldest
generation: 45–70 ms a pass in an `optimize` run of the bench's `tool-descriptions` world, a
tenth of its wall time, for objects that live until the process ends. `gc.freeze()` moves the
objects alive at that moment out of the collector's reach; whatever the run creates afterwards
is collected as before.

Only the console entry point turns this on (`enable`). A frozen object is never freed by the
cycle collector: harmless in a process that ends with its command, a leak of cyclic garbage in
one that calls the workflows again and again (the test suite, a notebook).
"""

from __future__ import annotations

import gc

_enabled = False


def enable() -> None:
    """Let `freeze_long_lived` freeze (the console entry point calls this)."""
    global _enabled
    _enabled = True


def freeze_long_lived() -> None:
    """Freeze what is alive now: call once the imports and the inputs are in place."""
    if _enabled:
        gc.freeze()
