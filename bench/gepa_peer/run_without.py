"""agentopt's optimizer on one benchmark world with parts of its per-call work taken out: a
what-if for `bench/tool_wall_what_if.py`, never a way to run agentopt.

    python -m bench.gepa_peer.run_without PARTS config.json result.json

PARTS is `none` or a comma-separated list of:
- `cache`: no response cache (spec optimizer.md §3: "every model call goes through the
  cache"), so no key, lookup or stored row per call, and repeated requests are sent again;
- `journal`: no journal line per unit and no job.json / report.html saves (what `--resume`
  replays and `optimize status` reads);
- `folders`: no `candidates/<id>/` folder per candidate (what `apply` copies).

Everything else is `run_agentopt.py`'s, clock included. The result's leak columns read the
candidates' folders; without them they are empty (the what-if measures time only).
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agentopt.workflows.optimize import journal, state
from bench.gepa_peer import run_agentopt as base

PARTS = ("cache", "journal", "folders")


def take_out(parts: set[str]) -> None:
    """Replace the parts named by no-ops, in this process only."""
    unknown = parts - set(PARTS)
    if unknown:
        raise SystemExit(f"run_without: unknown part(s) {sorted(unknown)}; known: {PARTS}")
    if "cache" in parts:
        prepare = base.prepare_optimize

        def without_cache(*args: Any, **kwargs: Any) -> Any:
            prepared = prepare(*args, **kwargs)
            settings = prepared.call_settings.model_copy(update={"cache_enabled": False})
            return dataclasses.replace(prepared, call_settings=settings)

        base.prepare_optimize = without_cache  # type: ignore[assignment]
    if "journal" in parts:
        journal.JobStore.append = lambda self, entry: None  # type: ignore[method-assign]
        state.JobContext.save = lambda self, **kw: None  # type: ignore[method-assign]
    if "folders" in parts:

        def no_folder(self: journal.JobStore, cand_id: str, definition: Any) -> Callable[[], Path]:
            folder = self.candidate_dir(cand_id)
            return lambda: folder

        journal.JobStore.candidate_writer = no_folder  # type: ignore[method-assign]
        texts = base.texts
        base.texts = lambda folder: texts(folder) if folder.is_dir() else []


def main(argv: list[str]) -> int:
    spec, config_path, result_path = argv
    take_out(set() if spec == "none" else set(spec.split(",")))
    return base.main(config_path, result_path)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
