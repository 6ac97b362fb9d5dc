"""What the model-free rule proposer writes from judges' reasons as models word them (issue 31:
any judge wording): seeded jobs of 3–6 criteria, each failed 1–3 times with a reason drawn from
a set of templates ("Missing: {fact}.", "Off-topic.", "Fails criterion; {fact} omitted.", …),
once alone and once with a run elsewhere in the job whose answer passed each criterion. Each
rule is counted as holding its fact whole, holding part of it, or none of it (junk).

    python -m bench.rule_styles [--jobs 300]

Two template sets: the first was written with the fixes of 2026-12-06, the second after most of
them (its "Off-topic." and "Fails criterion;" cases then drove two more): neither is a held-out
set any more; they are here so a change's effect on the proposer's output is measured, not
guessed."""

from __future__ import annotations

import argparse
import random
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "optimize"))

from test_optimize_rule_styles import judged, rules_learned

from agentopt.workflows.optimize.strategies.base import NoProposal

JOBS = 300
FACTS = [
    ("returns", "45-day refund window"), ("shipping", "free shipping over $35"),
    ("damage", "photo of the damage"), ("hours", "9am to 6pm"),
    ("express", "1-2 business days"), ("warranty", "two-year warranty"),
    ("privacy", "data export"), ("orders", "order number"), ("cancel", "cancellation link"),
    ("tracking", "tracking link"), ("gift", "gift card balance"), ("repairs", "repair ticket"),
]  # fmt: skip
TEMPLATES = {
    "first": [
        "The response does not mention the {f}.", "Missing: {f}.", "It never states the {f}.",
        "The answer omits the {f}.", "No mention of the {f}.",
        "The reply fails to include the {f}, which the policy requires.",
        "Should have told the customer about the {f}.", "Left out: {f} (required by policy).",
        "The agent did not provide the {f}.", "Incomplete: the {f} is absent.",
        "The response lacks the {f}.",
        "The customer was not told about the {f}; the answer falls short.",
        "Does not say anything about the {f}.", "Not addressed.", "The response is too vague.",
        "Partially correct but the {f} is not mentioned.",
    ],
    "second": [
        "Response ignores the {f}.", "Key detail absent: {f}.",
        "The {f} should have been included.", "Unhelpful - it skips the {f}.",
        "There is no reference to the {f} anywhere.", "Correctness issue: {f} not communicated.",
        "The answer is generic and misses the {f}.", "Fails criterion; {f} omitted.",
        "Off-topic.", "The bot needed to share the {f}.",
        "Good tone, but the {f} is not stated.",
        "Wrong: gives a different policy instead of the {f}.",
    ],
}  # fmt: skip
_IGNORED = {"the", "of", "to", "over", "on"}


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9$]+", text.lower()) if w not in _IGNORED}


def _job(seed: int, templates: list[str], passed: bool) -> tuple[list[str], list[str]]:
    """The job's facts and the rules the proposer writes for it."""
    rng = random.Random(seed)
    facts = rng.sample(FACTS, rng.randint(3, 6))
    train, seen, n = [], [], 0
    for topic, fact in facts:
        for _ in range(rng.randint(1, 3)):
            why = rng.choice(templates).format(f=fact)
            train.append(judged(f"t{n}", topic, "Thanks for reaching out.", False, why))
            n += 1
        if passed:
            seen.append(judged(f"s{n}", topic, f"Sure, here is the {fact}.", True, "Correct."))
            n += 1
    try:
        rules = rules_learned(train, seen=seen)
    except NoProposal:
        rules = []
    return [fact for _, fact in facts], rules


def measure(jobs: int = JOBS) -> dict[tuple[str, bool], Counter[str]]:
    out: dict[tuple[str, bool], Counter[str]] = {}
    for name, templates in TEMPLATES.items():
        for passed in (False, True):
            counts: Counter[str] = Counter()
            for seed in range(jobs):
                facts, rules = _job(seed, templates, passed)
                for rule in rules:
                    said = _words(rule.split(":", 1)[-1])
                    hit = max(len(said & _words(f)) / len(_words(f)) for f in facts)
                    counts["whole" if hit >= 0.99 else "part" if hit > 0 else "junk"] += 1
            out[(name, passed)] = counts
    return out


def run(jobs: int = JOBS) -> list[dict[str, Any]]:
    rows = []
    for (name, passed), c in measure(jobs).items():
        rows.append(
            {
                "bench": "rule_styles",
                "case": f"{name} templates, {'with' if passed else 'without'} a passing answer",
                "value": f"{c['whole']} whole · {c['part']} part · {c['junk']} junk",
                "detail": f"{jobs} seeded jobs of 3–6 criteria, 1–3 failed reasons each",
            }
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.rule_styles", description=__doc__)
    parser.add_argument("--jobs", type=int, default=JOBS)
    args = parser.parse_args(argv)
    for row in run(args.jobs):
        print(f"{row['case']}: {row['value']}  ({row['detail']})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
