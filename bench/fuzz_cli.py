"""The structure-aware fuzz run through the real CLI (issue 38 item 10): generated inputs of
every kind (tests/fuzz/structured.py) — data mutated as data, special files, sizes — each met
by the command a user would run on it, in a forked process of its own (tests/fuzz/cli_runner.py).

    python bench/fuzz_cli.py [N] [--seed S] [--json]

Counts tracebacks, hangs (> 60 s), inputs over 20 s of CPU and exit-2 messages that do not name
the file, and prints each failure with its input's kind and the command; prints the seed first
(a run without --seed draws one), so any failure replays with `--seed`.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.fuzz.cli_runner import CPU_CAP_S, describe, fuzz, preload, summary


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("n", nargs="?", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--json", action="store_true", help="one JSON line: the summary")
    args = parser.parse_args()
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**32)
    print(f"seed {seed}", file=sys.stderr, flush=True)
    preload()
    started, cpu0 = time.monotonic(), os.times()
    done = [0]

    def progress(_: object) -> None:
        done[0] += 1
        if not args.json and done[0] % 250 == 0:
            print(f"  {done[0]}/{args.n} inputs", file=sys.stderr, flush=True)

    # mkdtemp, not TemporaryDirectory: its finalizer is an atexit hook, which each forked CLI
    # run would fire on its way out (the CLI runs atexit), deleting the folder under the run.
    tmp = tempfile.mkdtemp(prefix="agentopt-fuzz-cli-")
    try:
        outcomes = fuzz(args.n, seed, Path(tmp), progress)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    failures = [
        describe(o) for o in outcomes if o.hung or o.traceback or o.unnamed or o.cpu_s > CPU_CAP_S
    ]
    result = summary(outcomes)
    cpu1 = os.times()
    result.update(
        seed=seed,
        wall_s=round(time.monotonic() - started, 1),
        children_cpu_s=round(
            cpu1.children_user + cpu1.children_system - cpu0.children_user - cpu0.children_system, 1
        ),
        load_average=round(os.getloadavg()[0], 1),
        failures=failures[:50],
    )
    if args.json:
        print(json.dumps(result))
        return
    for line in failures:
        print(line)
    shown = {k: v for k, v in result.items() if k != "failures"}
    print(json.dumps(shown, indent=1))


if __name__ == "__main__":
    main()
