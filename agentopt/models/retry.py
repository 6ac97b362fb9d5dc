"""When to retry a failed attempt, and how long to wait first (models.md §3).

Exponential back-off with full jitter (AWS architecture blog, "Exponential Backoff And
Jitter"): the wait before retry n is uniform in [0, min(cap, base·2^n)], so a burst of failing
clients spreads out instead of retrying in lock-step. A `Retry-After` from the server wins
over the computed wait.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from agentopt.core.errors import ModelCallError


@dataclass
class RetryPolicy:
    """Attempts and back-off. `rng` is injectable so tests are deterministic."""

    max_attempts: int = 6
    base_s: float = 1.0
    cap_s: float = 60.0
    rng: random.Random = field(default_factory=random.Random)

    def backoff(self, retry_number: int) -> float:
        """Full-jitter wait before retry `retry_number` (0 = the first retry)."""
        ceiling = min(self.cap_s, self.base_s * (2**retry_number))
        return self.rng.uniform(0.0, ceiling)

    def delay(self, error: ModelCallError, retry_number: int) -> float:
        """Seconds to wait before retrying after `error`."""
        if error.retry_after is not None:
            return error.retry_after
        return self.backoff(retry_number)

    def should_retry(self, error: ModelCallError, attempts_made: int) -> bool:
        return error.retryable and attempts_made < self.max_attempts
