"""Question → the papers most likely to answer it, each once, with its best chunk and score."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .corpus import first_words
from .errors import InputError

if TYPE_CHECKING:
    from .config import Settings
    from .embedding import Embedder
    from .store import Store

# "which papers study X?" → "X": the scaffolding carries no topic and drags every question's vector
# towards the same generic "papers study" direction.
_SCAFFOLD = re.compile(
    r"^\s*(?:(?:which|what|are there|is there|any|list|find|show me|give me)\s+)?"
    r"(?:the\s+|recent\s+|other\s+)*(?:iclr\s*)?(?:(?:19|20)\d\d\s+)?"
    r"(?:papers?|works?|studies|articles|publications)\s+"
    r"(?:(?:that|which|do|does)\s+)?"
    r"(?:study|studies|studying|address|addresses|addressing|investigate|investigates|tackle|tackles|"
    r"explore|explores|consider|considers|focus on|focuses on|look at|deal with|deals with|are about|"
    r"is about|about|on|propose|proposes|use|uses|using|with|for|in)?\s*",
    re.I,
)


def search_text(question: str) -> str:
    """The part of a question worth embedding: scaffolding such as "which papers study" removed."""
    stripped = _SCAFFOLD.sub("", question, count=1).strip(" ?.!")
    return stripped if len(stripped) >= 3 else question


# The retrieval variants `--retriever` accepts; the first is the default.
RETRIEVERS = ("dense",)

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

    @property
    def label(self) -> str:
        return self.title or first_words(self.abstract or self.snippet)

    def to_json(self) -> dict:
        return {
            "id": self.id,
            "title": self.title,
            "year": self.year,
            "venue": self.venue,
            "score": round(self.score, 4),
            "snippet": self.snippet,
        }


@dataclass
class Retrieval:
    query: str
    sources: list[Source]
    elapsed_ms: float


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
    query: str,
    store: Store,
    embedder: Embedder,
    settings: Settings,
    k: int | None = None,
    year: int | None = None,
    venue: str | None = None,
    paper_ids: list[str] | None = None,
    mode: str | None = None,
) -> Retrieval:
    """Dense top-k over chunks, grouped to paper level (each paper once, with its best chunk).

    `paper_ids` restricts the search to those papers (a follow-up about papers already on screen).
    """
    started = time.perf_counter()
    k = k or settings.k
    mode = mode or settings.retriever
    if mode not in RETRIEVERS:
        raise InputError(f"unknown retriever {mode!r} (choose from: {', '.join(RETRIEVERS)})")
    vector = embedder.embed([search_text(query)])[0]
    hits = store.query(vector, n=k * CHUNKS_PER_PAPER, where=build_where(year, venue, paper_ids))
    best: dict[str, Source] = {}
    for hit in hits:  # best first, so the first hit of a paper is its best chunk
        if hit.paper_id in best:
            continue
        meta = hit.metadata
        year_value = meta.get("year", -1)
        best[hit.paper_id] = Source(
            id=hit.paper_id,
            title=meta.get("title") or None,
            year=year_value if isinstance(year_value, int) and year_value > 0 else None,
            venue=meta.get("venue") or None,
            score=hit.score,
            snippet=hit.text,
        )
    sources = sorted(best.values(), key=lambda s: -s.score)[:k]
    # Backends quote whole abstracts, which live on each paper's chunk 0.
    papers = store.get_papers(s.id for s in sources)
    for source in sources:
        if source.id in papers:
            source.abstract = papers[source.id].abstract
    return Retrieval(query, sources, (time.perf_counter() - started) * 1000)
