"""User code as evaluators: M365 `custom-evaluators/<name>/<name>.py` and `module:callable`.

M365 contract (kept exactly, so existing evaluators run unchanged): the file's first top-level
class is built with `__init__(*, model_config=None, threshold, options=None)` and called with
`__call__(*, prompt="", expected_response="", response="", context="", **_)`, returning
`{"score", "reason"}` or `{"error"}`. We also pass `query`, `ground_truth`, `history`,
`tool_calls`, `tool_definitions`, `citations`, `latency_s`, `tokens`, `instructions` to callables
that accept them (or take `**kwargs`). A raised exception is an error result naming the
evaluator, never a crash of the run.

Normalization of a code evaluator's score: 0..1 as it is; on the M365 1–5 judge convention
(threshold above 1 and score within 1–5) as (s − 1) / 4; otherwise pass = 1, fail = 0. A result
may also carry its own `normalized`.
"""

from __future__ import annotations

import ast
import asyncio
import hashlib
import importlib
import importlib.util
import inspect
import json
import pickle
import sys
import types
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from agentopt.contracts.eval_result import EvalResult
from agentopt.core import trust
from agentopt.core.errors import ConfigError, Problem
from agentopt.core.files import bounded
from agentopt.core.files.yaml_source import read_text
from agentopt.core.redaction import redact
from agentopt.evaluators.base import BuildContext, EvalSample, EvaluatorBase, flat_options
from agentopt.evaluators.code_worker import (
    CPU_BOUND_S,
    MEASURED_CALLS,
    UserCode,
    accepts,
    bound_call,
    call_in_worker,
    timed_call,
)

CUSTOM_DIR = "custom-evaluators"
DEFAULT_THRESHOLD = 1.0


def custom_folder_file(project_dir: Path, name: str) -> Path | None:
    """`custom-evaluators/<name>/<name>.py` when it exists."""
    path = Path(project_dir) / CUSTOM_DIR / name / f"{name}.py"
    return path if bounded.is_file(path) else None


@contextmanager
def _on_path(folder: Path) -> Iterator[None]:
    """Make sibling modules importable while user code loads."""
    entry = str(folder)
    added = entry not in sys.path
    if added:
        sys.path.insert(0, entry)
    try:
        yield
    finally:
        if added and entry in sys.path:
            sys.path.remove(entry)


def load_first_class(path: Path, name: str, *, run: bool = True) -> type:
    """The first top-level class defined in `path` (M365 custom evaluator convention).

    With `run=False` the file is only parsed (it exists, is Python, defines a class) and a
    stand-in class comes back: what `--dry-run` and the checks before a run use, so that no
    code from an eval file executes without a real run (issue 38)."""
    shown = f"{CUSTOM_DIR}/{name}/{path.name}"
    try:
        tree = ast.parse(read_text(path, shown=shown, kind="text"), filename=str(path))
    except SyntaxError as exc:
        raise ConfigError(
            problems=[Problem(shown, f"line {exc.lineno}", f"invalid Python: {exc.msg}")]
        ) from exc
    except (RecursionError, MemoryError, ValueError) as exc:  # too deep, a NUL byte
        raise ConfigError(problems=[Problem(shown, "", f"invalid Python: {exc}")]) from None
    class_name = next((n.name for n in tree.body if isinstance(n, ast.ClassDef)), None)
    if class_name is None:
        raise ConfigError(
            problems=[Problem(shown, "", "expected a top-level class (the evaluator), found none")]
        )
    if not run:
        return _stand_in(class_name, f"{CUSTOM_DIR}/{name}/{path.name}")
    try:
        module = _exec_file(path)
    except Exception as exc:
        raise ConfigError(
            problems=[Problem(shown, "", f"failed to import: {type(exc).__name__}: {exc}")]
        ) from exc
    return getattr(module, class_name)  # type: ignore[no-any-return]


def _stand_in(name: str, where: str) -> type:
    """A class standing for user code that was checked, not loaded: calling it is a bug."""

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(f"{where} was checked, not loaded: it cannot run in this command")

    return type(name, (), {"__init__": refuse, "__call__": refuse, "__module__": "unloaded"})


