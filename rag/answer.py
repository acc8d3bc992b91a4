"""Question → cited answer: retrieve, abstain when the evidence is weak, generate, enforce citations."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .citations import CitationStreamFilter, enforce_citations, find_citations
from .errors import LLMError
from .facets import facets_held, gives_count, holds_topic, missing_text
from .query import MAX_QUESTION_CHARS, Query, as_query, clean_question, names_any
from .retrieval import Retrieval, Source, retrieve

if TYPE_CHECKING:
    from .backends import Backend
    from .config import Settings
    from .embedding import Embedder
    from .store import Store

__all__ = ["MAX_QUESTION_CHARS", "Answer", "ask", "clean_question"]


@dataclass
class Answer:
    query: Query  # what the tool understood the question to ask (as applied: see Retrieval.query)
    answer: str
    citations: list[str]
    sources: list[Source]
    abstained: bool
    backend: str
    dropped_citations: list[str] = field(default_factory=list)
    timings_ms: dict[str, float] = field(default_factory=dict)
    usage: dict | None = None
    # What went wrong on the way, in one line each (e.g. the LLM failed and the answer is extractive).
    warnings: list[str] = field(default_factory=list)

    @property
    def question(self) -> str:
        return self.query.text

    def to_json(self) -> dict:
        return {
            "question": self.question,
            "query": self.query.to_json(),
            "answer": self.answer,
            "citations": self.citations,
            "sources": [s.to_json() for s in self.sources],
            "abstained": self.abstained,
            "backend": self.backend,
            "dropped_citations": self.dropped_citations,
            "timings_ms": {k: round(v, 1) for k, v in self.timings_ms.items()},
            "usage": self.usage,
            "warnings": self.warnings,
        }


def abstention_text(sources: list[Source], settings: Settings, query: Query) -> str:
    threshold = settings.min_score
    if not sources:
        restriction = query.venue or query.year
        if restriction:  # say which restriction emptied the search: "ICLR 2027" is a typo the user can fix
            return f"The indexed abstracts don't answer this: the store has no paper from {restriction}."
        return "The indexed abstracts don't answer this: no paper in the store matches the question."
    if query.is_topic and not any(holds_topic(s.facet_shares) for s in sources):  # the facet rule
        # The paper holding most of the topic's facets (the closest of those) shows what is missing.
        closest = max(by_closeness(sources), key=lambda s: facets_held(s.facet_shares))
        shares = closest.facet_shares or ()
        where = f" from {query.venue or query.year}" if (query.venue or query.year) else ""
        covers = "covers all of" if len(shares) > 1 else "covers"
        unmentioned = bool(shares) and max(share for _, share in shares) == 0
        lacks = missing_text(shares) or ("never mentions it" if unmentioned else "shares only some of its terms")
        return (
            f"The indexed abstracts don't answer this: no paper{where} found {covers} “{query.topic}”; the closest "
            f"({closest.id}, {_judged(closest)}) {lacks}."
        )
    if no_count_given(sources, query, _relevance_bar(sources, settings)):  # the count rule
        closest = by_closeness(sources)[0]
        return (
            f"The indexed abstracts don't answer this: none of the papers found gives a number of {query.counts}; "
            f"the closest ({closest.id}, {_judged(closest)}) gives none."
        )
    if sources[0].relevance is not None:  # judged by the reranker (see weak_evidence)
        closest = max(sources, key=lambda s: s.relevance or 0.0)
        return (
            f"The indexed abstracts don't answer this: the closest paper ({closest.id}) has relevance "
            f"{closest.relevance:.2f}, below the bar {calibration(settings).relevance_bar:g}."
        )
    closest = max(sources, key=lambda s: s.score)
    return (
        "The indexed abstracts don't answer this: the closest paper "
        f"({closest.id}) scores {closest.score:.2f}, below the evidence threshold {threshold:g}."
    )


def _judged(source: Source) -> str:
    """What a message shows of a paper's match: its relevance, or else its cosine."""
    return f"relevance {source.relevance:.2f}" if source.relevance is not None else f"{source.score:.2f}"


