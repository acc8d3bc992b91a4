"""Paper → chunks that fit the embedding model's 256-token window, with flat metadata for Chroma."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import lru_cache

from .corpus import Paper
from .embedding import MAX_TOKENS, token_counter
from .text import sentences_with_fallback


@dataclass(frozen=True)
class Chunk:
    """A piece of one abstract, as stored: `text` is what the reader sees, `embed_text` what is embedded."""

    id: str
    paper_id: str
    number: int
    text: str
    embed_text: str
    metadata: dict


@lru_cache(maxsize=4)
def _splitter(chunk_tokens: int, overlap: int):
    from llama_index.core.node_parser import SentenceSplitter
    from llama_index.core.node_parser.text.utils import split_by_sentence_tokenizer

    punkt = split_by_sentence_tokenizer()
    return SentenceSplitter(
        chunk_size=chunk_tokens,
        chunk_overlap=overlap,
        tokenizer=token_counter(),
        chunking_tokenizer_fn=lambda text: sentences_with_fallback(text, punkt),
    )


def paper_hash(paper: Paper, chunk_tokens: int, overlap: int, model: str) -> str:
    """Changes whenever anything that goes into the paper's stored chunks changes, but for the labels (`labels`:
    link, area, decision), which `metadata_hash` covers: a new link is written without embedding the paper again."""
    payload = json.dumps(
        [
            paper.id,
            paper.title,
            paper.abstract,
            paper.year,
            paper.venue,
            list(paper.keywords),
            chunk_tokens,
            overlap,
            model,
        ],
        ensure_ascii=False,
    )
    return hashlib.sha256(payload.encode()).hexdigest()[:32]


def metadata_hash(paper: Paper) -> str:
    """Changes whenever what is shown and filtered by, but never embedded, changes: the link, the primary area, the
    decision. Empty for a paper with none of them, as a store written before they were kept reads (no key)."""
    fields = [paper.url, paper.area, paper.status]
    if not any(fields):
        return ""
    return hashlib.sha256(json.dumps(fields, ensure_ascii=False).encode()).hexdigest()[:16]


def labels(paper: Paper) -> dict:
    """The chunk metadata `metadata_hash` covers: what an ingest rewrites, embedding nothing, when only it changed."""
    return {
        "url": paper.url or "",
        "area": paper.area or "",
        "status": paper.status or "",
        "meta_hash": metadata_hash(paper),
    }


def chunk_paper(paper: Paper, chunk_tokens: int, overlap: int, model: str) -> list[Chunk]:
    """Sentence-aware chunks of `chunk_tokens` model tokens; the title (if any) is prefixed for embedding.

    The full abstract rides on chunk 0's metadata so answers and `show` need no second lookup.
    """
    # Leave room for [CLS], [SEP] and the title prefix inside the model's window.
    title = paper.title or ""
    title_tokens = len(token_counter()(title)) + 1 if title else 0
    budget = max(32, min(chunk_tokens, MAX_TOKENS - 2 - title_tokens))
    pieces = _splitter(budget, min(overlap, budget // 4)).split_text(paper.abstract) or [paper.abstract]
    digest = paper_hash(paper, chunk_tokens, overlap, model)
    chunks = []
    for number, text in enumerate(pieces):
        metadata: dict = {
            "paper_id": paper.id,
            "chunk": number,
            "n_chunks": len(pieces),
            "title": paper.title or "",
            "year": paper.year if paper.year is not None else -1,
            "venue": paper.venue or "",
            "keywords": "; ".join(paper.keywords),
            "paper_hash": digest,
            **labels(paper),
        }
        if number == 0:
            metadata["abstract"] = paper.abstract
        embed_text = f"{title}. {text}" if title else text
        chunks.append(Chunk(f"{paper.id}#{number}", paper.id, number, text, embed_text, metadata))
    return chunks
