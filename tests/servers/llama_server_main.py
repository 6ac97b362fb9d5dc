"""Child process: llama.cpp's own OpenAI-compatible HTTP server (`llama-server`, embedded in
xllamacpp) on 127.0.0.1 with the SmolLM2 GGUF.

    python -m tests.servers.llama_server_main --port 0

Prints `listening <base URL>` once the socket is bound. It ends when its parent does: it reads
standard input (a lifeline — EOF means the parent is gone) and, on Linux, asks the kernel for
SIGKILL when the parent dies, so a killed pytest never leaves a model server behind.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import os
import signal
import socket
import sys
import threading

PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    with contextlib.suppress(OSError):  # not Linux: the stdin lifeline still ends it
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)

    def watch() -> None:
        sys.stdin.read()
        os._exit(0)

    threading.Thread(target=watch, daemon=True).start()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--gguf", required=True)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--alias", default="smollm2")
    parser.add_argument("--threads", type=int, default=1, help="1: ggml spins on a busy machine")
    parser.add_argument("--parallel", type=int, default=2)
    parser.add_argument("--ctx-per-slot", type=int, default=4096)
    parser.add_argument(
        "--n-predict", type=int, default=256, help="tokens for a request without max_tokens"
    )
    args = parser.parse_args()
    _die_with_parent()

    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = args.gguf
    params.model_alias = {args.alias}
    params.port = args.port or free_port()
    params.n_parallel = args.parallel
    params.n_ctx = args.ctx_per_slot * args.parallel
    # As `llama-server -n 256 --no-context-shift`: a request without max_tokens (an agent turn)
    # ends at 256 tokens; without it a rambling 135M model runs until the client gives up.
    params.n_predict = args.n_predict
    params.ctx_shift = False
    params.cpuparams.n_threads = args.threads
    params.cpuparams_batch.n_threads = args.threads
    params.verbosity = int(os.environ.get("LLAMA_VERBOSITY", "0"))
    params.fit_params = False
    params.use_jinja = True
    server = xllamacpp.Server(params)
    print(f"listening {server.listening_address}/v1", flush=True)
    signal.sigwait({signal.SIGTERM, signal.SIGINT})
    os._exit(0)


if __name__ == "__main__":
    main()
