"""A list that names a filter and no topic: "list the ICLR 2026 orals", "which papers in this collection are from
ICLR 2025?". It asks for every paper of the store the filter keeps, not for the papers closest to the words around
the filter ("collection", "list the papers"), which no paper is about.

A question asks for one when it reads as a list, restricts by year, venue, area or decision, and the topic reader
(rag.topic_span) reads none of its search words as a topic, each word's logit under `NO_TOPIC_LOGIT`. The reader,
not a list of request words, decides: "papers on cats" has a topic ("cats" 1.5), and "cats" alone (-0.7) is too
close to call, so it goes the usual way and is refused when no paper is on it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .types import Answer, Source

if TYPE_CHECKING:
    from .query import Query
    from .store import Store

# A word the reader gives a logit of -2 or more (a probability of 0.12) might name a topic: such a question is
# asked as usual. Request and filter words score far lower ("list the papers": -8 to -12, "collection" -3.9,
# "what is out there" -2.9 to -6.4), one unknown topic word near zero ("cats" -0.7).
NO_TOPIC_LOGIT = -2.0
# The papers an answer names one by one; the count says how many match.
SHOWN = 100


@dataclass(frozen=True)
class Catalogue:
    papers: list[Source]  # the first SHOWN papers the filter keeps, by id
    count: int  # every paper the filter keeps


def asks_for_catalogue(query: Query) -> bool:
    """Whether `query` lists the papers of a filter and names no topic."""
    from .topic_span import load_topic_reader

    restricted = any(
        value is not None for value in (query.year, query.since, query.until, query.venue, query.area, query.status)
    ) or bool(query.venue_named)
    if not (query.wants_list and restricted) or query.excludes or query.names:
        return False
    return all(score < NO_TOPIC_LOGIT for score in load_topic_reader().scores(query.search))


def filters_where(store: Store, filters: Query) -> dict | None:
    """The Chroma `where` of a query's year, venue, area and decision (an area or decision the store lacks is an
    `InputError` naming what it has, as for questions)."""
    from .lexical import get_index
    from .query import within_facets
    from .retrieval import build_where

    if filters.area or filters.status:
        with store.reading():
            facets = get_index(store).facets()
        filters = within_facets(filters, facets["areas"], facets["statuses"])
    return build_where(filters.year, filters.venue, None, filters.since, filters.area, filters.decisions, filters.until)


def catalogue(store: Store, query: Query) -> Catalogue:
    """The store's papers that `query`'s filters keep (an area or decision the store lacks is an `InputError`)."""
    from .store import paper_from_metadata

    where = filters_where(store, query)
    first = {"chunk": 0}
    with store.reading():
        collection = store.collection()
        if collection is None:
            return Catalogue([], 0)
        rows = collection.get(where={"$and": [where, first]} if where else first, include=["metadatas"])
    papers = sorted((paper_from_metadata(meta) for meta in rows["metadatas"]), key=lambda p: p.id)
    shown = [
        Source(
            id=p.id,
            title=p.title,
            year=p.year,
            venue=p.venue,
            score=1.0,
            snippet=p.abstract,
            abstract=p.abstract,
            url=p.url,
            area=p.area,
            status=p.status,
        )
        for p in papers[:SHOWN]
    ]
    return Catalogue(shown, len(papers))


def catalogue_answer(found: Catalogue, query: Query, backend: str, started: float) -> Answer:
    """Every paper the filter keeps, by title (or first words) and id; the first `SHOWN` when more match."""
    scope = ", ".join(str(v) for v in (query.venue or query.year, query.area, query.status) if v)
    if not found.papers:
        text = f"No paper in the store is {scope}." if scope else "No paper in the store matches the filter."
    else:
        noun = "paper matches" if found.count == 1 else "papers match"
        lead = f"{found.count} {noun} ({scope}):" if scope else f"{found.count} {noun}:"
        if found.count > len(found.papers):
            lead = f"{lead[:-1]}; the first {len(found.papers)} by id (name a topic to narrow them):"
        text = "\n".join([lead, *(f"- {source.label} [{source.id}]" for source in found.papers)])
    timings = {"total": (time.perf_counter() - started) * 1000}
    cited = [source.id for source in found.papers]
    return Answer(query, text, cited, found.papers, not found.papers, backend, [], timings, None)
