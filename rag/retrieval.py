"""Question → the papers most likely to answer it, each once, with its best chunk and score."""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from .corpus import first_words
from .errors import InputError
from .query import Query, as_query

if TYPE_CHECKING:
    from .config import Settings
    from .embedding import Embedder
    from .lexical import LexicalHit, LexicalIndex
    from .store import ChunkHit, Store

# The retrieval variants `--retriever` accepts; the first is the default.
# "hybrid" fuses scores; "hybrid-rrf" fuses ranks (kept to compare: it measured lower, see docs/EVALUATION.md).
RETRIEVERS = ("hybrid", "hybrid-rrf", "dense", "lexical")
RRF_K = 60  # the usual reciprocal-rank-fusion constant
# Weight of the (max-normalised) cosine against the (max-normalised) BM25 score in score fusion. Measured on
# evals/questions.jsonl: 0.5-0.7 give the same recall@5 (0.945); RRF gives 0.934, since a rank hides how far
# apart two scores are (a strong BM25 match ranked 5th lexically counts as little as a weak one).
DENSE_WEIGHT = 0.6
LEXICAL_COVERAGE = 0.5  # share of the question's (stemmed) terms a top lexical hit must contain to be fused

# Chunks fetched per wanted paper: papers have 1-4 chunks, and several may hit the same paper.
CHUNKS_PER_PAPER = 4


@dataclass
class Source:
    """A retrieved paper as the answer and the user see it."""

    id: str
    title: str | None
    year: int | None
    venue: str | None
    score: float
    snippet: str
    abstract: str = field(default="", repr=False)
    # Share of the question's terms found in this paper's abstract (set on the top paper by lexical modes).
    term_coverage: float | None = None
    # The reranker's calibrated probability that this paper answers the question (None with RAG_RERANKER=off).
    relevance: float | None = None
    # For a topic question: each facet of the topic with the share of it this paper holds (rag.facets); else None.
    facet_shares: tuple[tuple[str, float], ...] | None = None

    @property
    def label(self) -> str:
        return self.title or first_words(self.abstract or self.snippet)

    def to_json(self) -> dict:
        return {
            "id": self.id,
            "title": self.title,
            "label": self.label,  # the title, or the abstract's first words (seed lists carry no titles)
            "year": self.year,
            "venue": self.venue,
            "score": round(self.score, 4),
            **({} if self.relevance is None else {"relevance": round(self.relevance, 4)}),
            "snippet": self.snippet,
        }


@dataclass
class Retrieval:
    query: Query  # as applied: a venue the store does not use is dropped
    sources: list[Source]
    elapsed_ms: float

    @property
    def filters(self) -> dict:
        """The year/venue restrictions applied."""
        return {name: value for name, value in (("year", self.query.year), ("venue", self.query.venue)) if value}


def build_where(year: int | None = None, venue: str | None = None, paper_ids: list[str] | None = None) -> dict | None:
    """A Chroma metadata filter for the given restrictions (None when there are none)."""
    clauses: list[dict] = []
    if year is not None:
        clauses.append({"year": year})
    if venue:
        clauses.append({"venue": venue})
    if paper_ids:
        clauses.append({"paper_id": {"$in": list(paper_ids)}})
    if not clauses:
        return None
    return clauses[0] if len(clauses) == 1 else {"$and": clauses}


def retrieve(
    query: Query | str,
    store: Store,
    embedder: Embedder,
    settings: Settings,
    k: int | None = None,
    paper_ids: list[str] | None = None,
    mode: str | None = None,
) -> Retrieval:
    """Top-k papers for `query`, each once with its best chunk; `mode` picks the retriever (see RETRIEVERS).

    A question given as text is parsed here; year and venue flags go to `parse`. `paper_ids` restricts
    the search to those papers (a follow-up about papers already on screen). Every source's `score` is the
    cosine similarity of its best chunk, whatever ranked it, so scores mean the same thing in every mode and
    the abstention threshold applies to all.
    """
    query = as_query(query)
    with store.reading():
        return _retrieve(query, store, embedder, settings, k, paper_ids, mode)


def _known_venue(venue: str, store: Store, mode: str) -> bool:
    """Whether the store uses the venue name `venue`. The lexical index knows every chunk's venue in memory;
    asking Chroma takes 116 ms at 91k chunks (a metadata scan), so dense mode alone asks Chroma."""
    if mode == "dense":
        return store.has_venue(venue)
    from .lexical import get_index

    return get_index(store).has_venue(venue)


