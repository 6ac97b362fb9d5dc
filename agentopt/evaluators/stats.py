"""Bootstrap confidence intervals: the run score's, and the paired one behind regression gates
and the optimizer's ★ rule (optimizer.md §2: a candidate is ★ only when the lower end of the
95% paired interval of candidate − baseline is above 0).

Seeded, so the same scores and seed give the same interval on every machine. The resampling is
vectorised with numpy (issue 19: 2,000 × N Python `random.choices` draws took 2.2 s at 10,000
tasks) and gives bit for bit the interval the pure-Python version gave: numpy's `RandomState`
seeded with the 32-bit words of the seed is the same Mersenne Twister stream as
`random.Random(seed)`, `floor(u * n)` picks the same indices as `random.choices`, and a
cumulative sum adds each resample left to right as `sum()` did.
"""

from __future__ import annotations

import importlib
import math
import sys
import threading
from array import array
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, TypeVar

from pydantic import ConfigDict

from agentopt.core.lazy_model import LazyModel

DEFAULT_RESAMPLES = 2000
DEFAULT_LEVEL = 0.95
CHUNK_DRAWS = 1 << 16
"""Draws resampled at once (512 KB of floats): memory stays flat however many tasks, and
the few arrays stay in cache. 2M draws at once (16 MB) made the 1,000-task interval take
57 ms in a fresh process instead of 28 ms, most of it first touches of new pages."""


KEEP_PICKS_MAX = 1 << 17
"""Index arrays kept for reuse only up to this many draws (1 MB): 64 tasks at 2,000 resamples."""
KEEP_PICKS_SIZES = 8
_PICKS: dict[tuple[int, int, int], list[tuple[int, Any]]] = {}
_PICKS_LOCK = threading.Lock()


class ConfidenceInterval(LazyModel):
    """A percentile bootstrap interval of a mean."""

    model_config = ConfigDict(extra="forbid")

    mean: float
    """The observed mean."""
    low: float
    """Lower bound."""
    high: float
    """Upper bound."""
    level: float = DEFAULT_LEVEL
    """Coverage, e.g. 0.95."""
    n: int
    """Number of values (tasks) resampled."""
    resamples: int = DEFAULT_RESAMPLES
    """Bootstrap resamples drawn."""
    seed: int = 0
    """The random seed (same values and seed → same interval)."""


class PairedDelta(ConfidenceInterval):
    """The interval of mean(b − a) over shared tasks; `a` is the baseline, `b` the candidate."""

    @property
    def improved(self) -> bool:
        """True when b beats a by more than the noise (the interval lies above 0)."""
        return self.low > 0

    @property
    def regressed(self) -> bool:
        """True when b is worse than a by more than the noise (the interval lies below 0)."""
        return self.high < 0


def _percentile_interval(
    values: Sequence[float], seed: int, resamples: int, level: float
) -> tuple[float, float]:
    if all(v == values[0] for v in values):
        # Every resample holds n copies of the one value: every resample's mean is the same
        # float, summed left to right as the cumulative sum below would (so bit for bit the
        # interval the draws give), and numpy is not needed (0.1-0.2 s of CPU to import).
        total = 0.0
        for v in values:
            total += v
        return total / len(values), total / len(values)
    means = _resampled_means(values, seed, resamples)
    alpha = (1.0 - level) / 2.0
    lo_i = max(0, math.floor(alpha * resamples))
    hi_i = min(resamples - 1, math.ceil((1.0 - alpha) * resamples) - 1)
    return float(means[lo_i]), float(means[hi_i])


Interval = TypeVar("Interval", bound=ConfidenceInterval)


def _mean_interval(
    kind: type[Interval], values: Sequence[float], seed: int, resamples: int, level: float
) -> Interval:
    """The bootstrap interval of the mean of `values` as `kind`, widened to hold the mean
    (one value: that value, no spread)."""
    mean = sum(values) / len(values)
    if len(values) == 1:
        low = high = mean
    else:
        low, high = _percentile_interval(values, seed, resamples, level)
    return kind(
        mean=mean,
        low=min(low, mean),
        high=max(high, mean),
        level=level,
        n=len(values),
        resamples=resamples,
        seed=seed,
    )


_prefetching = False


def prefetch_numpy() -> None:
    """Start importing numpy on a background thread (0.1-0.2 s of CPU, most of the finish
    phase otherwise): called while a run goes, the import fills the time the event loop
    spends waiting on the model, and the bootstrap at the end finds numpy loaded (a concurrent
    `import numpy` simply waits for this one). `numpy.random` is a separate import (10 ms)
    that `import numpy` leaves to first use."""
    global _prefetching
    if _prefetching or "numpy.random" in sys.modules:
        return
    _prefetching = True
    threading.Thread(
        target=importlib.import_module,
        args=("numpy.random",),
        name="agentopt-numpy",
        daemon=True,
    ).start()


