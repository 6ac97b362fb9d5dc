"""User code evaluators in another process, once they prove to burn CPU.

A code evaluator runs on a thread so the event loop goes on meanwhile, but Python code holds
the GIL: a scorer that spends 10 ms of CPU per task stalls every in-flight request for those
10 ms, and uses one core of the two. So each `CodeEvaluator` measures the CPU its calls take
(`time.thread_time` on the worker thread); once `MEASURED_CALLS` calls average
`CPU_BOUND_S` or more, and the run offers a process pool (`BuildContext.offload`), its later
calls go to the pool, where the user's file is imported again and its class instantiated once
per worker process. What cannot travel between processes (an answer that does not pickle)
sends that evaluator back to its thread for good; its result is never lost.
"""

from __future__ import annotations

import asyncio
import inspect
import time
import types
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CPU_BOUND_S = 0.005
"""Mean CPU per call above which an evaluator moves to the process pool."""
MEASURED_CALLS = 3
"""Calls measured on the thread before deciding."""


@dataclass(frozen=True)
class UserCode:
    """Where a code evaluator's callable comes from, so another process can load it too."""

    kind: str
    """"class_file": the first class of a .py file (M365); "entry": `module:callable`."""
    location: str
    """The file path, or the entry point."""
    name: str
    """The evaluator's name (messages)."""
    project_dir: str = "."

    def load(self) -> Any:
        from agentopt.evaluators.code_evaluators import load_entry_point, load_first_class

        if self.kind == "class_file":
            return load_first_class(Path(self.location), self.name)
        return load_entry_point(self.location, Path(self.project_dir), shown=self.name)


def accepts(fn: Callable[..., Any], kwargs: dict[str, Any]) -> dict[str, Any]:
    """The subset of `kwargs` that `fn` accepts (all of them when it takes **kwargs)."""
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return kwargs
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return kwargs
    return {k: v for k, v in kwargs.items() if k in params}


def bound_call(target: Any, instance: Any) -> Callable[..., Any]:
    """The callable to invoke: a class instance's own `__call__` (its real signature, and
    whether it is async), or the function itself."""
    if inspect.isclass(target):
        return types.MethodType(type(instance).__call__, instance)
    return instance  # type: ignore[no-any-return]


def timed_call(fn: Callable[..., Any], kwargs: dict[str, Any]) -> tuple[Any, float]:
    """`fn(**kwargs)` on the current thread, and the CPU seconds it took (this thread's)."""
    started = time.thread_time()
    answer = fn(**kwargs)
    return answer, time.thread_time() - started


_TARGETS: dict[UserCode, Any] = {}
_INSTANCES: dict[tuple[UserCode, str], Any] = {}


def call_in_worker(code: UserCode, init_key: str, init: dict[str, Any] | None, kwargs: Any) -> Any:
    """The pool's side: load the callable (once per process), build the class instance
    (once per option set), call it, and hand back its answer."""
    target = _TARGETS.get(code)
    if target is None:
        target = _TARGETS[code] = code.load()
    instance: Any = target
    if init is not None:
        key = (code, init_key)
        if key not in _INSTANCES:
            _INSTANCES[key] = target(**accepts(target, init))
        instance = _INSTANCES[key]
    fn = bound_call(target, instance)
    answer = fn(**accepts(fn, kwargs))
    if inspect.isawaitable(answer):
        answer = asyncio.run(_awaited(answer))
    return answer


async def _awaited(value: Any) -> Any:
    return await value
