"""The JSON of everything a client is sent, one function each: the CLI's `--json`, the HTTP API and its stream,
`/v1`, the MCP tools and the llama-index retriever all write these and nothing of their own.

    answer_json(answer)        `rag ask --json`, POST /api/ask, the stream's "answer" event, the `ask` tool
    search_json(query, found)  `rag search --json`, GET /api/search, the `search_papers` tool
    paper_json(paper)          `rag show --json`, GET /api/papers/{id} (with its sentences), the `get_paper` tool
    event_json(event)          one event of POST /api/ask/stream
    similar_json(paper, found) `rag similar --json`, GET /api/similar, the `similar_papers` tool
    trend_json(trend)          `rag trend --json`, GET /api/trend, the `count_papers` tool
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .evidence import display_sentences
from .followups import Resolution, describe_query
from .query import Query
from .trend import MEMBERSHIP
from .types import Answer, Event, Source

if TYPE_CHECKING:
    from .corpus import Paper
    from .similar import Similar
    from .trend import Trend


def query_json(query: Query) -> dict:
    """What the tool understood the question to ask."""
    return {
        "search": query.search,
        "year": query.year,
        "since": query.since,
        "until": query.until,
        "venue": query.venue,
        "area": query.area,
        "status": query.status,
        "list": query.wants_list,
        # What the question left out ("… but NOT the multi-view ones") and the papers left out for it.
        "excluding": query.excludes if query.excluded else None,
        "excluded": list(query.excluded),
    }


def source_json(source: Source) -> dict:
    return {
        "id": source.id,
        "title": source.title,
        "label": source.label,  # the title, or the abstract's first words (seed lists carry no titles)
        "year": source.year,
        "venue": source.venue,
        "url": source.url,  # its page: the record's url, or an OpenReview id's forum (rag.corpus.paper_url)
        "area": source.area,  # primary area
        "status": source.status,  # decision: oral, spotlight, poster, accept, reject, withdrawn, unknown
        "score": round(source.score, 4),
        **({} if source.relevance is None else {"relevance": round(source.relevance, 4)}),
        "snippet": source.snippet,
    }


def resolution_json(resolution: Resolution) -> dict:
    """How a follow-up was read: the standalone question, the papers it is about, the year, and the `↳` line."""
    return {
        "query": resolution.query,
        "paper_ids": list(resolution.paper_ids),
        "year": resolution.year,
        "described": resolution.describe(),
    }


def answer_json(answer: Answer, question: str | None = None, resolution: Resolution | None = None) -> dict:
    """The `ask --json` object; `question` as the client typed it (else as understood); in a conversation,
    `resolved`: how the follow-up was read."""
    payload = {
        "question": question if question is not None else answer.question,
        "query": query_json(answer.query),
        "answer": answer.answer,
        "citations": answer.citations,
        "sources": [source_json(s) for s in answer.sources],
        "quoted": answer.quoted,
        "abstained": answer.abstained,
        "backend": answer.backend,
        "dropped_citations": answer.dropped_citations,
        "timings_ms": {k: round(v, 1) for k, v in answer.timings_ms.items()},
        "usage": answer.usage,
        "warnings": answer.warnings,
    }
    if resolution is not None:
        payload["resolved"] = resolution_json(resolution)
    return payload


def search_json(query: Query, sources: list[Source]) -> dict:
    """The `search --json` object: the query as cleaned up, then the ranked papers."""
    return {"query": query.text, "results": [source_json(s) for s in sources]}


def paper_json(paper: Paper, sentences: bool = False) -> dict:
    """A paper; with `sentences`, its abstract also cut into the sentences answers quote (`Answer.quoted` indexes
    them), as shown."""
    payload = {
        "id": paper.id,
        "title": paper.title,
        "year": paper.year,
        "venue": paper.venue,
        "url": paper.url,
        "area": paper.area,
        "status": paper.status,
        "keywords": list(paper.keywords),
        "abstract": paper.abstract,
    }
    if sentences:
        payload["sentences"] = display_sentences(paper.abstract)
    return payload


def event_json(event: Event, question: str | None = None, resolution: Resolution | None = None) -> dict:
    """An event of a streamed answer. The query event also carries the papers a follow-up is about and the line
    `rag chat` shows ("↳ searching: … · year 2025"); the answer event is `answer_json` (with `question` and the
    conversation's `resolution`)."""
    if event.type == "query" and event.query is not None:
        paper_ids = event.resolved.paper_ids if event.resolved is not None else ()
        resolved = {} if event.resolved is None else {"resolved": resolution_json(event.resolved)}
        return {
            "type": "query",
            "query": query_json(event.query),
            **resolved,
            "paper_ids": list(paper_ids),
            "described": describe_query(event.query, paper_ids),
        }
    if event.type == "sources":
        return {"type": "sources", "sources": [source_json(s) for s in event.sources or []]}
    if event.type == "answer" and event.answer is not None:
        return {"type": "answer", "answer": answer_json(event.answer, question, resolution)}
    return {"type": event.type, "text": event.text}


def similar_json(paper: Paper | None, found: list[Similar]) -> dict:
    """Papers like a paper (`of`: its id, title and link) or like a text (`of`: null), closest first, each with the
    sentence pairs that make it close and the topic words they share."""
    return {
        "of": None if paper is None else {"id": paper.id, "title": paper.title, "url": paper.url},
        "papers": [
            {
                **source_json(item.source),
                "overlaps": [{"yours": o.yours, "theirs": o.theirs, "shared": list(o.shared)} for o in item.overlaps],
            }
            for item in found
        ],
    }


def trend_json(trend: Trend, sample: int = 5) -> dict:
    """A topic's count over the store: by year (with the store's papers of each year), area and decision; whether
    the count is complete or a lower bound; the members' ids; the first `sample` members as sources."""
    return {
        "topic": trend.topic,
        "count": trend.count,
        "complete": trend.complete,
        "judged": trend.judged,
        "by_year": [
            {"year": year, "papers": n, "of": trend.papers_by_year.get(year), "share": trend.share(year)}
            for year, n in trend.by_year.items()
        ],
        "by_area": [{"area": area, "papers": n} for area, n in trend.by_area.items()],
        "by_status": [{"status": status, "papers": n} for status, n in trend.by_status.items()],
        "members": [s.id for s in trend.members],
        "excluding": trend.excluding,  # what the question left out, and the papers on the topic left out for it
        "left_out": trend.left_out,
        "sample": [source_json(s) for s in trend.members[:sample]],
        "membership": MEMBERSHIP,
    }
