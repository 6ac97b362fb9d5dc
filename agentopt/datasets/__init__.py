"""agentopt.datasets: every dataset shape (Foundry task JSONL, M365 eval documents, legacy M365
prompt files, CSV, ad-hoc prompts) loads into one task model (`Task`, `Turn`, `Dataset`).

Use `load_dataset(path)` to load, `validate_dataset(path)` to list problems without raising,
`discover_dataset(cwd)` to find an M365 file when none is given, and `dump_tasks_jsonl(tasks)`
to write canonical JSONL.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentopt.core.exports import lazy_exports

if TYPE_CHECKING:
    from agentopt.contracts import Criterion, Dataset, EvaluatorRef, LegacyUpgrade, Task, Turn
    from agentopt.core.files.m365_schemas import newest_known_version, official_schema, schema_for
    from agentopt.datasets.adhoc import dataset_from_prompts
    from agentopt.datasets.discovery import (
        DISCOVERY_NAMES,
        STARTER_QUESTION,
        STARTER_RELATIVE_PATH,
        discover_dataset,
        discovery_candidates,
        starter_document,
        write_starter_file,
    )
    from agentopt.datasets.load import load_dataset, resolve_dataset_path, validate_dataset
    from agentopt.datasets.m365 import TOLERATED_ITEM_KEYS, TOLERATED_ROOT_KEYS
    from agentopt.datasets.writer import dump_tasks_jsonl, task_to_record

_HOMES = {
    # The task model: from the contracts package, which alone says where each record lives.
    "Criterion": "agentopt.contracts",
    "Dataset": "agentopt.contracts",
    "EvaluatorRef": "agentopt.contracts",
    "LegacyUpgrade": "agentopt.contracts",
    "Task": "agentopt.contracts",
    "Turn": "agentopt.contracts",
    "newest_known_version": "agentopt.core.files.m365_schemas",
    "official_schema": "agentopt.core.files.m365_schemas",
    "schema_for": "agentopt.core.files.m365_schemas",
    "dataset_from_prompts": "agentopt.datasets.adhoc",
    "DISCOVERY_NAMES": "agentopt.datasets.discovery",
    "STARTER_QUESTION": "agentopt.datasets.discovery",
    "STARTER_RELATIVE_PATH": "agentopt.datasets.discovery",
    "discover_dataset": "agentopt.datasets.discovery",
    "discovery_candidates": "agentopt.datasets.discovery",
    "starter_document": "agentopt.datasets.discovery",
    "write_starter_file": "agentopt.datasets.discovery",
    "load_dataset": "agentopt.datasets.load",
    "resolve_dataset_path": "agentopt.datasets.load",
    "validate_dataset": "agentopt.datasets.load",
    "TOLERATED_ITEM_KEYS": "agentopt.datasets.m365",
    "TOLERATED_ROOT_KEYS": "agentopt.datasets.m365",
    "dump_tasks_jsonl": "agentopt.datasets.writer",
    "task_to_record": "agentopt.datasets.writer",
}

__all__ = [
    "DISCOVERY_NAMES",
    "STARTER_QUESTION",
    "STARTER_RELATIVE_PATH",
    "TOLERATED_ITEM_KEYS",
    "TOLERATED_ROOT_KEYS",
    "Criterion",
    "Dataset",
    "EvaluatorRef",
    "LegacyUpgrade",
    "Task",
    "Turn",
    "dataset_from_prompts",
    "discover_dataset",
    "discovery_candidates",
    "dump_tasks_jsonl",
    "load_dataset",
    "newest_known_version",
    "official_schema",
    "resolve_dataset_path",
    "schema_for",
    "starter_document",
    "task_to_record",
    "validate_dataset",
    "write_starter_file",
]

__getattr__ = lazy_exports(__name__, _HOMES)