def calibration(settings: Settings):
    """The reranker's calibration (its bars); loaded with the model the retrieval already used."""
    from .rerank import get_reranker

    return get_reranker(settings).calibration


def by_closeness(sources: list[Source]) -> list[Source]:
    """An abstention's "closest papers", by what the bar judged (relevance, or else cosine), not the fused rank."""
    return sorted(sources, key=lambda s: -(s.relevance if s.relevance is not None else s.score))


# A paper that contains every term of the question ("what is DiVeQ?") is evidence even when its embedding
# score is a little low: MiniLM scores rare names and acronyms poorly. Such a paper gets this much slack.
EXACT_MATCH_COVERAGE = 0.99
EXACT_MATCH_SLACK = 0.10


def no_count_given(sources: list[Source], query: Query, relevance_bar: float) -> bool:
    """A count question none of whose relevant papers (at the relevance bar; all, with the reranker off) gives a
    number of what it counts: a paper on games giving "two-player games" does not tell how many games Octax has."""
    if not query.counts:
        return False
    relevant = [s for s in sources if s.relevance is None or s.relevance >= relevance_bar]
    return not any(gives_count(query.counts, s.abstract or s.snippet) for s in relevant)


def abstained_by_rule(sources: list[Source], query: Query, relevance_bar: float) -> bool:
    """The rules on what a paper must hold to answer (rag.facets): a count question none of whose relevant papers
    gives the count; a topic question no paper holds every part of. `train.calibrate` places the relevance bar
    with these applied."""
    if no_count_given(sources, query, relevance_bar):
        return True
    return query.is_topic and not any(holds_topic(s.facet_shares) for s in sources)


def defined_by_a_source(query: Query | None, sources: list[Source]) -> bool:
    """ "what is CAMEL?" is answered by a paper that names CAMEL, whatever its relevance: the cross-encoder and
    MiniLM score a rare name low (CAMEL's own paper: relevance 0.25 under the bar 0.30), and a name that a paper
    writes is a name that paper defines or uses."""
    if query is None or not query.defines:
        return False
    return any(names_any((query.defines,), f"{s.title or ''} {s.abstract or s.snippet}") for s in sources)


def _relevance_bar(sources: list[Source], settings: Settings) -> float:
    return calibration(settings).relevance_bar if sources and sources[0].relevance is not None else 0.0


def weak_evidence(sources: list[Source], settings: Settings, query: Query | str | None = None) -> bool:
    """Abstain when the best paper scores below the bar (the reranker's relevance bar, or else the cosine threshold
    less the slack for an exact-term match); for a question naming a topic, when no paper holds every part of it;
    for a count question, when no paper gives a number of what it counts (rag.facets)."""
    query = as_query(query) if query else None
    if not sources:
        return True
    if sources[0].relevance is not None:
        # The reranker's calibrated probability replaces the cosine threshold and its exact-term slack.
        below = max(s.relevance or 0.0 for s in sources) < calibration(settings).relevance_bar
        if settings.min_score > 0 and below and not defined_by_a_source(query, sources):
            return True
    else:
        # Fusion may rank first a paper with a lower cosine than another source: the best evidence counts.
        best = max(s.score for s in sources)
        exact = (sources[0].term_coverage or 0.0) >= EXACT_MATCH_COVERAGE
        if best < settings.min_score - (EXACT_MATCH_SLACK if exact else 0.0):
            return True
    # min_score 0 means the user chose the papers (a chat follow-up about them): no evidence bar applies.
    if query is None or settings.min_score <= 0:
        return False
    return abstained_by_rule(sources, query, _relevance_bar(sources, settings))


