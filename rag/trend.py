"""How many papers of the store are on a topic, by year, area and decision: `rag trend "unlearning"`.

Membership is decided paper by paper by the test a list's papers pass (rag.judge.list_beyond): the
cross-encoder's calibrated relevance to the topic (rag.rerank) at or above the bar at which a list cites a paper
(`Calibration.cite_bar`), and every facet of the topic held (rag.facets). The candidates are the topic's hybrid
retrieval over the whole store, `TREND_DEPTH` deep; the cross-encoder reads each (~6 ms a paper on 2 cores),
which is what bounds the depth. When members still appear among the last `TAIL` candidates read, more may lie
deeper, and the count is given as a lower bound ("at least").

The calibration weighs a paper's retrieval rank (log1p(rank), weight -2.3): fitted on a question's 20 candidates,
it reads a paper fused 200th as all but irrelevant, which is right for a list of 5 and wrong for a count of 200.
Every candidate is read at rank `READ_RANK` instead, as if it were among a list's first few: its relevance is then
its cross-encoder logit, cosine and term coverage alone. `READ_RANK` was chosen on hand-labelled papers of six
topics and reported on six others (docs/EVALUATION.md#counts-rag-trend).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from .errors import InputError
from .facets import holds_topic
from .judge import left_out_note
from .lexical import get_index
from .query import within_facets
from .retrieval import fuse
from .types import Answer

if TYPE_CHECKING:
    from .pipeline import Pipeline
    from .query import Query
    from .types import Source

TREND_DEPTH = 300  # candidates the judge reads: ~1.8 s of cross-encoder at 31.5k papers on 2 cores
TAIL = 30  # a member among the last TAIL read: the count is a lower bound
READ_RANK = 2  # the rank every candidate is read at (module docstring)
# How membership is decided and how right it measured, for every client to say (docs/EVALUATION.md#counts-rag-trend).
# How right membership measured on 6 hand-labelled topics not used to tune it, at 31,500 papers.
MEASURED = "on topics it was not tuned on, half the papers counted were on the topic and 0.92 of those on it counted"
MEMBERSHIP = (
    "each of the topic's 300 best candidates judged on its own: the cross-encoder's calibrated relevance at a "
    "list's cite bar, every part of the topic held; on 6 hand-labelled topics not used to tune it (31,500 papers), "
    "precision 0.50 and recall 0.92 (close on topics named by their own term, several-fold high on topics whose "
    "words name a wider field)"
)


@dataclass
class Trend:
    topic: str  # what was judged: the question's topic words
    members: list[Source]  # most relevant first
    judged: int  # candidates read
    complete: bool  # False: members reach the depth read, more may lie deeper (a lower bound)
    by_year: dict[int, int] = field(default_factory=dict)
    by_area: dict[str, int] = field(default_factory=dict)
    by_status: dict[str, int] = field(default_factory=dict)
    papers_by_year: dict[int, int] = field(default_factory=dict)  # the store's papers (the filter applied)
    judged_ids: list[str] = field(default_factory=list)  # every candidate read, most relevant first
    # What the question left out ("… but not the multi-view ones"), and the papers on the topic left out for it.
    excluding: str | None = None
    left_out: list[str] = field(default_factory=list)

    @property
    def count(self) -> int:
        return len(self.members)

    def share(self, year: int) -> float | None:
        """Members of `year` per paper of that year in the store."""
        total = self.papers_by_year.get(year)
        return self.by_year.get(year, 0) / total if total else None


def trend(pipeline: Pipeline, query: Query, depth: int = TREND_DEPTH) -> Trend:
    """The papers of the store on `query`'s topic (its year/venue filters applied), counted."""
    if pipeline.reranker is None or pipeline.policy.calibration is None:
        raise InputError("counting papers on a topic needs the reranker: unset RAG_RERANKER=off")
    policy = pipeline.policy
    calibration = policy.calibration
    assert calibration is not None
    query = pipeline.with_exclusion(query)
    # A count's topic is cut at the field's keyword words: the topic reader is fitted on list requests, and reads
    # "how many papers use X?" as "use X".
    topic = pipeline.with_topic(query, replace(policy, topic_reader=False)).topic or query.search
    # The whole store is judged and the filters applied to its members, so a paper's membership does not move with
    # the filter: the rank the calibration weighs is its rank among all papers, and "--year 2025" counts what the
    # unfiltered count gives 2025.
    topical = replace(query, search=topic, year=None, venue=None, since=None, until=None, area=None, status=None)
    with pipeline.store.reading():
        index = get_index(pipeline.store) if pipeline.settings.retriever != "dense" else None
        _, candidates = fuse(
            topical,
            pipeline.store,
            pipeline.query_embedder,
            pipeline.settings,
            policy,
            depth,
            None,
            pipeline.settings.retriever,
            index,
            None,
        )
        if index is not None and (query.area or query.status):
            # An area or decision the store lacks is the user's error, in one line naming what it has.
            facets = index.facets()
            query = within_facets(query, facets["areas"], facets["statuses"])
        papers_by_year = _papers_by_year(index) if index is not None else {}
    for source in candidates:
        source.fused_rank = READ_RANK
    judged = pipeline.reranker.rerank(topical, candidates, calibration)
    # The list's own test (rag.judge.list_beyond): the cite bar, and every facet of the topic held.
    pipeline.add_lexical_evidence(replace(topical, is_topic=True), judged, index, pipeline.settings.retriever, policy)
    on_topic = {
        s.id
        for s in judged
        if (s.relevance or 0.0) >= calibration.cite_bar and holds_topic(s.facet_shares, policy.facet_bar)
    }
    tail = candidates[-TAIL:] if len(candidates) >= depth else []
    complete = not any(s.id in on_topic for s in tail)
    excluded: set[str] = set()
    if query.excludes:
        index = index or get_index(pipeline.store)
        excluded = set(pipeline.without_excluded(topical, judged, index, policy)[0].excluded)
    left_out = [s.id for s in judged if s.id in on_topic and s.id in excluded and _passes(query, s)]
    members = [s for s in judged if s.id in on_topic and s.id not in excluded and _passes(query, s)]
    return Trend(
        topic=topic,
        members=members,
        judged=len(candidates),
        judged_ids=[s.id for s in judged],
        complete=complete,
        by_year=dict(sorted(Counter(s.year for s in members if s.year).items())),
        by_area=dict(Counter(a for s in members if (a := getattr(s, "area", None))).most_common()),
        by_status=dict(Counter(st for s in members if (st := getattr(s, "status", None))).most_common()),
        papers_by_year=papers_by_year if not _filtered(query) else {},
        excluding=query.excludes if left_out else None,
        left_out=left_out,
    )


