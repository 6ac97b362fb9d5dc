"""`agentopt.plugins` is the one public surface for extensions (issue 39 item 3): the code of
docs/extending.md and every plugin the tests define import agentopt only through it, and what it
exports is the very registration path the built-ins use."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

import agentopt.plugins as plugins
from tests.conftest import REPO

DOC = REPO / "docs" / "extending.md"
PYTHON_BLOCK = re.compile(r"```python[^\n]*\n(.*?)```", re.S)
REGISTRATIONS = {"register_provider", "register_evaluator", "register_target", "register_strategy"}
PRIVATE_DECORATORS = {"evaluator"}
"""The built-ins' own name for `register_evaluator`: a plugin never uses it."""


def agentopt_imports(tree: ast.AST) -> list[tuple[str, str]]:
    """(module, name) of every agentopt import (`import agentopt.x` gives (module, ""))."""
    found: list[tuple[str, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "agentopt":
            found += [(node.module or "", alias.name) for alias in node.names]
        elif isinstance(node, ast.Import):
            found += [(a.name, "") for a in node.names if a.name.split(".")[0] == "agentopt"]
    return found


def decorator_names(tree: ast.AST) -> set[str]:
    """Names used as (called) decorators: `@register_target("x")` gives register_target."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            for deco in node.decorator_list:
                func = deco.func if isinstance(deco, ast.Call) else deco
                if isinstance(func, ast.Name):
                    names.add(func.id)
    return names


def plugin_tests() -> list[Path]:
    """Test modules that define a plugin: they register one with a kind's decorator."""
    found = []
    for path in sorted((REPO / "tests").rglob("*.py")):
        used = decorator_names(ast.parse(path.read_text(encoding="utf-8")))
        if used & (REGISTRATIONS | PRIVATE_DECORATORS):
            found.append(path)
    return found


def test_the_extending_docs_import_only_agentopt_plugins() -> None:
    blocks = PYTHON_BLOCK.findall(DOC.read_text(encoding="utf-8"))
    assert len(blocks) == 5  # the package's __init__ and one module per kind
    imports = [imp for block in blocks for imp in agentopt_imports(ast.parse(block))]
    assert {module for module, _ in imports} == {"agentopt.plugins"}, imports
    used = {name for _, name in imports}
    assert used >= REGISTRATIONS  # each kind registers through the facade


def test_every_plugin_test_imports_the_plugin_surface_only_from_agentopt_plugins() -> None:
    """A plugin test may also look into the registry it tests (to clean up, to check a lookup),
    but a name the surface exports comes from the surface, and registration is its decorators."""
    found = plugin_tests()
    assert len(found) >= 3, found  # the target, evaluator and built-in-name plugin tests
    public = set(plugins.__all__)
    for path in found:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        assert not decorator_names(tree) & PRIVATE_DECORATORS, path
        elsewhere = [
            f"{name} from {module}"
            for module, name in agentopt_imports(tree)
            if name in public and module != "agentopt.plugins"
        ]
        assert elsewhere == [], f"{path.relative_to(REPO)} imports {elsewhere}"


def test_the_surface_is_the_registration_path_of_the_built_ins() -> None:
    from agentopt.agents.base import register_target
    from agentopt.evaluators.registry import evaluator
    from agentopt.models.providers.registry import register_provider
    from agentopt.workflows.optimize.strategies.base import register_strategy

    assert plugins.register_evaluator is evaluator
    assert plugins.register_provider is register_provider
    assert plugins.register_target is register_target
    assert plugins.register_strategy is register_strategy
    for name in plugins.__all__:
        assert getattr(plugins, name) is not None, name
    with pytest.raises(AttributeError, match="has no attribute 'make_target'"):
        _ = plugins.make_target


def test_the_lazy_table_the_type_checked_names_and_all_agree() -> None:
    """Three lists name the surface (the lazy table, the names type checkers read, `__all__`);
    a name in one and not the others would be a name a plugin cannot rely on."""
    tree = ast.parse((REPO / "agentopt" / "plugins.py").read_text(encoding="utf-8"))
    typed = {
        alias.asname or alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("agentopt.")
        for alias in node.names
    }
    assert set(plugins._HOMES) == typed == set(plugins.__all__)


def test_importing_the_surface_loads_only_what_is_asked_for() -> None:
    """A plugin that registers an evaluator does not pull the optimizer into `eval run`."""
    code = (
        "import sys\nfrom agentopt.plugins import EvalResult, register_evaluator\n"
        "print(any(m.startswith('agentopt.workflows') for m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO
    )
    assert out.stdout.strip() == "False"


def test_nothing_inside_agentopt_imports_the_surface() -> None:
    """Also `from agentopt import plugins`, which the layer test does not see."""
    for path in sorted((REPO / "agentopt").rglob("*.py")):
        if path == REPO / "agentopt" / "plugins.py":
            continue
        imports = agentopt_imports(ast.parse(path.read_text(encoding="utf-8")))
        assert ("agentopt", "plugins") not in imports, path
        assert not [m for m, _ in imports if m == "agentopt.plugins"], path