def ask(
    question: Query | str,
    store: Store,
    embedder: Embedder,
    settings: Settings,
    backend_name: str | None = None,
    k: int | None = None,
    on_text: Callable[[str], None] | None = None,
    paper_ids: list[str] | None = None,
    on_warning: Callable[[str], None] | None = None,
    on_retrieved: Callable[[Retrieval], None] | None = None,
    *,
    depth: int | None = None,
    fallback: bool = True,
) -> Answer:
    """Answer `question` from the store. A streaming backend calls `on_text` with checked text as it comes;
    `on_retrieved` hears what was found before the answer is written.

    A question given as text is parsed here; year and venue flags go to `parse`. When an LLM backend
    fails, the answer is the extractive one and `on_warning` hears why (so does `Answer.warnings`): a person
    asking a question gets an answer, not an error.

    For the eval: `depth` retrieves that many papers (`on_retrieved` hears them all, to score the ranking)
    while the answer reads the top `k`; `fallback=False` lets an LLM's failure raise, since scoring extractive
    answers as the LLM's would make the numbers lie.
    """
    from .backends import get_backend

    started = time.perf_counter()
    query = as_query(question)
    backend = get_backend(backend_name or settings.backend, settings, embedder)
    spare = get_backend("extractive", settings, embedder) if fallback and backend.name != "extractive" else None
    k = k or settings.k
    found = retrieve(query, store, embedder, settings, k=max(k, depth or 0), paper_ids=paper_ids)
    if on_retrieved:
        on_retrieved(found)
    return answer_from_sources(
        found.query, found.sources[:k], backend, settings, on_text, found.elapsed_ms, started, spare, on_warning
    )


def answer_from_sources(
    query: Query | str,
    sources: list[Source],
    backend: Backend,
    settings: Settings,
    on_text: Callable[[str], None] | None = None,
    retrieve_ms: float = 0.0,
    started: float | None = None,
    fallback: Backend | None = None,
    on_warning: Callable[[str], None] | None = None,
) -> Answer:
    """Abstain or generate from already-retrieved `sources`, then enforce citations.

    An `LLMError` from `backend` is answered by `fallback` with a warning; without a fallback it propagates
    (the eval asks for that: see `ask`).
    """
    started = time.perf_counter() if started is None else started
    query = as_query(query)
    timings = {"retrieve": retrieve_ms, "generate": 0.0}

    if weak_evidence(sources, settings, query):
        text = abstention_text(sources, settings, query)
        if on_text:
            on_text(text)
        timings["total"] = (time.perf_counter() - started) * 1000
        return Answer(query, text, [], by_closeness(sources), True, backend.name, [], timings, None)

    valid = [s.id for s in sources]
    stream = CitationStreamFilter(valid) if (on_text and backend.streams) else None
    shown = False  # whether any streamed text reached the user

    def emit(piece: str) -> None:
        nonlocal shown
        checked = stream.feed(piece) if stream else piece
        if checked and on_text:
            shown = True
            on_text(checked)

    generate_started = time.perf_counter()
    warnings: list[str] = []
    already_dropped: list[str] = []
    try:
        generation = backend.generate(query, sources, emit if stream else None)
        used = backend
    except LLMError as exc:
        if fallback is None:
            raise
        # An unclosed "[..." the filter still holds is dropped, never shown: it was not checked.
        already_dropped = list(stream.dropped) if stream else []
        if shown and on_text:
            on_text("\n")  # end the half answer's line: the warning and the whole answer follow
        warning = f"{exc}; " + (
            "the answer above is incomplete, here is the extractive answer instead"
            if shown
            else "showing the extractive answer instead"
        )
        warnings.append(warning)
        if on_warning:
            on_warning(warning)
        generation = fallback.generate(query, sources, None)
        used, stream = fallback, None
    if stream:
        tail = stream.flush()
        if tail and on_text:
            on_text(tail)
    timings["generate"] = (time.perf_counter() - generate_started) * 1000

    text, dropped = enforce_citations(generation.text, valid)
    dropped = list(dict.fromkeys(already_dropped + dropped))
    abstained = generation.abstained or not text.strip()
    if abstained:
        text = "The indexed abstracts don't answer this: none of the retrieved papers addresses the question."
        if on_text:
            on_text(text)
    elif on_text and not stream:
        on_text(text)
    citations = [] if abstained else find_citations(text)
    timings["total"] = (time.perf_counter() - started) * 1000
    return Answer(
        query,
        text,
        citations,
        by_closeness(sources) if abstained else sources,
        abstained,
        used.name,
        dropped,
        timings,
        generation.usage,
        warnings,
    )
