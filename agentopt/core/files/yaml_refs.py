"""`$ref` includes in azd YAML files: `{$ref: ./file.yaml, other: keys}` is replaced by the
referenced file's content (sibling keys win), resolved relative to the file that holds the
`$ref`, recursively, with a cycle guard."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agentopt.core.errors import ConfigError, InputError
from agentopt.core.files import bounded
from agentopt.core.files.problems import KeyPath, describe, format_path
from agentopt.core.files.yaml_source import load_json, load_yaml, read_text

REF_KEY = "$ref"
BASE_KEY = "$base"
"""Added to a mapping that came from a referenced file: the folder its relative paths use."""


def resolve_refs(
    node: Any, holder: Path, path: KeyPath = (), *, _stack: tuple[Path, ...] = ()
) -> Any:
    """Return `node` with every `$ref` replaced by the referenced content.

    Args:
        node: parsed YAML data.
        holder: the file `node` was read from (refs resolve against its folder).
        path: key path of `node` inside `holder`, for error messages.

    Raises:
        ConfigError: a referenced file is missing or unreadable, or refs form a cycle.
    """
    stack = _stack or (holder.resolve(),)
    if isinstance(node, list):
        return [resolve_refs(v, holder, (*path, i), _stack=stack) for i, v in enumerate(node)]
    if not isinstance(node, dict):
        return node
    siblings = {
        k: resolve_refs(v, holder, (*path, k), _stack=stack)
        for k, v in node.items()
        if k != REF_KEY
    }
    if REF_KEY not in node:
        return siblings
    ref = node[REF_KEY]
    where = format_path((*path, REF_KEY))
    if not isinstance(ref, str) or not ref.strip():
        raise ConfigError.at(
            str(holder), where, f"expected a relative file path, found {describe(ref)}"
        )
    target = (holder.parent / ref).resolve()
    if target in stack:
        chain = " → ".join(p.name for p in (*stack, target))
        raise ConfigError.at(str(holder), where, f"$ref cycle: {chain}")
    if not bounded.is_file(target):
        raise ConfigError.at(
            str(holder), where, f'$ref file "{ref}" not found (looked for {target})'
        )
    content = _load(target)
    content = resolve_refs(content, target, (), _stack=(*stack, target))
    if isinstance(content, dict):
        merged = {BASE_KEY: str(target.parent), **content, **siblings}
        return merged
    if siblings:
        raise ConfigError.at(
            str(holder), where, f"$ref file {ref} holds {describe(content)}; cannot add keys to it"
        )
    return content


def _load(target: Path) -> Any:
    try:
        suffix = target.suffix.lower()
        if suffix in (".yaml", ".yml"):
            return load_yaml(target)[0]
        if suffix == ".json":
            return load_json(target)
        return read_text(target)
    except ConfigError:
        raise
    except InputError as exc:
        raise ConfigError(problems=exc.problems) from None
