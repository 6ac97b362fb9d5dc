"""agentopt.datasets: every dataset shape (Foundry task JSONL, M365 eval documents, legacy M365
prompt files, CSV, ad-hoc prompts) loads into one task model (`Task`, `Turn`, `Dataset`).

Use `load_dataset(path)` to load, `validate_dataset(path)` to list problems without raising,
`discover_dataset(cwd)` to find an M365 file when none is given, and `dump_tasks_jsonl(tasks)`
to write canonical JSONL.
"""

from agentopt.contracts.task import Criterion, Dataset, EvaluatorRef, LegacyUpgrade, Task, Turn
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
