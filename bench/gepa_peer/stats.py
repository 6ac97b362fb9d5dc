"""Numbers over seeds: a mean with its 95% interval (Student t), and an exact paired
sign-flip test of whether two systems differ (no scipy in the project)."""

from __future__ import annotations

import itertools
import math
import random
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

# Two-sided 95% Student t critical values by degrees of freedom.
_T95 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306}
_T95 |= {9: 2.262, 10: 2.228, 11: 2.201, 12: 2.179, 13: 2.160, 14: 2.145, 15: 2.131}
_T95 |= {16: 2.120, 17: 2.110, 18: 2.101, 19: 2.093, 20: 2.086, 25: 2.060, 30: 2.042}
EXACT_LIMIT = 16
"""Up to this many pairs the sign-flip test enumerates every flip (2^16 = 65,536); beyond,
it samples 20,000 flips with a fixed seed."""


def t95(df: int) -> float:
    if df in _T95:
        return _T95[df]
    below = [k for k in _T95 if k <= df]
    return _T95[max(below)] if df < 30 else 1.96


@dataclass(frozen=True)
class Interval:
    mean: float
    low: float
    high: float
    n: int

    def show(self, digits: int = 3) -> str:
        return f"{self.mean:+.{digits}f} [{self.low:+.{digits}f}, {self.high:+.{digits}f}]"


def mean_ci(values: Sequence[float]) -> Interval:
    """The mean and its 95% t interval (a point when there is one value)."""
    n = len(values)
    mean = statistics.fmean(values) if values else math.nan
    if n < 2:
        return Interval(mean, mean, mean, n)
    half = t95(n - 1) * statistics.stdev(values) / math.sqrt(n)
    return Interval(mean, mean - half, mean + half, n)


def sign_flip_p(differences: Sequence[float]) -> float:
    """Two-sided p of the paired sign-flip (permutation) test of mean difference 0: the share
    of sign assignments whose |mean| is at least the observed one."""
    diffs = [d for d in differences if d != 0]
    if not diffs:
        return 1.0
    observed = abs(sum(diffs))
    if len(diffs) <= EXACT_LIMIT:
        flips = list(itertools.product((1, -1), repeat=len(diffs)))
    else:
        rng = random.Random(0)
        flips = [tuple(rng.choice((1, -1)) for _ in diffs) for _ in range(20_000)]
    count = sum(
        abs(sum(s * d for s, d in zip(signs, diffs, strict=True))) >= observed - 1e-12
        for signs in flips
    )
    return count / len(flips)
