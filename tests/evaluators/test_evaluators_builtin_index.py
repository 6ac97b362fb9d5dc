"""The index of built-in evaluator spellings (evaluators/builtin_index.py): complete and exact,
a lookup of a built-in name imports only its module, and a plugin cannot take a built-in name."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from agentopt.evaluators.builtin_index import builtin_modules
from agentopt.evaluators.registry import _LOOKUP, EVALUATORS, load_plugins
from agentopt.plugins import ConfigError, EvaluatorBase, register_evaluator

REPO = Path(__file__).resolve().parents[2]


def test_the_index_names_every_built_in_spelling_and_the_module_that_registers_it() -> None:
    load_plugins()
    registered = {
        key: info.factory.__module__
        for key, canonical in _LOOKUP.items()
        if (info := EVALUATORS.get(canonical)) is not None
        and info.factory.__module__.startswith("agentopt.evaluators.")
    }
    indexed = {key: f"agentopt.evaluators.{home}" for key, home in builtin_modules().items()}
    assert indexed == registered
    assert {"exactmatch", "builtin.exact_match", "exact_match", "relevance"} <= set(indexed)


def test_looking_up_a_built_in_name_imports_its_module_alone() -> None:
    code = (
        "import sys\n"
        "from agentopt.evaluators.registry import canonical_name, lookup\n"
        "assert canonical_name('ExactMatch') == 'builtin.exact_match'\n"
        "assert lookup('builtin.relevance').name == 'builtin.relevance'\n"
        "loaded = sorted(m for m in sys.modules if m.startswith('agentopt.evaluators.'))\n"
        "print('\\n'.join(loaded))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=60
    )
    assert done.returncode == 0, done.stderr
    loaded = set(done.stdout.split())
    assert {
        "agentopt.evaluators.deterministic.exact_match",
        "agentopt.evaluators.judges.scale_judges",
    } <= loaded
    # Before the index, the first lookup imported all twelve built-in modules.
    for other in ("retrieval_result", "semantic_similarity", "json_schema", "citations"):
        assert f"agentopt.evaluators.deterministic.{other}" not in loaded
    assert "agentopt.evaluators.judges.entailment" not in loaded


def test_an_unknown_name_still_finds_plugins_and_lists_everything() -> None:
    from agentopt.evaluators.registry import lookup, valid_names

    assert lookup("acme.not_installed") is None
    names = valid_names()
    assert "builtin.retrieval_result" in names and "ExactMatch" in names


def test_a_plugin_cannot_take_a_built_in_name() -> None:
    with pytest.raises(ConfigError, match="'Relevance' is the name of a built-in evaluator"):

        @register_evaluator("acme.relevance", aliases=["Relevance"])
        class Shadow(EvaluatorBase):  # pragma: no cover - never registered
            name = "acme.relevance"

    assert EVALUATORS.get("acme.relevance") is None
    assert _LOOKUP["relevance"] == "builtin.relevance"
