"""Layers import only downward (style.md, docs/architecture.md): every `import` in agentopt/,
read with `ast` (imports inside functions included), goes to the module's own package or to a
package of a lower layer of the map in docs/architecture.md — never upward, never sideways. A
top-level module the map names (the `plugins.py` facade) is a layer of its own, so nothing below
it may import it."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

PACKAGE = Path(__file__).parents[1] / "agentopt"
DOC = Path(__file__).parents[1] / "docs" / "architecture.md"
ROW = re.compile(r"^\| (\d+) \| `(\w+)(?:/|\.py)` \|", re.M)
ENTRY_MODULES = {"__init__", "__main__"}
"""Top-level modules outside the map: the package itself and `python -m agentopt`."""


@dataclass(frozen=True)
class Violation:
    module: str
    line: int
    imported: str
    why: str

    def __str__(self) -> str:
        return f"{self.module}:{self.line} imports {self.imported} ({self.why})"


def layer_map() -> dict[str, int]:
    """Package (or top-level module) → layer, from the table of docs/architecture.md."""
    return {package: int(layer) for layer, package in ROW.findall(DOC.read_text("utf-8"))}


def imports_of(path: Path, root: Path) -> list[tuple[int, str]]:
    """(line, absolute module name) of every agentopt import in one file."""
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    here = parts if path.name == "__init__.py" else parts[:-1]
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here[: len(here) - node.level + 1]
                name = ".".join([*base, *([node.module] if node.module else [])])
            else:
                name = node.module or ""
            found.append((node.lineno, name))
    return [(line, name) for line, name in found if name.split(".")[0] == root.name]


def violations(root: Path, layers: dict[str, int]) -> list[Violation]:
    """Every import in `root` that goes up or sideways (or into a package the map lacks)."""
    out: list[Violation] = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root)
        if len(rel.parts) > 1:
            source: str | None = rel.parts[0]
        else:  # a top-level module: the facades the map names; the package's entry modules
            source = None if rel.stem in ENTRY_MODULES else rel.stem
        for line, name in imports_of(path, root):
            target = name.split(".")[1] if "." in name else None
            if target is None or target == source or source is None:
                continue
            module = str(rel)
            if source not in layers or target not in layers:
                missing = source if source not in layers else target
                out.append(Violation(module, line, name, f"'{missing}' is not in the layer map"))
            elif layers[target] > layers[source]:
                out.append(Violation(module, line, name, f"upward: {source} → {target}"))
            elif layers[target] == layers[source]:
                out.append(Violation(module, line, name, f"sideways: {source} → {target}"))
    return out


def test_the_map_names_every_package() -> None:
    packages = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()}
    modules = {p.stem for p in PACKAGE.glob("*.py")} - ENTRY_MODULES
    assert set(layer_map()) == packages | modules
    assert layer_map()["plugins"] > max(layer_map()[p] for p in packages)  # above every layer


def test_no_import_goes_up_or_sideways() -> None:
    found = violations(PACKAGE, layer_map())
    assert found == [], "\n".join(map(str, found))


def test_the_checker_sees_upward_sideways_and_lazy_imports(tmp_path: Path) -> None:
    root = tmp_path / "agentopt"
    files = {
        "__init__.py": "from agentopt.core import x\n",
        "core/__init__.py": "",
        "core/a.py": "def f():\n    from agentopt.models import y\n",
        "models/__init__.py": "from . import b\n",
        "models/b.py": "from ..core import a\nimport agentopt.agents.c\n",
        "agents/__init__.py": "",
        "agents/c.py": "from agentopt.reports.d import z\n",
        "reports/__init__.py": "",
        "reports/d.py": "from agentopt.models.b import q\n",
        "reports/e.py": "import agentopt.plugins\n",
        "plugins.py": "from agentopt.reports.d import z\n",
    }
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    layers = {"core": 1, "models": 3, "agents": 4, "reports": 4, "plugins": 7}
    assert sorted(str(v) for v in violations(root, layers)) == [
        "agents/c.py:1 imports agentopt.reports.d (sideways: agents → reports)",
        "core/a.py:2 imports agentopt.models (upward: core → models)",
        "models/b.py:2 imports agentopt.agents.c (upward: models → agents)",
        "reports/e.py:1 imports agentopt.plugins (upward: reports → plugins)",
    ]