def _exec_file(path: Path) -> types.ModuleType:
    """Import a user's .py file under a name unique to its path.

    Registered in sys.modules (dataclasses and pickling need that) under a path-derived name,
    so two projects' `checks.py` never shadow each other; its folder is importable meanwhile.
    """
    path = path.resolve()
    digest = hashlib.sha256(str(path).encode()).hexdigest()[:10]
    module_name = f"agentopt_user_code.{path.stem}_{digest}"
    if module_name in sys.modules:
        return sys.modules[module_name]
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path}")
    trust.about_to_run("a code evaluator", file=path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        with _on_path(path.parent):
            spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[module_name]
        raise
    return module


def load_entry_point(entry: str, project_dir: Path, *, shown: str = "", run: bool = True) -> Any:
    """Import `module:callable` (or `path/to/file.py:callable`) from the project folder.

    With `run=False` nothing is imported: a file in the project must exist and parse, a
    module elsewhere must be found (`importlib.util.find_spec` of its top package, which
    executes nothing), and a stand-in comes back (see `load_first_class`)."""
    module_part, _, attr = entry.rpartition(":")
    if not module_part or not attr:
        raise ConfigError(
            problems=[Problem(shown, "entry_point", f'expected "module:callable", found "{entry}"')]
        )
    if not run:
        _check_entry_point(entry, module_part, Path(project_dir), shown)
        return _stand_in(attr, entry)
    try:
        project = Path(project_dir).resolve()
        local = project / (module_part if module_part.endswith(".py") else f"{module_part}.py")
        if bounded.is_file(local):
            module = _exec_file(local)
        elif module_part.endswith(".py"):
            raise FileNotFoundError(f"no file {module_part} in the project folder")
        else:
            with _on_path(project):
                spec = importlib.util.find_spec(module_part.split(".")[0])
                if spec is not None and spec.origin and Path(spec.origin).is_file():
                    trust.about_to_run("a code evaluator", file=Path(spec.origin))
                module = importlib.import_module(module_part)
        return getattr(module, attr)
    except Exception as exc:
        raise ConfigError(
            problems=[
                Problem(shown, "entry_point", f'cannot load "{entry}": {type(exc).__name__}: {exc}')
            ],
            hint="the module must be importable from the agent project folder",
        ) from exc


def _check_entry_point(entry: str, module_part: str, project_dir: Path, shown: str) -> None:
    local = project_dir / (module_part if module_part.endswith(".py") else f"{module_part}.py")
    problem = None
    if bounded.is_file(local):
        try:
            ast.parse(read_text(local, shown=str(local), kind="text"), filename=str(local))
        except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
            problem = f"{local.name} is not valid Python: {exc}"
    elif module_part.endswith(".py"):
        problem = f"no file {module_part} in the project folder"
    else:
        top = module_part.split(".")[0]
        with _on_path(project_dir):
            try:
                found = importlib.util.find_spec(top) is not None
            except (ImportError, ValueError):
                found = False
        if not found:
            problem = f"no module {top} in the project folder or the environment"
    if problem is not None:
        raise ConfigError(
            problems=[Problem(shown, "entry_point", f'cannot load "{entry}": {problem}')],
            hint="the module must be importable from the agent project folder",
        )


def call_arguments(sample: EvalSample) -> dict[str, Any]:
    """What user code receives: the M365 names first, then agentopt's extra inputs."""
    return {
        "prompt": sample.query,
        "expected_response": sample.ground_truth or "",
        "response": sample.response,
        "context": sample.context or "",
        "query": sample.query,
        "ground_truth": sample.ground_truth,
        "history": [t.model_dump() for t in sample.history],
        "tool_calls": [c.model_dump() for c in sample.tool_calls],
        "tool_definitions": sample.tool_definitions,
        "citations": [c.model_dump() for c in sample.citations],
        "latency_s": sample.latency_s,
        "tokens": sample.tokens,
        "instructions": sample.instructions,
    }


def _json_safe(value: dict[str, Any]) -> dict[str, Any]:
    """User-returned extras, made storable in results.json (sets, objects → text)."""
    return json.loads(json.dumps(value, default=str))  # type: ignore[no-any-return]


class CodeEvaluator(EvaluatorBase):
    """Runs a user callable (class instance or function) and turns its answer into a result."""

    def __init__(
        self,
        *,
        name: str,
        target: Any,
        options: dict[str, Any] | None = None,
        context: BuildContext | None = None,
        source: UserCode | None = None,
    ) -> None:
        super().__init__(name=name, options=options, context=context)
        self.default_threshold = DEFAULT_THRESHOLD
        self._target = target
        self._instances: dict[str, Any] = {}
        self._source = source
        """Where the callable comes from: what lets a worker process load it (code_worker)."""
        self._cpu: list[float] = []
        self._in_pool = False

    def _init_options(self, sample: EvalSample) -> tuple[float, dict[str, Any], str]:
        opts = self.options_for(sample)
        threshold = self.threshold_for(sample)
        threshold = DEFAULT_THRESHOLD if threshold is None else threshold
        user_options = {k: v for k, v in flat_options(opts).items() if k != "threshold"}
        key = repr((threshold, sorted(user_options.items(), key=lambda kv: kv[0])))
        return threshold, user_options, key

    def _instance(self, threshold: float, user_options: dict[str, Any], key: str) -> Any:
        if not inspect.isclass(self._target):
            return self._target
        if key not in self._instances:
            init = {"model_config": None, "threshold": threshold, "options": user_options}
            try:
                self._instances[key] = self._target(**accepts(self._target, init))
            except Exception as exc:
                raise ConfigError(
                    f"custom evaluator '{self.name}' failed to initialise: "
                    f"{type(exc).__name__}: {exc}"
                ) from exc
        return self._instances[key]

    async def evaluate(self, sample: EvalSample) -> EvalResult:
        threshold, user_options, key = self._init_options(sample)
        fn = bound_call(self._target, self._instance(threshold, user_options, key))
        kwargs = call_arguments(sample)
        if not inspect.isclass(self._target):
            kwargs["options"] = user_options
        kwargs = accepts(fn, kwargs)
        try:
            if inspect.iscoroutinefunction(fn):
                answer = await fn(**kwargs)
            elif self._in_pool:
                answer = await self._in_worker(fn, threshold, user_options, key, kwargs)
            else:
                answer, cpu = await asyncio.to_thread(timed_call, fn, kwargs)
                if inspect.isawaitable(answer):
                    answer = await answer
                self._measured(cpu)
        except Exception as exc:
            return EvalResult.failed_to_evaluate(
                self.name,
                "evaluatorCrashed",
                redact(f"custom evaluator '{self.name}' raised {type(exc).__name__}: {exc}"),
            )
        return self._result(answer, threshold)

    def _measured(self, cpu_s: float) -> None:
        """Move to the process pool once the first calls show this evaluator burns CPU."""
        if self._source is None or self.context.offload is None:
            return
        self._cpu.append(cpu_s)
        if len(self._cpu) >= MEASURED_CALLS:
            self._in_pool = sum(self._cpu) / len(self._cpu) >= CPU_BOUND_S
            self._source = self._source if self._in_pool else None  # decided: stop measuring

    async def _in_worker(
        self,
        fn: Any,
        threshold: float,
        user_options: dict[str, Any],
        key: str,
        kwargs: dict[str, Any],
    ) -> Any:
        assert self._source is not None and self.context.offload is not None
        init = None
        if inspect.isclass(self._target):
            init = {"model_config": None, "threshold": threshold, "options": user_options}
        try:
            return await self.context.offload(call_in_worker, self._source, key, init, kwargs)
        except (pickle.PicklingError, TypeError, AttributeError) as exc:
            if "pickle" not in f"{type(exc).__name__} {exc}".lower():
                raise
            self._in_pool = False  # what it takes or returns cannot travel: its thread it is
            answer, _ = await asyncio.to_thread(timed_call, fn, kwargs)
            return answer

    def _result(self, answer: Any, threshold: float) -> EvalResult:
        if isinstance(answer, EvalResult):
            return answer.model_copy(update={"evaluator": self.name})
        if isinstance(answer, bool | int | float):
            answer = {"score": answer}
        if not isinstance(answer, dict):
            return self._bad(f"returned {type(answer).__name__}")
        if answer.get("error"):
            return EvalResult.failed_to_evaluate(
                self.name,
                "evaluatorFailed",
                redact(f"custom evaluator '{self.name}': {answer['error']}"),
            )
        score = answer.get("score")
        if isinstance(score, bool):
            score = float(score)
        if not isinstance(score, int | float) or score != score:
            return self._bad(f"returned score {score!r}")
        score = float(score)
        ok = (
            bool(answer["passed"]) if isinstance(answer.get("passed"), bool) else score >= threshold
        )
        normalized = answer.get("normalized")
        if not isinstance(normalized, int | float) or isinstance(normalized, bool):
            if 0.0 <= score <= 1.0:
                normalized = score
            elif threshold > 1 and 1.0 <= score <= 5.0:
                normalized = (score - 1.0) / 4.0
            else:
                normalized = 1.0 if ok else 0.0
        return EvalResult(
            evaluator=self.name,
            status="pass" if ok else "fail",
            score=score,
            normalized=max(0.0, min(1.0, float(normalized))),
            threshold=threshold,
            reason=str(answer.get("reason", "")),
            details=_json_safe(
                {
                    k: v
                    for k, v in answer.items()
                    if k not in {"score", "reason", "passed", "normalized"}
                }
            ),
        )

    def _bad(self, what: str) -> EvalResult:
        return EvalResult.failed_to_evaluate(
            self.name,
            "invalidEvaluatorResult",
            f'custom evaluator \'{self.name}\' {what}; expected {{"score": number, "reason": '
            f'text}} or {{"error": text}}',
        )
