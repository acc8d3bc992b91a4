"""Learned relevance: a cross-encoder reranks the fused candidates and gives each a calibrated probability.

The cross-encoder (6 layers of all-MiniLM-L6-v2, trained on corpus pseudo-queries by `train/`, int8 ONNX) ships
inside the wheel under `rag/models/reranker/` with its model card; it runs on onnxruntime + tokenizers, never
torch. It reads (question, title + abstract start). A logistic layer fitted on the dev questions only
(`python -m train.calibrate`, `calibration.json`) turns its logit and the retrieval's own signals (the best
chunk's cosine, the share of the question's terms the paper holds, the fused rank) into `Source.relevance`, a
probability that the paper answers. Abstention and the extractive answer's choice of papers read that
probability through the bars stored beside it (one to answer at all; one to cite a further paper in a list, a
stricter one for a question about a detail). `RAG_RERANKER=off` leaves the cosine rules in charge.
"""

from __future__ import annotations

import hashlib
import math
import threading
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from .errors import ModelError
from .lexical import term_coverages
from .policy import FEATURES, RERANKER_DIR, Calibration, read_json
from .query import Query
from .types import Source

if TYPE_CHECKING:
    import numpy as np

    from .config import Settings

__all__ = ["FEATURES", "MODEL_DIR", "Reranker", "get_reranker", "passage"]

MODEL_DIR = RERANKER_DIR
PASSAGE_WORDS = 180  # abstract words kept before tokenising: more than the model's token window holds


def passage(title: str | None, abstract: str) -> str:
    """What the cross-encoder reads for a paper, in training and at run time alike: title, then abstract start."""
    return f"{title or ''} {' '.join(abstract.split()[:PASSAGE_WORDS])}".strip()


class Reranker:
    """The packaged int8 cross-encoder; thread-safe after loading (onnxruntime sessions are)."""

    def __init__(self, folder: Path = MODEL_DIR, threads: int = 2, batch_size: int = 32) -> None:
        self.folder = folder
        manifest = read_json(folder / "model.json")
        self.max_length = int(manifest["max_length"])
        model_file = folder / manifest["file"]
        _check_file(model_file, manifest["sha256"])
        import onnxruntime
        from tokenizers import Tokenizer

        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        try:
            self.session = onnxruntime.InferenceSession(str(model_file), options, providers=["CPUExecutionProvider"])
            self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        except Exception as exc:  # onnxruntime and tokenizers raise their own types for an unreadable file
            raise ModelError(f"cannot load the reranker from {folder}: {str(exc).splitlines()[0]}") from exc
        # longest_first cuts the passage alone, as the model was trained, for any question shorter than the
        # window's remainder, and cuts a question longer than that too, where only_second raised an error.
        self.tokenizer.enable_truncation(max_length=self.max_length, strategy="longest_first")
        self.tokenizer.enable_padding()
        self.inputs = {i.name for i in self.session.get_inputs()}
        self.batch_size = batch_size

    def logits(self, question: str, passages: Sequence[str]) -> np.ndarray:
        """One relevance logit per passage (higher: more relevant)."""
        import numpy as np

        out: list[np.ndarray] = []
        for start in range(0, len(passages), self.batch_size):
            encodings = self.tokenizer.encode_batch([(question, p) for p in passages[start : start + self.batch_size]])
            feed = {
                "input_ids": np.array([e.ids for e in encodings], dtype=np.int64),
                "attention_mask": np.array([e.attention_mask for e in encodings], dtype=np.int64),
                "token_type_ids": np.array([e.type_ids for e in encodings], dtype=np.int64),
            }
            result = self.session.run(None, {k: v for k, v in feed.items() if k in self.inputs})[0]
            out.append(np.asarray(result, dtype=np.float32).reshape(-1))
        return np.concatenate(out) if out else np.zeros(0, dtype=np.float32)

    def features(self, query: Query, sources: Sequence[Source]) -> list[tuple[float, ...]]:
        """FEATURES for each source, in the fused order given."""
        logits = self.logits(query.search, [passage(s.title, s.abstract or s.snippet) for s in sources])
        coverage = term_coverages(query.search, [s.text for s in sources])
        # Each paper's rank is the one its own retrieval gave (a list's candidates come from two retrievals taken
        # in turn: rag.pipeline.with_topic_candidates), else its place here.
        return [
            (float(logit), float(source.score), covered, math.log1p(_rank(source, place)))
            for place, (logit, source, covered) in enumerate(zip(logits, sources, coverage, strict=True))
        ]

    def rerank(self, query: Query, sources: Sequence[Source], calibration: Calibration) -> list[Source]:
        """`sources` with `relevance` set by `calibration` (the policy's), most relevant first (ties keep the fused
        order)."""
        probabilities = [calibration.probability(f) for f in self.features(query, sources)]
        for source, probability in zip(sources, probabilities, strict=True):
            source.relevance = probability
        order = sorted(range(len(sources)), key=lambda i: -probabilities[i])
        return [sources[i] for i in order]


def _rank(source: Source, place: int) -> int:
    return source.fused_rank if source.fused_rank is not None else place


def _check_file(path: Path, expected: str) -> None:
    """The model file must be the one its card describes: a truncated download or a flipped byte is caught here
    rather than as wrong rankings (hashing 19 MB takes ~40 ms, once per process)."""
    digest = hashlib.sha256()
    try:
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    except FileNotFoundError as exc:
        raise ModelError(f"the reranker is not installed: {path} is missing (reinstall, or RAG_RERANKER=off)") from exc
    if digest.hexdigest() != expected:
        raise ModelError(f"the reranker model {path} is corrupt: its sha256 does not match the model card")


_lock = threading.Lock()


@lru_cache(maxsize=4)
def _load(folder: Path) -> Reranker:
    return Reranker(folder)


def get_reranker(settings: Settings | None = None) -> Reranker:
    """The reranker model (`settings.reranker_model`, else the packaged one), loaded once per process and folder
    (~0.2 s): a loader `Pipeline` calls when it is built, never on a question's path."""
    folder = settings.reranker_model if settings is not None and settings.reranker_model else MODEL_DIR
    with _lock:
        return _load(Path(folder))
