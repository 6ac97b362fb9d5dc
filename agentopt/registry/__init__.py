"""agentopt.registry — versioned datasets and evaluators under `.azure/.foundry/` (files.md §6).

`Registry(project_dir).register_dataset(name, bytes, source)`, `.register_evaluator(name,
spec_or_yaml, source)` and `.register_rubric(name, dimensions, source)` add a version only when
the content hash changed and return `(version, changed)`; `.latest`, `.lookup`, `.versions`,
`.entry`, `.read_evaluator` read — every read checks the file against its sha256 and refuses
a hand-edited one; `.verify()` lists every such file, `.edited_versions` those of one name.
"""

from agentopt.registry.hashing import content_sha256, dataset_sha256, evaluator_sha256
from agentopt.registry.names import (
    KINDS,
    AssetKind,
    check_name,
    dataset_copy_path,
    default_dataset_name,
    default_evaluator_name,
    rubric_copy_path,
    version_file_name,
)
from agentopt.registry.store import INDEX_FILE, TAMPER_HINT, Registered, Registry, VersionEntry

__all__ = [
    "INDEX_FILE",
    "KINDS",
    "TAMPER_HINT",
    "AssetKind",
    "Registered",
    "Registry",
    "VersionEntry",
    "check_name",
    "content_sha256",
    "dataset_copy_path",
    "dataset_sha256",
    "default_dataset_name",
    "default_evaluator_name",
    "evaluator_sha256",
    "rubric_copy_path",
    "version_file_name",
]
