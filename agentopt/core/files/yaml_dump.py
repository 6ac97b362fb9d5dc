"""The PyYAML writer behind `yaml_source.dump_yaml`, imported only when a file is written."""

from __future__ import annotations

from typing import Any

import yaml


class _Dumper(yaml.SafeDumper):
    """Readable YAML for files people review: multi-line strings as `|` blocks, and strings
    that would read back as another type (`"1"`, `"2026-11-29"`) in double quotes."""


def _str_representer(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style: str | None = None
    if "\n" in value:
        style = "|"
    elif dumper.resolve(yaml.ScalarNode, value, (True, False)) != "tag:yaml.org,2002:str":
        style = '"'
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str_representer)


def dump(data: Any) -> str:
    """YAML text in the given key order (see `_Dumper`)."""
    return yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100)