def _passes(query: Query, source: Source) -> bool:
    """Whether `source` is within the query's year, since-year, venue, area and decision."""
    if query.year is not None and source.year != query.year:
        return False
    if query.since is not None and (source.year is None or source.year < query.since):
        return False
    if query.until is not None and (source.year is None or source.year > query.until):
        return False
    if query.area is not None and source.area != query.area:
        return False
    if query.decisions is not None and source.status not in query.decisions:
        return False
    return query.venue is None or source.venue == query.venue


def _filtered(query: Query) -> bool:
    return any(v is not None for v in (query.year, query.since, query.until, query.venue, query.area, query.status))


def _papers_by_year(index) -> dict[int, int]:
    """The store's papers per year, from the lexical index's chunk columns (no store read)."""
    years: dict[str, int] = {}
    for paper_id, year in zip(index.paper_ids, index.years.tolist(), strict=True):
        years.setdefault(paper_id, int(year))
    return dict(sorted(Counter(y for y in years.values() if y > 0).items()))


def count_answer(counted: Trend, query: Query, shown: int, backend: str, started: float) -> Answer:
    """ "how many papers study X?" answered with the count (never an LLM's: a model does not count), by year,
    citing the `shown` most relevant members."""
    import time

    cited = counted.members[:shown]
    if not counted.members:
        text = f"No paper in the store is on \u201c{counted.topic}\u201d ({counted.judged} candidates judged)."
    else:
        bound = "" if counted.complete else "at least "
        years = ", ".join(f"{year}: {n}" for year, n in counted.by_year.items())
        noun = "paper in the store is" if counted.count == 1 else "papers in the store are"
        first = f"{bound}{counted.count} {noun} on \u201c{counted.topic}\u201d ({years})."
        lines = [first[0].upper() + first[1:]]
        lines.append("The most relevant:" if len(cited) < counted.count else "They are:")
        lines += [f"- {source.label} [{source.id}]" for source in cited]
        lines.append(f"Each paper was judged on its own; {MEASURED}: check the list with `rag trend`.")
        text = "\n".join(lines)
    query = replace(query, excludes=counted.excluding, excluded=tuple(counted.left_out))
    text += left_out_note(query)
    timings = {"total": (time.perf_counter() - started) * 1000}
    return Answer(query, text, [s.id for s in cited], cited, not counted.members, backend, [], timings, None)
