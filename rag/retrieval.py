"""Question → candidate papers: the dense and lexical searches, fused, each paper once with its best chunk.

This is the first stage of the pipeline (rag.pipeline): fusion only. Reranking, the lexical evidence the judge
reads and the judge itself are later stages.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from .errors import InputError
from .lexical import get_index
from .policy import Policy
from .query import Query, within_facets
from .store import stored_url
from .types import Source

if TYPE_CHECKING:
    from .config import Settings
    from .embedding import Embedder
    from .lexical import LexicalHit, LexicalIndex
    from .spelling import Speller
    from .store import ChunkHit, Store

# The retrieval variants `--retriever` accepts; the first is the default.
# "hybrid" fuses scores; "hybrid-rrf" fuses ranks (kept to compare: it measured lower, see docs/EVALUATION.md).
RETRIEVERS = ("hybrid", "hybrid-rrf", "dense", "lexical")


def venues_named(names: tuple[str, ...], held: frozenset[str]) -> tuple[str, ...] | None:
    """The venues of the store that venues' names without a year cover (("ICLR",) → ("ICLR 2025", "ICLR 2026"));
    None where that is no restriction: the store holds only those venues' papers, or none of them (a name the
    store never uses filters nothing, as a venue and year it does not use)."""
    wanted = {name.lower() for name in names}
    named = tuple(sorted(v for v in held if v.split(" ", 1)[0].lower() in wanted))
    return named if named and len(named) < len(held) else None


def build_where(
    year: int | None = None,
    venue: str | tuple[str, ...] | None = None,
    paper_ids: list[str] | None = None,
    since: int | None = None,
    area: str | None = None,
    statuses: tuple[str, ...] | None = None,
    until: int | None = None,
) -> dict | None:
    """A Chroma metadata filter for the given restrictions (None when there are none); `venue` may be several."""
    clauses: list[dict] = []
    if year is not None:
        clauses.append({"year": year})
    if since is not None:
        clauses.append({"year": {"$gte": since}})
    if until is not None:
        clauses.append({"year": {"$lte": until}})
    if isinstance(venue, tuple) and len(venue) > 1:
        clauses.append({"venue": {"$in": list(venue)}})
    elif venue:
        clauses.append({"venue": venue if isinstance(venue, str) else venue[0]})
    if paper_ids:
        clauses.append({"paper_id": {"$in": list(paper_ids)}})
    if area:
        clauses.append({"area": area})
    if statuses:
        clauses.append({"status": statuses[0]} if len(statuses) == 1 else {"status": {"$in": list(statuses)}})
    if not clauses:
        return None
    return clauses[0] if len(clauses) == 1 else {"$and": clauses}


def check_mode(mode: str) -> None:
    if mode not in RETRIEVERS:
        raise InputError(f"unknown retriever {mode!r} (choose from: {', '.join(RETRIEVERS)})")


def fuse(
    query: Query,
    store: Store,
    query_embedder: Embedder,
    settings: Settings,
    policy: Policy,
    wanted: int,
    paper_ids: list[str] | None,
    mode: str,
    index: LexicalIndex | None,
    speller: Speller | None,
) -> tuple[Query, list[Source]]:
    """The `wanted` best candidates for `query` by the retriever `mode` (see RETRIEVERS), and the query as applied.

    `index` is the store's lexical index (None in dense mode), `speller` its speller (None: no correction).
    `paper_ids` restricts the search to those papers (a follow-up about papers already on screen). Every source's
    `score` is the cosine similarity of its best chunk, whatever ranked it, so scores mean the same thing in every
    mode. Called inside `store.reading()`.
    """
    check_mode(mode)
    text, year, venue = query.search, query.year, query.venue
    # A venue written in the question filters only if the store uses that name ("ICLR 2025"); one given as a
    # flag always does, so a typo there finds nothing and says so. The lexical index knows every chunk's venue in
    # memory; asking Chroma takes 116 ms at 91k chunks (a metadata scan), so dense mode alone asks Chroma.
    if venue and query.venue_in_text and not (index.has_venue(venue) if index else store.has_venue(venue)):
        venue = None
        query = replace(query, venue=None)
    venues: str | tuple[str, ...] | None = venue
    if venue is None and query.venue_named:
        venues = venues_named(query.venue_named, (index or get_index(store)).venue_names())
    if query.area or query.status:
        # The area as the store writes it; an area or status the store has no paper of is the user's error.
        facets = (index or get_index(store)).facets()
        query = within_facets(query, facets["areas"], facets["statuses"])
    depth = wanted * policy.chunks_per_paper
    if index is not None and speller is not None:
        corrected = speller.correct(text)
        if corrected != text:  # "spiking nueral networks": every stage, and the user, see the corrected words
            text = corrected
            query = replace(query, search=corrected)
    vector = query_embedder.embed([text])[0]

    dense: dict[str, ChunkHit] = {}
    if mode != "lexical":
        # Ids and scores only: the few papers kept are read once at the end, with their abstracts.
        where = build_where(year, venues, paper_ids, query.since, query.area, query.decisions, query.until)
        for hit in store.query(vector, n=depth, where=where, details=False):
            dense.setdefault(hit.paper_id, hit)  # best first: the first hit of a paper is its best chunk
    lexical_best: dict[str, LexicalHit] = {}
    if index is not None:
        found = index.search(
            text,
            depth,
            year=year,
            venue=venues,
            paper_ids=paper_ids,
            since=query.since,
            until=query.until,
            area=query.area,
            statuses=query.decisions,
        )
        for lex in found:
            lexical_best.setdefault(lex.paper_id, lex)

    if mode == "dense":
        ranked = list(dense)
    elif mode == "lexical":
        ranked = list(lexical_best)
    elif index is not None and _lexical_is_evidence(index, text, list(lexical_best.values())[:3], policy):
        if mode == "hybrid-rrf":
            ranked = reciprocal_rank_fusion([list(dense), list(lexical_best)], policy.rrf_k)
        else:
            ranked = score_fusion(
                {p: hit.score for p, hit in dense.items()},
                {p: hit.score for p, hit in lexical_best.items()},
                policy.dense_weight,
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
    for rank, source in enumerate(sources):
        source.fused_rank = rank
        if source.id in papers:
            source.abstract = papers[source.id].abstract
    return query, sources


def _lexical_is_evidence(index: LexicalIndex, text: str, top: list[LexicalHit], policy: Policy) -> bool:
    """Lexical hits count when one of the best covers most of the question's terms.

    Measured on evals/questions.jsonl: fusing BM25 in unconditionally cost paraphrase questions (whose
    words are by design not the abstract's) half their recall; gated by coverage, fusion helps topic and
    venue questions and leaves paraphrases to the dense retriever.
    """
    if not top:
        return False
    return index.coverage(text, [hit.doc for hit in top]) >= policy.lexical_coverage


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


def reciprocal_rank_fusion(rankings: list[list[str]], k0: int) -> list[str]:
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
        url=stored_url(meta) if meta else None,
        area=meta.get("area") or None,
        status=meta.get("status") or None,
    )
