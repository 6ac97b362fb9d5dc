"""Dataset and evaluator version strings, as azd and Foundry write them.

Foundry versions are strings. agentopt's own registry mints "1", "2", …; azd's dataset client
mints "1.0" and bumps it to "2.0" (`NextVersion`, cli/azd/extensions/azure.ai.agents/internal/
pkg/agents/dataset_api/models.go in Azure/azure-dev), and a project may hold versions a person
typed ("v3", "2024-06"). All of them are read, compared and written the same way here:

- any string of letters, digits, '.', '_' or '-' starting with a letter or digit is a version
  (it is part of a file name: `<name>.v<version>.<ext>`);
- two versions are the same when their strings are, or when both are decimal numbers of the
  same value ("1" is "1.0": an eval.yaml azd wrote pins "1.0" of what agentopt registered as
  "1");
- versions sort by their number when they have one, then by their trailing digits;
- the next version keeps the style of the latest: "1" → "2", "1.0" → "2.0", "v3" → "v4",
  anything else gets ".1" appended (azd's rules for the last two).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

VERSION_RE = re.compile(r"^[0-9A-Za-z][0-9A-Za-z._-]{0,63}$")
FIRST_VERSION = "1"
_DECIMAL = re.compile(r"^[0-9]+(\.[0-9]+)?$")
_TRAILING = re.compile(r"^(?P<prefix>.*?)(?P<digits>[0-9]+)$")


def version_problem(value: object) -> str | None:
    """Why `value` is not a version (None when it is one)."""
    text = str(value) if isinstance(value, int | float | str) and value is not True else None
    if text is not None and text.strip().lower() == "latest":
        return 'expected a version like "1" or "1.0" (leave it out for the latest), found "latest"'
    if text is None or not VERSION_RE.match(text):
        shown = repr(value) if not isinstance(value, str) else f'"{value}"'
        shown = shown if len(shown) <= 40 else shown[:37] + "..."  # a fuzzed key can be huge
        return (
            'expected a version like "1" or "1.0" (letters, digits, ".", "_" or "-"), '
            f"found {shown}"
        )
    return None


def same_version(a: str | None, b: str | None) -> bool:
    """Whether two versions name the same one ("1" and "1.0" do)."""
    if a is None or b is None:
        return a is b
    if a == b:
        return True
    return bool(_DECIMAL.match(a) and _DECIMAL.match(b)) and float(a) == float(b)


def find_version(versions: Iterable[str], wanted: str) -> str | None:
    """The one of `versions` that `wanted` names (exactly, else by number), or None."""
    known = list(versions)
    if wanted in known:
        return wanted
    return next((v for v in known if same_version(v, wanted)), None)


def version_key(version: str) -> tuple[int, float, str, int]:
    """Sort key: numbers by value, then strings with trailing digits by them, then the rest."""
    if _DECIMAL.match(version):
        return (0, float(version), "", 0)
    match = _TRAILING.match(version)
    if match:
        return (1, 0.0, match["prefix"], int(match["digits"]))
    return (2, 0.0, version, 0)


def latest_version(versions: Iterable[str]) -> str | None:
    """The highest of `versions` (None when there is none)."""
    return max(versions, key=version_key, default=None)


def next_version(latest: str | None) -> str:
    """The version after `latest`, in its style (`FIRST_VERSION` when there is none)."""
    if not latest:
        return FIRST_VERSION
    if _DECIMAL.match(latest):
        whole = int(float(latest)) + 1
        return str(whole) if "." not in latest else f"{whole}.0"
    match = _TRAILING.match(latest)
    if match:
        return f"{match['prefix']}{int(match['digits']) + 1}"
    return f"{latest}.1"
