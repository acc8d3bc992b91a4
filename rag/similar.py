"""Papers like one paper, or like a text (an abstract, a draft paragraph): a related-work check.

    rag similar 001-02
    rag similar --text "We propose to unlearn by ..."

Closeness is read chunk by chunk, as questions are: each chunk of the paper (its stored vectors; a text is chunked
and embedded as `rag ingest` would) asks the store for its nearest chunks, and a paper's closeness is the mean, over
those chunks, of its best chunk's cosine to each (a chunk that did not reach it counts the cosine of its last hit).
A paper close to one part of a long abstract ranks under one close to all of it; a single whole-abstract vector
(what a plain nearest-neighbour search uses) mixes the parts before comparing them (docs/EVALUATION.md).

Each similar paper comes with the sentences that make it close: the pair of sentences, one from each text, that
share the rarest words (corpus IDF, rag.terms), with those words. No model pass: the 0.3 s budget at 31.5k papers
has no room to embed every sentence of six abstracts (~0.4 s on 2 cores).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from .errors import InputError, NotFoundError
from .evidence import display_sentences
from .lexical import query_terms
from .terms import term_stats, word_for
from .types import Source

if TYPE_CHECKING:
    import numpy as np

    from .config import Settings
    from .corpus import Paper
    from .embedding import Embedder
    from .store import Store

# Chunks each query chunk asks for: enough that the k closest papers are each reached by every chunk of a typical
# abstract (3 chunks), without reading more rows than a question's retrieval does.
HITS_PER_CHUNK = 60
MAX_CHUNKS = 32  # of one paper, read by id (`ID#0` … `ID#31`; an abstract has 1-6)
MIN_TEXT_WORDS = 5
OVERLAPS = 2  # sentence pairs shown per similar paper
TOPIC_WORD = 1.0  # topicality from which a shared word counts (_topic_terms)


@dataclass(frozen=True)
class Overlap:
    """A sentence of the paper (or text) asked about and one of the similar paper, and the rare words they share."""

    yours: str
    theirs: str
    shared: tuple[str, ...]


@dataclass
class Similar:
    source: Source  # its `score` is the closeness (mean best-chunk cosine)
    overlaps: list[Overlap]


def paper_vectors(store: Store, paper_id: str) -> tuple[Paper, np.ndarray]:
    """The stored paper and its chunks' vectors (one row per chunk); `NotFoundError` when the store has none."""
    import numpy as np

    with store.reading():
        collection = store.collection()
        ids = [f"{paper_id}#{n}" for n in range(MAX_CHUNKS)]
        rows = collection.get(ids=ids, include=["embeddings", "metadatas"]) if collection is not None else None
    if not rows or not rows["ids"]:
        raise NotFoundError(f"no paper {paper_id!r} in the store")
    order = sorted(range(len(rows["ids"])), key=lambda i: rows["metadatas"][i]["chunk"])
    vectors = np.asarray([rows["embeddings"][i] for i in order], dtype=np.float32)
    with store.reading():
        paper = store.get_paper(paper_id)
    return paper, vectors


def text_vectors(text: str, embedder: Embedder, settings: Settings) -> np.ndarray:
    """A text chunked and embedded as `rag ingest` embeds an abstract."""
    from .chunking import chunk_paper
    from .corpus import Paper

    if len(text.split()) < MIN_TEXT_WORDS:
        raise InputError(
            f"the text is too short to compare (under {MIN_TEXT_WORDS} words): give an abstract or a paragraph"
        )
    chunks = chunk_paper(Paper(id="text", abstract=text), settings.chunk_tokens, settings.chunk_overlap, embedder.name)
    return embedder.embed([chunk.embed_text for chunk in chunks])


def closest(
    store: Store, vectors: np.ndarray, k: int, exclude: str | None, where: dict | None
) -> list[tuple[str, float]]:
    """The `k` papers closest to the chunks `vectors`, best first, with their closeness."""
    best: dict[str, list[float]] = {}
    floors = []
    for i, vector in enumerate(vectors):
        hits = store.query(vector, HITS_PER_CHUNK, where, details=False)
        floors.append(hits[-1].score if hits else 0.0)
        for hit in hits:
            if hit.paper_id == exclude:
                continue
            scores = best.setdefault(hit.paper_id, [float("nan")] * len(vectors))
            if not scores[i] >= hit.score:  # NaN (unset) or lower
                scores[i] = hit.score
    closeness = {
        paper_id: sum(floors[i] if s != s else s for i, s in enumerate(scores)) / len(vectors)
        for paper_id, scores in best.items()
    }
    return sorted(closeness.items(), key=lambda item: -item[1])[:k]


def overlaps(yours: str, theirs: str, limit: int = OVERLAPS) -> list[Overlap]:
    """Up to `limit` pairs of sentences (one of each text, each sentence used once) that share words naming a topic,
    the pair sharing the most (summed topicality, rag.terms) first."""
    stats = term_stats()
    mine = [(s, _topic_terms(s)) for s in display_sentences(yours)]
    other = [(s, _topic_terms(s)) for s in display_sentences(theirs)]
    pairs = []
    for a, a_terms in mine:
        for b, b_terms in other:
            if shared := a_terms & b_terms:
                pairs.append((sum(stats.topicality(t) for t in shared), a, b, shared))
    pairs.sort(key=lambda p: -p[0])
    chosen: list[Overlap] = []
    used: set[str] = set()
    for _, a, b, shared in pairs:
        if a in used or b in used:
            continue
        used |= {a, b}
        words = dict.fromkeys(word_for(t, b) for t in sorted(shared, key=lambda t: -stats.topicality(t)))
        chosen.append(Overlap(a, b, tuple(words)[:5]))
        if len(chosen) == limit:
            break
    return chosen


def _topic_terms(sentence: str) -> set[str]:
    """The sentence's stems that name topics: topicality >= TOPIC_WORD ("novel" 0.15, "improves" 0.31, "data" 0.77
    against "graph" 3.3, "token" 2.1, "knowledge" 1.4), so two abstracts are not "close" by sharing "we propose"."""
    stats = term_stats()
    return {t for t in query_terms(sentence) if stats.topicality(t) >= TOPIC_WORD}


def similar(
    store: Store,
    embedder: Embedder,
    settings: Settings,
    paper_id: str | None = None,
    text: str | None = None,
    k: int = 5,
    where: dict | None = None,
) -> tuple[Paper | None, list[Similar]]:
    """The papers closest to the paper `paper_id` (itself left out) or to `text`, each with its overlaps; and the
    paper asked about (None for a text)."""
    if (paper_id is None) == (text is None):
        raise InputError("give either a paper id or a text")
    paper = None
    if paper_id is not None:
        paper, vectors = paper_vectors(store, paper_id)
        yours = paper.abstract
    else:
        assert text is not None
        vectors = text_vectors(text, embedder, settings)
        yours = text
    ranked = closest(store, vectors, k, paper_id, where)
    with store.reading():
        papers = store.get_papers([pid for pid, _ in ranked])
    results = []
    for pid, closeness in ranked:
        if pid not in papers:
            continue
        found = papers[pid]
        shared = overlaps(yours, found.abstract)
        source = Source(
            id=found.id,
            title=found.title,
            year=found.year,
            venue=found.venue,
            score=closeness,
            snippet=shared[0].theirs if shared else display_sentences(found.abstract)[0],  # what shows it is close
            abstract=found.abstract,
            url=found.url,
            area=found.area,
            status=found.status,
        )
        results.append(Similar(source, shared))
    return paper, results