def _retrieve(
    query: Query,
    store: Store,
    embedder: Embedder,
    settings: Settings,
    k: int | None,
    paper_ids: list[str] | None,
    mode: str | None,
) -> Retrieval:
    started = time.perf_counter()
    k = k or settings.k
    mode = mode or settings.retriever
    if mode not in RETRIEVERS:
        raise InputError(f"unknown retriever {mode!r} (choose from: {', '.join(RETRIEVERS)})")
    text, year, venue = query.search, query.year, query.venue
    # A venue written in the question filters only if the store uses that name ("ICLR 2025"); one given as a
    # flag always does, so a typo there finds nothing and says so.
    if venue and query.venue_in_text and not _known_venue(venue, store, mode):
        venue = None
        query = replace(query, venue=None)
    reranker = None
    if settings.reranker:
        from .rerank import get_reranker

        reranker = get_reranker(settings)
    # The reranker reorders more candidates than are kept: the paper it puts first may be fused 12th.
    wanted = max(k, reranker.calibration.candidates) if reranker else k
    depth = wanted * CHUNKS_PER_PAPER
    lexical_index = None
    if mode != "dense":
        from .lexical import get_index
        from .spelling import speller_for

        lexical_index = get_index(store)
        corrected = speller_for(lexical_index).correct(text) if settings.spelling else text
        if corrected != text:  # "spiking nueral networks": every stage, and the user, see the corrected words
            text = corrected
            query = replace(query, search=corrected)
    from .embedding import get_query_embedder

    vector = get_query_embedder(settings, embedder).embed([text])[0]

    dense: dict[str, ChunkHit] = {}
    if mode != "lexical":
        # Ids and scores only: the few papers kept are read once at the end, with their abstracts.
        for hit in store.query(vector, n=depth, where=build_where(year, venue, paper_ids), details=False):
            dense.setdefault(hit.paper_id, hit)  # best first: the first hit of a paper is its best chunk
    lexical_best: dict[str, LexicalHit] = {}
    if lexical_index is not None:
        for lex in lexical_index.search(text, depth, year=year, venue=venue, paper_ids=paper_ids):
            lexical_best.setdefault(lex.paper_id, lex)

    if mode == "dense":
        ranked = list(dense)
    elif mode == "lexical":
        ranked = list(lexical_best)
    elif lexical_index is not None and _lexical_is_evidence(lexical_index, text, list(lexical_best.values())[:3]):
        if mode == "hybrid-rrf":
            ranked = reciprocal_rank_fusion([list(dense), list(lexical_best)])
        else:
            ranked = score_fusion(
                {p: hit.score for p, hit in dense.items()},
                {p: hit.score for p, hit in lexical_best.items()},
                DENSE_WEIGHT,
            )
    else:
        ranked = list(dense)  # a paraphrase: the words typed are not the abstracts' words
    ranked = ranked[:wanted]

    # One store read for what is kept: each paper's best chunk (the snippet; scored by cosine here when only
    # BM25 found it) and its abstract, which backends quote and which lives on the paper's chunk 0.
    best = [dense[p].chunk_id if p in dense else lexical_best[p].chunk_id for p in ranked]
    found, papers = store.get_chunks_and_papers(best, vector, ranked)
    kept: dict[str, ChunkHit] = {}
    for hit in found:
        # Chroma's own cosine for chunks it returned, so the scores match the dense query's exactly
        kept[hit.paper_id] = replace(hit, score=dense[hit.paper_id].score) if hit.paper_id in dense else hit
    sources = [_source(kept[p]) for p in ranked if p in kept]
    for source in sources:
        if source.id in papers:
            source.abstract = papers[source.id].abstract
    if reranker and sources:
        sources = reranker.rerank(query, sources)
    sources = sources[:k]
    if mode != "dense" and sources:
        from .lexical import term_coverage

        sources[0].term_coverage = term_coverage(text, [f"{sources[0].title or ''}. {sources[0].abstract}"])
    if query.is_topic and sources:
        from .facets import facet_shares
        from .lexical import get_index

        texts = [f"{s.title or ''}. {s.abstract or s.snippet}" for s in sources]
        for source, shares in zip(sources, facet_shares(text, texts, lexical_index or get_index(store)), strict=True):
            source.facet_shares = shares
    return Retrieval(query, sources, (time.perf_counter() - started) * 1000)


def _lexical_is_evidence(index: LexicalIndex, text: str, top: list[LexicalHit]) -> bool:
    """Lexical hits count when one of the best covers most of the question's terms.

    Measured on evals/questions.jsonl: fusing BM25 in unconditionally cost paraphrase questions (whose
    words are by design not the abstract's) half their recall; gated by coverage, fusion helps topic and
    venue questions and leaves paraphrases to the dense retriever.
    """
    if not top:
        return False
    return index.coverage(text, [hit.doc for hit in top]) >= LEXICAL_COVERAGE


def score_fusion(dense: dict[str, float], lexical: dict[str, float], dense_weight: float) -> list[str]:
    """Items ordered by a weighted sum of their cosine and BM25 scores, each divided by its list's best.

    An item only one list found gets 0 from BM25, or from the dense side the lowest cosine that list
    returned (its true cosine is at most that, and fetching it would cost a store read per query).
    Ties keep the dense order, then the lexical order.
    """
    if not dense or not lexical:
        return list(dense or lexical)
    top_dense = max(dense.values())
    top_dense = top_dense if top_dense > 0 else 1.0
    floor = min(dense.values())
    top_lexical = max(lexical.values()) or 1.0
    order = {item: i for i, item in enumerate(dict.fromkeys([*dense, *lexical]))}
    combined = {
        item: dense_weight * dense.get(item, floor) / top_dense
        + (1 - dense_weight) * lexical.get(item, 0.0) / top_lexical
        for item in order
    }
    return sorted(combined, key=lambda item: (-combined[item], order[item]))


def reciprocal_rank_fusion(rankings: list[list[str]], k0: int = RRF_K) -> list[str]:
    """Items ordered by Σ 1/(k0 + rank) over the rankings they appear in (ties: first ranking's order)."""
    scores: dict[str, float] = {}
    for ranking in rankings:
        for rank, item in enumerate(ranking, start=1):
            scores[item] = scores.get(item, 0.0) + 1.0 / (k0 + rank)
    order = {item: i for i, item in enumerate(dict.fromkeys(item for r in rankings for item in r))}
    return sorted(scores, key=lambda item: (-scores[item], order[item]))


def _source(hit: ChunkHit) -> Source:
    meta = hit.metadata
    year_value = meta.get("year", -1)
    return Source(
        id=hit.paper_id,
        title=meta.get("title") or None,
        year=year_value if isinstance(year_value, int) and year_value > 0 else None,
        venue=meta.get("venue") or None,
        score=hit.score,
        snippet=hit.text,
    )