def _resampled_means(values: Sequence[float], seed: int, resamples: int) -> Any:
    """The sorted means of `resamples` bootstrap resamples (numpy array). A run's task means
    (an `array("d")`) are read in place, not copied."""
    import numpy as np

    if isinstance(values, array):
        data = np.frombuffer(values, dtype=np.float64)
    else:
        data = np.asarray(values, dtype=np.float64)
    n = len(data)
    means = np.empty(resamples, dtype=np.float64)
    if n > CHUNK_DRAWS:
        _wide_means(data, seed, means)
    else:
        for start, picks in _picks(seed, n, resamples, CHUNK_DRAWS // n):
            means[start : start + len(picks)] = np.cumsum(data[picks], axis=1)[:, -1] / n
    means.sort()
    return means


def _wide_means(data: Any, seed: int, means: Any) -> None:
    """Each resample's mean, for more values than `CHUNK_DRAWS`, drawn and summed in pieces of
    `CHUNK_DRAWS`: a whole resample at once was four arrays of n (3.2 MB at 100,000 tasks, the
    peak of a run's summary). The draws come from the stream in the same order as one row of
    n would, and each piece's running sum goes on from the last one's (`drawn[0] += total`
    is the next addition of the row's cumulative sum), so the means are the same bit for bit."""
    import numpy as np

    n = len(data)
    stream = np.random.RandomState(_twister_key(seed))
    for row in range(len(means)):
        total = 0.0
        for start in range(0, n, CHUNK_DRAWS):
            draws = stream.random_sample(min(CHUNK_DRAWS, n - start))
            draws *= n
            drawn = data[draws.astype(np.intp)]  # floor: u >= 0
            del draws
            if start:
                drawn[0] += total
            total = np.cumsum(drawn, out=drawn)[-1]
        means[row] = total / n


def _picks(seed: int, n: int, resamples: int, rows: int) -> Iterator[tuple[int, Any]]:
    """The resampled indices, `(first resample, rows × n index array)` per chunk, drawn as
    they are used: one chunk in memory at a time, so the interval's memory does not grow with
    `resamples × n` (all chunks at once were 16 KB a task: 1.7 GB of peak at 100,000 tasks).

    They depend only on (seed, n, resamples), not on the values: an optimizer job ranks every
    candidate with the job's seed over the same split, so the indices of one small split size
    are kept once drawn (`_PICKS`). Seeding the stream and drawing took most of an interval's
    1.5 ms at 8 tasks: the six intervals of a bench run took 8.8 ms, and take 3.6 ms when the
    five after the first reuse its indices."""
    import numpy as np

    key = (seed, n, resamples)
    kept = _PICKS.get(key)
    if kept is not None:
        yield from kept
        return
    keep = n * resamples <= KEEP_PICKS_MAX
    stream = np.random.RandomState(_twister_key(seed))
    chunks = []
    for start in range(0, resamples, rows):
        count = min(rows, resamples - start)
        picks = (stream.random_sample((count, n)) * n).astype(np.intp)  # floor: u >= 0
        if keep:
            picks.flags.writeable = False  # shared by later intervals
            chunks.append((start, picks))
        yield start, picks
    if keep:
        with _PICKS_LOCK:
            if len(_PICKS) >= KEEP_PICKS_SIZES:
                _PICKS.pop(next(iter(_PICKS)))
            _PICKS[key] = chunks


def _twister_key(seed: int) -> list[int]:
    """The init_by_array key `random.Random(seed)` uses: |seed| in 32-bit words, low first."""
    rest = abs(int(seed))
    words = [rest & 0xFFFFFFFF]
    while rest := rest >> 32:
        words.append(rest & 0xFFFFFFFF)
    return words


def bootstrap_ci(
    values: Sequence[float],
    *,
    seed: int = 0,
    resamples: int = DEFAULT_RESAMPLES,
    level: float = DEFAULT_LEVEL,
) -> ConfidenceInterval | None:
    """Percentile bootstrap interval of the mean of `values` (None for fewer than 2 values);
    an `array("d")` is used as it is (a run's task means: no list of 100,000 floats)."""
    if not isinstance(values, array) or values.typecode != "d":
        values = [float(v) for v in values]
    if len(values) < 2:
        return None
    return _mean_interval(ConfidenceInterval, values, seed, resamples, level)


def paired_bootstrap_ci(
    a_scores: Mapping[str, float] | Sequence[float],
    b_scores: Mapping[str, float] | Sequence[float],
    seed: int = 0,
    *,
    resamples: int = DEFAULT_RESAMPLES,
    level: float = DEFAULT_LEVEL,
) -> PairedDelta | None:
    """Interval of mean(b − a) resampling tasks in pairs.

    Args:
        a_scores, b_scores: per-task scores, either mappings task name → score (only shared
            names are used) or equal-length sequences paired by position. `a` = baseline.
        seed: the random seed (same inputs and seed → same interval).

    Returns:
        None when there is no shared task.
    """
    if isinstance(a_scores, Mapping) and isinstance(b_scores, Mapping):
        shared = sorted(set(a_scores) & set(b_scores))
        deltas = [float(b_scores[k]) - float(a_scores[k]) for k in shared]
    elif not isinstance(a_scores, Mapping) and not isinstance(b_scores, Mapping):
        if len(a_scores) != len(b_scores):
            raise ValueError(
                f"paired scores need equal lengths, got {len(a_scores)} and {len(b_scores)}"
            )
        deltas = [float(b) - float(a) for a, b in zip(a_scores, b_scores, strict=True)]
    else:
        raise TypeError("pass two mappings (task → score) or two sequences")
    if not deltas:
        return None
    return _mean_interval(PairedDelta, deltas, seed, resamples, level)
