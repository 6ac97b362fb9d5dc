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

Until the run starts (`settle`), the entry point also collects the youngest generation only
every `STARTUP_GEN0` allocations instead of every 700: a command's start allocates ~50,000
objects that live as long as it does, and the 106 young and 11 older collections of them took
30-40 ms of the ~0.3 s an `eval run` spends importing and preparing. What they would have
found (a few hundred objects of cyclic garbage) is frozen with the rest, never freed.

The entry point also fixes glibc's threshold above which a block is its own mapping
(`mallopt(M_MMAP_THRESHOLD)`, at 512 KB: above asyncio's 256 KB read buffers, which would
otherwise be mapped and unmapped at every read). Left dynamic, it rises to the
size of any mapped block freed (a 7 MB dataset file once read): from then on every block up to
that size comes from the heap, which gives back only its top, so the growing buffer of packed
tasks, the file's text and the names dict left holes that stayed resident. A 100,000-task
`eval run` kept ~10 MB more for its whole run, and peaked 4 MB higher while loading.

Below that threshold the heap still keeps the holes a growing array leaves (the run's tally and
journal index grow by reallocation, their old copies freed between other blocks): `trim` hands
their pages back (`malloc_trim`, which also gives back free pages inside the heap), and a run
calls it every `TRIM_EVERY` units and before its results are written.
"""

from __future__ import annotations

import gc
from functools import cache
from typing import Any

_enabled = False
_threshold: tuple[int, int, int] | None = None
"""The collector's thresholds before `enable` raised them (None: not raised)."""
STARTUP_GEN0 = 100_000
"""The youngest generation's threshold from `enable` until `settle`."""
TRIM_EVERY = 4096
"""Units a run journals between two `trim` calls (each takes well under a millisecond)."""
M_MMAP_THRESHOLD = -3
"""glibc's `mallopt` parameter (malloc.h)."""
MMAP_THRESHOLD = 512 * 1024


def enable() -> None:
    """Let `freeze_long_lived` freeze, and fix glibc's mmap threshold (the console entry
    point calls this)."""
    global _enabled, _threshold
    _enabled = True
    if _threshold is None:
        _threshold = gc.get_threshold()
        gc.set_threshold(STARTUP_GEN0, _threshold[1], _threshold[2])
    fix_mmap_threshold()


def fix_mmap_threshold() -> bool:
    """Blocks of 512 KB and more get their own mapping, given back when freed, whatever was
    freed before; False where the C library has no `mallopt` (macOS, Windows, musl)."""
    mallopt = _libc("mallopt")
    if mallopt is None:
        return False
    import ctypes

    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    return bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD))


@cache
def _libc(name: str) -> Any:
    """The C library's function `name`, or None where it has none."""
    try:
        import ctypes

        return getattr(ctypes.CDLL(None), name)
    except (AttributeError, OSError, TypeError):
        return None


def freeze_long_lived() -> None:
    """Freeze what is alive now: call once the imports and the inputs are in place."""
    if _enabled:
        gc.freeze()


def settle() -> None:
    """The run starts: freeze what is alive and collect as usual from here on."""
    global _threshold
    freeze_long_lived()
    if _threshold is not None:
        gc.set_threshold(*_threshold)
        _threshold = None


def trim() -> None:
    """Give the free pages inside the C heap back to the system (glibc's `malloc_trim`),
    when the entry point enabled this (`enable`) and the C library has it."""
    if _enabled and (malloc_trim := _libc("malloc_trim")) is not None:
        malloc_trim(0)
