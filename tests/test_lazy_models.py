"""Every agentopt pydantic model is built on first use (`agentopt.core.lazy_model`): importing
a command's modules builds none of the ~110 models they define, most of which the command never
touches (an `eval run` uses fewer than half)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).parents[1] / "agentopt"


def test_every_model_derives_from_the_lazy_base() -> None:
    direct = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name == "lazy_model.py":
            continue
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.ClassDef):
                names = {getattr(b, "id", getattr(b, "attr", None)) for b in node.bases}
                if names & {"BaseModel", "RootModel"}:
                    direct.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno} {node.name}")
    assert direct == []


IMPORT_RUN = """
import agentopt.cli.app, agentopt.cli.eval_run_cmd, agentopt.workflows.run.eval_run
from agentopt.core.lazy_model import LazyModel
seen, stack = [], [LazyModel]
while stack:
    model = stack.pop()
    stack.extend(model.__subclasses__())
    seen.append(model)
built = [m.__qualname__ for m in seen if m.__pydantic_complete__ and m is not LazyModel]
print(len(seen), built)
"""


def test_importing_eval_run_builds_no_model() -> None:
    done = subprocess.run(
        [sys.executable, "-c", IMPORT_RUN], capture_output=True, text=True, check=True
    )
    count, built = done.stdout.split(" ", 1)
    assert int(count) > 80
    assert built.strip() == "[]"


PREBUILD = """
from agentopt.workflows.run import finish
models = (*finish.SUMMARY_MODELS, *finish.RESULT_MODELS)
assert not any(m.__pydantic_complete__ for m in models)
finish.prebuild_finish_models().join(30)
print(all(m.__pydantic_complete__ for m in models))
"""


def test_a_run_builds_its_summarys_models_ahead_on_a_thread() -> None:
    """A run's end makes its summary and results.json with models nothing used before: they
    are built while the run's calls are out, not after the last answer."""
    done = subprocess.run(
        [sys.executable, "-c", PREBUILD], capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "True"
