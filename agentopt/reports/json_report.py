"""results.json: the run's full record, written atomically (a crash never leaves half a file)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agentopt.contracts.run_results import RunResults
from agentopt.core.atomic import write_json_atomic

__all__ = ["results_to_dict", "write_results_json"]


def results_to_dict(results: RunResults) -> dict[str, Any]:
    """The JSON-able dict, keys in contract order, unknown keys from newer files kept."""
    return results.model_dump(mode="json")


def write_results_json(path: Path, results: RunResults) -> None:
    """Write results.json atomically (temp file, fsync, rename)."""
    write_json_atomic(Path(path), results_to_dict(results))
