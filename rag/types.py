"""The values the question's path passes along, in one place: what was found, what was judged, what was answered.

    Source     a retrieved paper (its best chunk, its scores, the evidence the judge reads)
    Retrieval  the papers found for a query, best first
    Verdict    the judge's decision: answer or not, why, and the evidence it rests on (rag.judge)
    Answer     the cited answer, with the sentences it quoted
    Event      one step of a streamed answer (rag.pipeline yields them; every client reads them)

Plain data: no I/O, nothing heavy imported. How each is written as JSON is rag.wire's.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from .corpus import first_words
from .query import Query

if TYPE_CHECKING:
    from .followups import Resolution

# What a paper holds of one facet of a topic: the facet as written, and the share of it held (0-1; rag.facets).
Share = tuple[str, float]


@dataclass
class Source:
    """A retrieved paper as the answer and the user see it."""

    id: str
    title: str | None
    year: int | None
    venue: str | None
    score: float  # the cosine similarity of the paper's best chunk, whatever ranked it
    snippet: str  # that chunk's text
    abstract: str = field(default="", repr=False)
    # Share of the question's terms found in this paper (set on the top paper by the lexical modes).
    term_coverage: float | None = None
    # The reranker's calibrated probability that this paper answers the question (None with RAG_RERANKER=off).
    relevance: float | None = None
    # For a topic question: each facet of the topic with the share of it this paper holds (rag.facets); else None.
    facet_shares: tuple[Share, ...] | None = None
    # Its rank in the retrieval that found it (0 first; rag.retrieval.fuse), which the reranker's calibration
    # weighs; None: its place in the list it is in.
    fused_rank: int | None = None
    # The paper's link (rag.corpus.paper_url), primary area and decision (rag.corpus.DECISIONS), when known.
    url: str | None = None
    area: str | None = None
    status: str | None = None

    @property
    def label(self) -> str:
        """The title, or the abstract's first words (seed lists carry no titles)."""
        return self.title or first_words(self.abstract or self.snippet)

    @property
    def text(self) -> str:
        """Title and abstract as one text: what the lexical evidence (names, facets, coverage, phrases) reads."""
        return f"{self.title or ''}. {self.abstract or self.snippet}"

    @property
    def closeness(self) -> float:
        """What the evidence bar judged of this paper: its relevance, or else (reranker off) its cosine."""
        return self.relevance if self.relevance is not None else self.score


@dataclass
class Retrieval:
    query: Query  # as applied: a venue the store does not use is dropped, misspelled words corrected
    sources: list[Source]
    elapsed_ms: float = 0.0
    # Every reranked candidate, best first (`sources` is its top k): what the learned judge weighs.
    candidates: list[Source] = field(default_factory=list)

    @property
    def filters(self) -> dict:
        """The year/venue/area/status restrictions applied, and what the question left out."""
        query = self.query
        applied = (
            ("year", query.year),
            ("since", query.since),
            ("until", query.until),
            ("venue", query.venue),
            ("area", query.area),
            ("status", query.status),
            ("excluding", query.excludes if query.excluded else None),  # "… but NOT the multi-view ones"
        )
        return {name: value for name, value in applied if value}


# Why the judge answered or refused, one word each; `rag.judge.refusal` words the refusals.
Reason = Literal[
    "evidence",  # the evidence clears every bar
    "chosen",  # the user chose the papers (a follow-up about them) or turned the bars off: no bar applies
    "no_papers",  # nothing was found (the store, or the year/venue restriction, has no match)
    "topic",  # a topic question no paper holds every part of
    "count",  # a count question no relevant paper gives a number for
    "detail",  # the question names a paper and a detail (dataset, benchmark, metric, model) that paper never writes
    "unsaid",  # the question names a paper, and that paper writes too few of the question's other words
    "relevance",  # the best paper's calibrated relevance is below the bar
    "score",  # the best paper's cosine is below the bar (the reranker off)
    "judged",  # the learned judge: no candidate is likely enough to answer (its weakest evidence says why)
    "record",  # the question asks a field of its paper's record the store holds (rag.record): answered from it
    "not_held",  # the question asks a field of its paper's record the store does not hold (authors, a code link)
]


@dataclass(frozen=True)
class Verdict:
    """The judge's one decision on a question's candidates (rag.judge): every later stage reads it."""

    answers: bool
    reason: Reason
    closest: Source | None = None  # the paper a refusal names
    # Ids of the papers holding every facet of a topic question; None when the rule does not apply.
    holding: frozenset[str] | None = None
    # Ids of the papers giving a number of what a count question counts; None when the rule does not apply.
    counting: frozenset[str] | None = None
    # "what is X?" answered because a retrieved paper writes X, whatever its relevance.
    defined: bool = False
    # The learned judge: the ids of the papers that answer, most likely first (None from the rules judge).
    members: tuple[str, ...] | None = None
    # The learned judge: the closest paper's probability of answering, and its weakest evidence (EVIDENCE's name).
    likelihood: float | None = None
    weakest: str | None = None
    # The rules judge, a list question: the candidates ranked below the k shown that pass the same membership
    # test (rag.judge.list_beyond); the answer lists them by title and id after the quoted ones.
    beyond: tuple[str, ...] = ()
    # The last candidate read was a member too: the store may hold more (a larger k reads more candidates).
    more_may_match: bool = False
    # A "detail" refusal: the question's names the closest paper writes, and those no relevant paper naming it does;
    # an "unsaid" one: the names its paper writes, and the question's other words it does not.
    named: tuple[str, ...] = ()
    unnamed: tuple[str, ...] = ()
    # A "record" or "not_held" verdict: the field of `closest`'s record asked for (rag.record.FIELD_QUESTIONS).
    asked: str | None = None

    def listed_only(self, quoted: int) -> frozenset[str]:
        """The members an answer names by title and id, not quoting them: the rules judge's members below k, and
        the learned judge's after the first `quoted` (`Policy.quoted_papers`)."""
        return frozenset(self.beyond) | frozenset((self.members or ())[quoted:])


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
    # Which sentences of each cited abstract the answer quotes: positions in `evidence.display_sentences(abstract)`
    # (the web page marks them in the abstract). Empty for an LLM's own words.
    quoted: dict[str, list[int]] = field(default_factory=dict)

    @property
    def question(self) -> str:
        return self.query.text


EventType = Literal["query", "sources", "text", "warning", "answer"]


@dataclass(frozen=True)
class Event:
    """One step of a streamed answer: what was understood, what was found, text as it comes, the answer."""

    type: EventType
    query: Query | None = None  # "query": the question as understood and applied
    resolved: Resolution | None = None  # "query", in a conversation: how the follow-up was read
    sources: list[Source] | None = None  # "sources": the retrieved papers
    text: str = ""  # "text": a checked piece of the answer; "warning": the warning
    answer: Answer | None = None  # "answer": the final Answer (citations checked)
