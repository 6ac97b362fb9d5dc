"""agentopt.registry — versioned datasets and evaluators under `.azure/.foundry/` (files.md §6).

`Registry(project_dir).register_dataset(name, bytes, source)`, `.register_evaluator(name,
spec_or_yaml, source)` and `.register_rubric(name, dimensions, source)` add a version only when
the content hash changed and return `(version, changed)`; `.latest`, `.lookup`, `.versions`,
`.entry`, `.read_evaluator` read — every read checks the file against its sha256 and refuses
a hand-edited one; `.verify()` lists every such file, `.edited_versions` those of one name.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentopt.core.exports import lazy_exports

if TYPE_CHECKING:
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

_HOMES = {
    "content_sha256": "agentopt.registry.hashing",
    "dataset_sha256": "agentopt.registry.hashing",
    "evaluator_sha256": "agentopt.registry.hashing",
    "KINDS": "agentopt.registry.names",
    "AssetKind": "agentopt.registry.names",
    "check_name": "agentopt.registry.names",
    "dataset_copy_path": "agentopt.registry.names",
    "default_dataset_name": "agentopt.registry.names",
    "default_evaluator_name": "agentopt.registry.names",
    "rubric_copy_path": "agentopt.registry.names",
    "version_file_name": "agentopt.registry.names",
    "INDEX_FILE": "agentopt.registry.store",
    "TAMPER_HINT": "agentopt.registry.store",
    "Registered": "agentopt.registry.store",
    "Registry": "agentopt.registry.store",
    "VersionEntry": "agentopt.registry.store",
}

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

__getattr__ = lazy_exports(__name__, _HOMES)
