"""The base of every agentopt pydantic model: its validator is built on first use, not at import.

A command imports the models of every record, file and option it might meet; an `eval run`
defines about 110 and uses fewer than half. Pydantic builds a model's validator and serializer
when the class is created, 1–3 ms each, so the models a command never touches cost it about
0.1 s before its first request (and `eval validate`, `--help` alike). With `defer_build` a
model is built the first time it validates or dumps, exactly as it would have been at import.

Pydantic ≥ 2.14 builds a deferred model under one lock (`model_rebuild`), so two threads that
first use a model at once (the loop and a writer thread) never see a half-built one; hence the
floor in pyproject.toml. `build` builds models ahead of their first use, where a command
knows it has time to spare (a run builds its summary's models while its calls are out).
"""

from __future__ import annotations

import threading

from pydantic import BaseModel, ConfigDict


class LazyModel(BaseModel):
    """A pydantic model whose validator and serializer are built on first use."""

    model_config = ConfigDict(defer_build=True)


def build(*models: type[BaseModel]) -> None:
    """Build each model not built yet."""
    for model in models:
        if not model.__pydantic_complete__:
            model.model_rebuild()


def build_in_background(*models: type[BaseModel]) -> threading.Thread:
    """`build` on a daemon thread (the process need not wait for it to end)."""
    thread = threading.Thread(target=build, args=models, name="agentopt-models", daemon=True)
    thread.start()
    return thread
