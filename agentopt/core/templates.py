"""The jinja2 environments over the prompt templates (`templates/<group>/*.j2`): plain text,
strict about undefined variables, one environment per group, built once.

Compiled templates are kept on disk beside the templates (`templates/__pycache__/`), as Python
keeps compiled modules: compiling the seven templates of an optimizer run took 28 ms of a
process's time (parse, code generation, `compile()`), loading them back takes well under
1 ms. The cache is written only where Python would write `.pyc` files (not under
`PYTHONDONTWRITEBYTECODE` / `-B`, not in a read-only install), in agentopt's installation
beside its templates, as the `.pyc` files are: nothing is written to the agent project.
"""

from __future__ import annotations

import hashlib
import os
import sys
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentopt.core.paths import templates_dir

if TYPE_CHECKING:
    from jinja2 import Environment
    from jinja2.bccache import Bucket

ENVIRONMENT_OPTIONS: dict[str, Any] = {
    # The templates ship with agentopt and do not change while it runs: no stat of the
    # file on every render (and every {% include %}) to see whether it did (495 renders
    # of an optimizer run spent 65 ms there).
    "auto_reload": False,
    "autoescape": False,
    "keep_trailing_newline": True,
    "trim_blocks": True,
    "lstrip_blocks": True,
}


@cache
def prompt_environment(group: str) -> Environment:
    """The environment of `templates/<group>/` (judges, generate, optimizer)."""
    # jinja2 (30 ms to import) loads with the first template, not with every command.
    from jinja2 import Environment, FileSystemLoader, StrictUndefined

    root = templates_dir()
    return Environment(
        loader=FileSystemLoader(str(root / group)),
        undefined=StrictUndefined,
        bytecode_cache=compiled_template_cache(root / "__pycache__"),
        **ENVIRONMENT_OPTIONS,
    )


def compiled_template_cache(directory: Path) -> Any:
    """A jinja2 bytecode cache in `directory` that never fails a render: an unreadable or
    damaged entry is compiled again, an entry that cannot be written is skipped."""
    import jinja2
    from jinja2.bccache import FileSystemBytecodeCache

    fingerprint = f"{jinja2.__version__}|{sorted(ENVIRONMENT_OPTIONS.items())}"

    class CompiledTemplates(FileSystemBytecodeCache):
        def get_cache_key(self, name: str, filename: str | None = None) -> str:
            # The generated code depends on the jinja version and the environment's options,
            # which jinja's own key (name and path) and checksum (the source) leave out.
            text = f"{name}|{filename or ''}|{fingerprint}"
            return hashlib.sha1(text.encode("utf-8")).hexdigest()

        def load_bytecode(self, bucket: Bucket) -> None:
            try:
                super().load_bytecode(bucket)
            except Exception:  # whatever the bytes: compile from the source
                bucket.reset()

        def dump_bytecode(self, bucket: Bucket) -> None:
            if sys.dont_write_bytecode:
                return
            try:
                os.makedirs(self.directory, exist_ok=True)
                super().dump_bytecode(bucket)
            except OSError:
                pass  # a read-only install renders as before, compiling each time

    return CompiledTemplates(str(directory), pattern="jinja2-%s.cache")
