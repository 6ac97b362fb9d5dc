"""Which module registers each built-in evaluator spelling, so that looking up a built-in name
imports that one module, not all of them and every installed plugin.

The first lookup used to import the 12 built-in modules and scan every installed distribution
for entry points, almost always for one or two evaluators: 21–26 ms of each `eval run` and
`optimize` on this machine, 4–5 ms with the index (`builtin.task_adherence`, a fresh process
after the optimizer's imports; reading the index takes 1–1.5 ms of that). The index is read from
the modules' source, not kept by hand:
a built-in still registers with its `@evaluator("name", aliases=[...])` (or `@judge(...)`)
decorator alone, and adding one is still one new file (style.md rule 11). The decorator's name
and aliases must be string literals (`m365=True` stands for the alias `m365_names` gives);
`tests/evaluators/test_evaluators_builtin_index.py` checks the index against what the modules
register, both ways. Built-in spellings are reserved: a plugin that registers
one is refused (`registry.evaluator`), so a lookup never needs the plugins to answer them.
Without the sources (an install that ships bytecode only) the index is empty and every lookup
loads everything, as before.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

PACKAGES = ("deterministic", "judges")
"""The built-ins' home packages under `agentopt.evaluators` (as the registry's)."""

_DECORATOR = re.compile(
    r'^@(?:evaluator|judge)\(\s*"(?P<name>[^"]+)"(?P<rest>.*?)^(?:class|def|async def) ',
    re.MULTILINE | re.DOTALL,
)
_ALIASES = re.compile(r"aliases=\[(?P<items>[^\]]*)\]")
_STRING = re.compile(r'"([^"]+)"')


def m365_names(name: str) -> tuple[str, str]:
    """The alias and score key M365 gives a built-in evaluator: `builtin.exact_match` is its
    `ExactMatch`, scored under `exactMatch`."""
    words = name.removeprefix("builtin.").split("_")
    alias = "".join(w.capitalize() for w in words)
    return alias, alias[:1].lower() + alias[1:]


@cache
def builtin_modules() -> dict[str, str]:
    """Lower-cased canonical names, short forms (`exact_match`) and aliases → the module under
    `agentopt.evaluators` that registers them (`deterministic.exact_match`)."""
    home = Path(__file__).parent
    index: dict[str, str] = {}
    for package in PACKAGES:
        for path in sorted((home / package).glob("*.py")):
            text = path.read_text(encoding="utf-8")
            if "@evaluator(" not in text and "@judge(" not in text:
                continue
            module = f"{package}.{path.stem}"
            for found in _DECORATOR.finditer(text):
                name = found["name"]
                aliases = _ALIASES.search(found["rest"])
                spellings = [name, *(_STRING.findall(aliases["items"]) if aliases else [])]
                if "m365=True" in found["rest"]:
                    spellings.append(m365_names(name)[0])
                if name.startswith("builtin."):
                    spellings.append(name.removeprefix("builtin."))
                for spelling in spellings:
                    index[spelling.lower()] = module
    return index
