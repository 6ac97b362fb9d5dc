"""Which strategy proposes next: round-robin over the targets, and inside a target the
strategies that fail screening least."""

from __future__ import annotations

from dataclasses import dataclass, field

from agentopt.workflows.optimize.strategies.base import Strategy


@dataclass
class Rotation:
    """Round-robin over targets, and inside a target its strategies alternate — except that a
    strategy whose proposals keep failing screening (or proposing nothing) yields its turns to
    one that fails less, across targets too: a proposer that cannot help on this dataset (the
    rule proposer when the judges do not say what is missing, the toolset proposer when every
    tool is used) stops spending screening calls. One more failure than the best is
    tolerated, so a strategy that failed once is not dropped for good."""

    targets: list[str]
    strategies: dict[str, list[Strategy]]
    turn: int = 0
    uses: dict[str, int] = field(default_factory=dict)
    exhausted: set[str] = field(default_factory=set)
    failures: dict[str, int] = field(default_factory=dict)
    """Consecutive failed screenings (or empty proposals) per strategy name."""

    def _options(self, target: str, model_left: bool) -> list[Strategy]:
        if target == "model" and not model_left:
            return []
        return [s for s in self.strategies.get(target, []) if s.name not in self.exhausted]

    def next(self, model_left: bool) -> Strategy | None:
        available = {t: o for t in self.targets if (o := self._options(t, model_left))}
        if not available:
            return None
        fewest = min(self.failures.get(s.name, 0) for o in available.values() for s in o)
        for k in range(len(self.targets)):
            target = self.targets[(self.turn + k) % len(self.targets)]
            live = [
                s for s in available.get(target, []) if self.failures.get(s.name, 0) <= fewest + 1
            ]
            if not live:
                continue
            used = self.uses.get(target, 0)
            self.uses[target] = used + 1
            self.turn += k + 1
            return live[used % len(live)]
        return None

    def record(self, strategy: str, success: bool) -> None:
        self.failures[strategy] = 0 if success else self.failures.get(strategy, 0) + 1
