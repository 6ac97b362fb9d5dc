"""Fuzz every loader with seeded random mutations and count tracebacks and hangs (issue 14).

    python bench/fuzz_loaders.py [N] [--seed S] [--cap SECONDS]

Prints one line per failure kind and the totals. The same seed gives the same inputs on any
checkout, so the counts before and after a change compare like for like. The test suite runs
the same mutations through hypothesis (tests/fuzz/).
"""

from __future__ import annotations

import argparse
import collections
import os
import random
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.fuzz.inputs import (
    FRAGMENTS,
    LOADERS,
    SEEDS,
    Mutation,
    Outcome,
    mutate,
    run_loader,
)

OPS = ["insert", "insert", "append", "bytes", "overwrite", "delete", "truncate", "duplicate"]


def random_mutations(rng: random.Random) -> list[Mutation]:
    return [
        Mutation(
            op=rng.choice(OPS),
            at=rng.random(),
            span=rng.randint(0, 200),
            fragment=rng.randrange(len(FRAGMENTS) * 7),
            repeat=rng.randint(1, 3),
        )
        for _ in range(rng.randint(1, 4))
    ]


def corpus_outcomes(tmp: Path, cap: float) -> list[tuple[str, Outcome]]:
    """The stored nasty files and the big generated ones, through the loaders they reach."""
    from agentopt.core.files import load_eval_config
    from agentopt.datasets import load_dataset
    from agentopt.workflows.validate import validate_file
    from tests.fuzz.test_fuzz_cli import corpus_inputs

    folder = tmp / "corpus"
    folder.mkdir()
    out: list[tuple[str, Outcome]] = []
    for path in corpus_inputs(folder):
        loaders: list[Any] = [validate_file]
        if path.name.endswith(".eval.yaml"):
            loaders.append(load_eval_config)
        elif path.suffix in (".jsonl", ".json", ".csv"):
            loaders.append(lambda p: load_dataset(p, upgrade=False))
        out += [(path.name, run_loader("corpus", f, path, stop_s=cap)) for f in loaders]
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("n", nargs="?", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=14)
    parser.add_argument("--cap", type=float, default=10.0, help="CPU seconds = a hang")
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    loaders = LOADERS()
    kinds = sorted(SEEDS)
    failures: collections.Counter[str] = collections.Counter()
    hangs = tracebacks = calls = 0
    slowest = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.n):
            kind = kinds[i % len(kinds)]
            name, seed = SEEDS[kind]
            folder = Path(tmp) / f"in{i}"
            folder.mkdir()
            path = folder / name
            path.write_bytes(mutate(seed, random_mutations(rng)))
            for loader in loaders[kind]:
                outcome = run_loader(kind, loader, path, stop_s=args.cap)
                calls += 1
                slowest = max(slowest, outcome.cpu_s)
                if outcome.hung:
                    hangs += 1
                    failures[f"hang ({kind})"] += 1
                elif outcome.error:
                    tracebacks += 1
                    failures[f"{outcome.error.split(':')[0]} ({kind})"] += 1
                    if args.verbose:
                        print(f"  {kind} {path}: {outcome.error}", file=sys.stderr)
        corpus = corpus_outcomes(Path(tmp), args.cap)
    for what, count in failures.most_common():
        print(f"{count:6d}  {what}")
    bad = [(name, o) for name, o in corpus if o.hung or o.error]
    for name, o in bad:
        print(f"  corpus {name}: {'hang' if o.hung else o.error[:100]}")
    print(
        f"corpus {len({n for n, _ in corpus})} files, {len(corpus)} loader calls: tracebacks "
        f"{sum(1 for _, o in corpus if o.error)}, hangs {sum(1 for _, o in corpus if o.hung)}"
    )
    load = os.getloadavg()[0]
    print(
        f"inputs {args.n}, loader calls {calls}: tracebacks {tracebacks}, hangs {hangs} "
        f"(> {args.cap:g} CPU-s), slowest {slowest:.2f} CPU-s, load average {load:.1f}"
    )


if __name__ == "__main__":
    main()
