"""One settings object for the whole pipeline, read from `RAG_*` environment variables.

CLI flags override fields with `dataclasses.replace`; nothing else reads the environment.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from pathlib import Path


def default_store() -> Path:
    from platformdirs import user_data_dir

    return Path(user_data_dir("rag-papers", appauthor=False)) / "store"


def _env_float(name: str, default: float, minimum: float | None = None, maximum: float | None = None) -> float:
    """`name` as a number, `default` when unset or empty; a one-line error when it is not a number in range."""
    from .errors import InputError

    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):  # "nan" and "inf" parse, but no setting means them
        raise InputError(f"{name}={raw!r} is not a number")
    # The bounds of the CLI flag that overrides the variable: the environment must not get past them.
    low = minimum if minimum is not None else -math.inf
    high = maximum if maximum is not None else math.inf
    if not low <= value <= high:
        bounds = f"from {low:g} to {high:g}" if maximum is not None else f"at least {low:g}"
        raise InputError(f"{name}={raw!r} is out of range ({bounds})")
    return value


def _env_int(name: str, default: int, minimum: int | None = None, maximum: int | None = None) -> int:
    value = _env_float(name, default, minimum, maximum)
    if value != int(value):
        from .errors import InputError

        raise InputError(f"{name}={value!r} is not a whole number")
    return int(value)


@dataclass(frozen=True)
class Settings:
    """Everything a run needs to know; defaults work offline with no configuration."""

    store: Path = field(default_factory=default_store)
    chroma_url: str | None = None
    collection: str = "papers"

    # Embeddings: the packaged int8 ONNX MiniLM, or any OpenAI-compatible embeddings endpoint.
    embed_backend: str = "onnx"
    embed_model: str = "text-embedding-3-small"
    embed_base_url: str | None = None
    embed_batch_size: int = 16
    # Chunks embedded per call (length-sorted inside it) and written per Chroma call, in whole papers. Measured
    # on 1k corpus papers, idle: 256 → 66 s, 1024 → 60 s, 2048 → 56 s (91% of the raw model's throughput).
    ingest_window: int = 2048

    # Chunking, in the embedding model's own tokens (its window is 256 including [CLS]/[SEP]).
    chunk_tokens: int = 128
    chunk_overlap: int = 24

    # Retrieval and answering.
    retriever: str = "hybrid"
    k: int = 5
    # Below this cosine similarity of the best chunk the abstracts are taken not to answer the question.
    min_score: float = 0.365
    # Extractive answers keep papers scoring at least this fraction of the top paper's score: looser for
    # "which papers ..." questions, stricter for questions about a detail (chosen on evals/questions.jsonl).
    evidence_ratio: float = 0.70
    detail_ratio: float = 0.85

    backend: str = "extractive"  # extractive | openai | local
    llm_base_url: str | None = None
    llm_model: str = "gpt-4o-mini"
    llm_api_key: str | None = field(default=None, repr=False)
    llm_timeout: float = 60.0
    llm_max_retries: int = 1
    llm_max_tokens: int = 600
    # After the endpoint fails, later questions in this process answer extractively at once for this many
    # seconds, then it is tried again (rag.llm.Breaker); 0 turns the circuit breaker off.
    llm_cooldown: float = 60.0
    prompts_dir: Path | None = None

    # The local backend (`pip install '.[local]'`): an embedded GGUF model judging each paper in turn.
    # Its latency budget is ~25 s for 5 papers on 2 cores; the knobs are how many papers it reads, how much of
    # each abstract, and how many tokens it may write per paper.
    local_model: str = "qwen2.5-coder-1.5b"
    local_model_path: str | None = None
    # Where the local model is assembled from its pip parts (1.1 GB); default: the user's cache directory.
    model_dir: Path | None = None
    local_threads: int = 0  # 0: one per core (llama-cpp-python's own default is half the cores)
    local_context: int = 2048
    local_papers: int = 5  # at most this many papers judged per answer
    local_sentences: int = 3  # the model reads each paper's best sentences, not the whole abstract
    local_max_tokens: int = 80  # per paper

    @classmethod
    def from_env(cls) -> Settings:
        """Settings from the environment (`RAG_*`, plus the OpenAI SDK's own `OPENAI_*`)."""
        env = os.environ.get
        store = env("RAG_STORE")
        prompts = env("RAG_PROMPTS_DIR")
        llm_base_url = env("RAG_LLM_BASE_URL") or env("OPENAI_BASE_URL") or None
        # With no backend named, an endpoint or a model is what "an LLM is configured" means.
        backend = env("RAG_BACKEND") or ("openai" if llm_base_url or env("RAG_LLM_MODEL") else "extractive")
        return cls(
            store=Path(store).expanduser() if store else default_store(),
            chroma_url=env("RAG_CHROMA_URL") or None,
            collection=env("RAG_COLLECTION") or "papers",
            embed_backend=env("RAG_EMBED_BACKEND") or "onnx",
            embed_model=env("RAG_EMBED_MODEL") or "text-embedding-3-small",
            embed_base_url=env("RAG_EMBED_BASE_URL") or None,
            embed_batch_size=_env_int("RAG_EMBED_BATCH", 16),
            ingest_window=max(1, _env_int("RAG_INGEST_WINDOW", 2048)),
            chunk_tokens=_env_int("RAG_CHUNK_TOKENS", 128),
            chunk_overlap=max(0, _env_int("RAG_CHUNK_OVERLAP", 24)),
            retriever=env("RAG_RETRIEVER") or "hybrid",
            k=_env_int("RAG_K", 5, minimum=1, maximum=100),
            min_score=_env_float("RAG_MIN_SCORE", 0.365),
            evidence_ratio=_env_float("RAG_EVIDENCE_RATIO", 0.70),
            detail_ratio=_env_float("RAG_DETAIL_RATIO", 0.85),
            backend=backend,
            llm_base_url=llm_base_url,
            llm_model=env("RAG_LLM_MODEL") or "gpt-4o-mini",
            llm_api_key=env("OPENAI_API_KEY") or None,
            llm_timeout=_env_float("RAG_LLM_TIMEOUT", 60.0, minimum=0.1),
            llm_max_retries=_env_int("RAG_LLM_RETRIES", 1),
            llm_max_tokens=_env_int("RAG_LLM_MAX_TOKENS", 600),
            llm_cooldown=_env_float("RAG_LLM_COOLDOWN", 60.0, minimum=0.0),
            prompts_dir=Path(prompts).expanduser() if prompts else None,
            local_model=env("RAG_LOCAL_MODEL") or "qwen2.5-coder-1.5b",
            local_model_path=env("RAG_LOCAL_MODEL_PATH") or None,
            model_dir=Path(model_dir).expanduser() if (model_dir := env("RAG_MODEL_DIR")) else None,
            local_threads=max(0, _env_int("RAG_LOCAL_THREADS", 0)),
            local_context=max(512, _env_int("RAG_LOCAL_CONTEXT", 2048)),
            local_papers=max(1, _env_int("RAG_LOCAL_PAPERS", 5)),
            local_sentences=max(1, _env_int("RAG_LOCAL_SENTENCES", 3)),
            local_max_tokens=max(16, _env_int("RAG_LOCAL_MAX_TOKENS", 80)),
        )

    @property
    def store_label(self) -> str:
        return self.chroma_url or str(self.store)
