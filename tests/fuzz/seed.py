"""One random seed per fuzz run, printed so that a failure replays: each CI run explores new
inputs, and `AGENTOPT_FUZZ_SEED=<seed>` repeats the run that failed."""

from __future__ import annotations

import os
import random

import pytest

REPLAY = "AGENTOPT_FUZZ_SEED"


def fuzz_seed(capsys: pytest.CaptureFixture[str], what: str) -> int:
    """The seed given in `AGENTOPT_FUZZ_SEED`, or a fresh one; printed past pytest's capture."""
    given = os.environ.get(REPLAY)
    seed = int(given) if given else random.SystemRandom().randrange(2**32)
    with capsys.disabled():
        print(f"\n{what}: seed {seed} (replay: {REPLAY}={seed})")
    return seed
