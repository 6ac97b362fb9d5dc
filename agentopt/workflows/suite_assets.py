"""The registered versions an eval.yaml pins, checked before anything runs.

`eval run` and `optimize` read a suite's working copies (`local_uri`) when it has them, but the
suite also pins registered versions; a pinned version file edited by hand means the registry
no longer says what the suite was built from, so the run stops (exit 2) naming the file and
saying to run `agentopt eval update`, instead of scoring against an untracked edit.
"""

from __future__ import annotations

from pathlib import Path

from agentopt.core.errors import ConfigError
from agentopt.core.files import bounded
from agentopt.core.files.eval_yaml import DatasetRef, EvalConfig
from agentopt.core.paths import REGISTRY_DIR
from agentopt.registry import INDEX_FILE, Registry

DATASET_SECTIONS = ("dataset", "validation_dataset", "test_dataset")


def dataset_path(project: Path, ref: DatasetRef, where: str, key: str = "dataset") -> Path:
    """The file a suite's dataset entry names: its `local_uri`, or the registered version of
    its `name`. A `local_uri` with nothing there is an error naming the suite file and the
    key (the loader would name only the path it was given)."""
    if ref.local_uri is not None:
        if not bounded.exists(ref.local_uri):
            raise ConfigError.at(
                where,
                f"{key}.local_uri",
                f"expected a dataset file or folder, found nothing at {ref.local_uri}",
            )
        return ref.local_uri
    if ref.name:
        return Registry(project).lookup("datasets", ref.name, ref.version)
    raise ConfigError.at(where, key, "expected `local_uri` or `name` (and `version`)")


def find_project_dir(config_path: Path) -> Path:
    """The folder holding `.azure/.foundry/` at or above eval.yaml (else eval.yaml's folder)."""
    start = config_path.resolve().parent
    for folder in (start, *start.parents):
        if (folder / REGISTRY_DIR / INDEX_FILE).is_file():
            return folder
    return start


def verify_pinned_assets(config: EvalConfig, project_dir: Path | None = None) -> None:
    """Raise InputError for the first pinned dataset or evaluator version whose file no
    longer matches its sha256; names the registry does not hold are left to the loaders."""
    if project_dir is None:
        if config.path is None:
            return
        project_dir = find_project_dir(Path(config.path))
    registry = Registry(project_dir)
    if not registry.index_path.is_file():
        return
    for key in DATASET_SECTIONS:
        ref = getattr(config, key)
        if ref is not None and ref.name and ref.name in registry.names("datasets"):
            registry.lookup("datasets", ref.name, ref.version)
    for entry in config.evaluators:
        if entry.name in registry.names("evaluators"):
            registry.lookup("evaluators", entry.name, entry.version)
