"""How fast a model runs on this machine, measured on every call and remembered with the
server's other capabilities (the cache's `capabilities` table): the deadlines of slow models
(`deadlines.py`) start from this machine's figures rather than the pessimistic assumption."""

from __future__ import annotations

from typing import Any

SPEED = "speed"
"""The capability-memory feature holding a model's measured speed ("gen=12.5 prompt=80")."""
ASSUMED_SPEED: dict[str, tuple[float, float]] = {"local": (4.0, 20.0)}
"""(generation, prompt) tokens/s assumed before anything is measured: pessimistic on purpose
(SmolLM2-135M measured 40 and 55–90 on one idle thread here, a third of that at load 9+)."""
ASSUMED_SERVER_SPEED = (2.0, 20.0)
"""The same for a self-hosted server, whose model may be far larger than the embedded one."""
EWMA = 0.3
"""Weight of the newest measurement: the machine's load moves, the memory follows it."""


class SpeedMemory:
    """How fast one model runs on this machine: output tokens/s and prompt tokens/s.

    Measured on every call (streamed calls split prompt reading from generation; others give
    output tokens over latency), kept as a moving average, and remembered with the server's
    other capabilities (the `capabilities` table of the cache), so the next command starts
    from this machine's figures rather than the pessimistic assumption.
    """

    def __init__(self, provider_type: str, key: tuple[str, str, str], store: Any) -> None:
        self.key = key
        self._store = store
        self.generation, self.prompt = ASSUMED_SPEED.get(provider_type, ASSUMED_SERVER_SPEED)
        self.measured = False
        self._saved: tuple[float, float] | None = None
        self._loaded = False

    async def load(self) -> None:
        if self._loaded:
            return
        self._loaded = True
        found = await self._store.get_capabilities(*self.key) if self._store is not None else {}
        parsed = _parse_speed(found.get(SPEED, ""))
        if parsed is not None:
            self.generation, self.prompt = parsed
            self.measured = True
            self._saved = parsed

    def observe(self, *, generation: float | None, prompt: float | None) -> None:
        """Fold in one call's figures (None: not measured by this call)."""
        if generation and generation > 0:
            self.generation = _blend(self.generation, generation, self.measured)
        if prompt and prompt > 0:
            self.prompt = _blend(self.prompt, prompt, self.measured)
        self.measured = self.measured or bool(generation or prompt)

    async def save(self) -> None:
        """Remember the figures when they moved by more than a tenth since last saved."""
        now = (round(self.generation, 2), round(self.prompt, 2))
        if self._store is None or not self.measured:
            return
        if self._saved and all(
            abs(a - b) <= 0.1 * b for a, b in zip(now, self._saved, strict=True)
        ):
            return
        self._saved = now
        await self._store.put_capability(
            *self.key, SPEED, f"gen={now[0]} prompt={now[1]}", "measured on this machine"
        )

    def seconds(self, prompt_tokens: int, output_tokens: int) -> float:
        """Time a call of this size takes at the remembered speed."""
        return prompt_tokens / self.prompt + output_tokens / self.generation


def _blend(old: float, new: float, measured: bool) -> float:
    return new if not measured else (1 - EWMA) * old + EWMA * new


def _parse_speed(text: str) -> tuple[float, float] | None:
    try:
        parts = dict(p.split("=", 1) for p in text.split())
        gen, prompt = float(parts["gen"]), float(parts["prompt"])
    except (KeyError, ValueError):
        return None
    return (gen, prompt) if gen > 0 and prompt > 0 else None
