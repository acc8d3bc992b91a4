"""A conversation about the papers, for every client that holds one: `rag chat`, the web page, `/v1/chat/completions`.

What a follow-up means ("the second one", "it", "and in 2025?", "compare them") is decided by the pure rules of
`rag/followups.py`; this module adds what those rules need from the world: the store (which ids exist, which
paper a coined name picks out), the LLM's rewrite of a follow-up (`prompts/condense.md`; the rules stand when the
endpoint fails), and the answer itself. No terminal, no HTTP: the chat prints what `Conversation.ask` returns,
the server sends it.

A client that keeps no state (an HTTP request carrying its earlier messages) rebuilds the conversation with
`Conversation.replay`, which reads the earlier turns through the same rules, so "the second one" in a request
means what it would have meant in `rag chat`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from .citations import find_citations
from .errors import RagError
from .followups import (
    HISTORY_TURNS,
    ChatState,
    Resolution,
    ResolveError,
    apply_condensed,
    candidate_ids,
    content_words,
    mentions,
    parse_condensed,
    remember,
    resolve,
)
from .prompts import load_prompt
from .prompts import render as fill
from .query import Query, asks_for_list, clean_question, coined_names, normalize_venue, parse
from .types import Answer, Event, Source

if TYPE_CHECKING:
    from .corpus import Paper
    from .pipeline import Pipeline


def _data(text: str) -> str:
    # The conversation is data for the prompt: no markup of ours can be forged inside it.
    return text.replace("<", "‹").replace(">", "›")


def condense_messages(state: ChatState, question: str, prompts_dir: Path | None = None) -> list[dict]:
    """The chat messages asking an LLM to rewrite `question` as a standalone question."""
    turn = load_prompt("condense_turn.md", prompts_dir)
    turns = []
    for exchange in state.history[-HISTORY_TURNS:]:
        papers = "\n".join(f"{n}. [{pid}] {_data(label)}" for n, (pid, label) in enumerate(exchange.papers, 1))
        answer = exchange.answer if len(exchange.answer) <= 800 else exchange.answer[:800] + " …"
        turns.append(fill(turn, question=_data(exchange.question), answer=_data(answer), papers=papers).strip())
    content = fill(load_prompt("condense.md", prompts_dir), history="\n".join(turns), question=_data(question))
    return [{"role": "user", "content": content.strip()}]


@dataclass(frozen=True)
class PastTurn:
    """An earlier exchange as a stateless client sends it back: the question and the answer it was shown."""

    question: str
    answer: str


@dataclass
class Turn:
    """One answered question: how it was read (`resolution`) and the answer."""

    question: str
    resolution: Resolution
    answer: Answer
    warnings: list[str] = field(default_factory=list)  # also in answer.warnings; here for callers that stream


class Conversation:
    """Questions in context over one store's pipeline. `run`/`ask` answer and remember; `state` is what it
    remembers."""

    def __init__(self, pipeline: Pipeline, state: ChatState | None = None, venue: str | None = None) -> None:
        self.pipeline = pipeline
        self.store, self.settings = pipeline.store, pipeline.settings
        self.state = state or ChatState(k=self.settings.k, backend=self.settings.backend)
        self.venue = venue  # a venue filter set by the client (the web page's), for every question
        # Why the LLM failed while rewriting this turn's follow-up: the answer then goes straight to the
        # extractive backend instead of waiting for the same failing endpoint a second time.
        self.llm_failure: str | None = None

    # -- reading a follow-up ---------------------------------------------------------------------------

    def resolve(self, question: str) -> Resolution:
        """`question` made standalone in this conversation (the rules, then the LLM's wording when one is set)."""
        self.llm_failure = None
        question = clean_question(question)
        known = set(self.store.get_papers(candidate_ids(question)))
        named: list[str] = []
        if not asks_for_list(question):
            for word in coined_names(question):
                papers = self.store.papers_mentioning(word)
                if len(papers) == 1:  # a name only one paper uses
                    named.append(papers[0])
        resolution = resolve(question, self.state, known, named)
        if self.state.backend == "openai" and self.state.history:
            condensed = self.condense(question)
            if condensed:
                resolution = apply_condensed(resolution, condensed, self.state)
        return resolution

    def condense(self, question: str) -> str | None:
        from .llm import LLM

        messages = condense_messages(self.state, question, self.settings.prompts_dir)
        try:  # behind the endpoint's circuit breaker, as the answer is: an endpoint that just failed is not waited on
            reply = LLM(self.settings).complete(messages, 120)
        except RagError as exc:
            self.llm_failure = str(exc)  # reported once, with the extractive answer (see `answer`)
            return None
        return parse_condensed(reply)

    # -- answering ---------------------------------------------------------------------------------------

    def answer(self, resolution: Resolution, stream: bool = True) -> Iterator[Event]:
        """The answer to a resolved question as events (not yet remembered: see `run`); the "query" event carries
        the resolution."""
        state = self.state
        policy = self.pipeline.policy
        if resolution.about_papers or self.named_papers_answer(resolution):
            # The user chose these papers: whether they match the question well enough is not the issue.
            policy = replace(policy, papers_chosen=True)
        k = max(state.k, len(resolution.paper_ids))
        backend = state.backend
        skipped: list[str] = []
        if backend == "openai" and self.llm_failure:
            skipped.append(
                f"{self.llm_failure}; the conversation was read by the rules alone, "
                "showing the extractive answer instead"
            )
            backend = "extractive"
        if resolution.about_papers and len(resolution.paper_ids) > 1 and backend == "extractive":
            events = self.side_by_side(resolution, policy)
        else:
            events = self.pipeline.run(
                self.query(resolution),
                k=k,
                backend=backend,
                paper_ids=list(resolution.paper_ids) or None,
                policy=policy,
                stream=stream,
            )
        for event in events:
            if event.type == "query":
                event = replace(event, resolved=resolution)
                yield event
                yield from (Event("warning", text=warning) for warning in skipped)  # after the `↳` line
                continue
            if event.type == "answer" and event.answer is not None:
                event.answer.warnings[:0] = skipped
            yield event

    def query(self, resolution: Resolution) -> Query:
        """The resolved question as searched: the client's venue filter applied when the question names none, and
        the conversation's area and status filters to an open question (not to papers the user named)."""
        query = resolution.to_query()
        if self.venue and not query.venue:
            query = replace(query, venue=normalize_venue(self.venue), venue_in_text=False)
        if not resolution.paper_ids and (self.state.area or self.state.status):
            query = replace(query, area=self.state.area, status=self.state.status)
        return query

    def run(self, question: str, stream: bool = True) -> Iterator[Event]:
        """Resolve `question` in context, answer it as events, and remember the exchange once answered."""
        resolution = self.resolve(question)
        for event in self.answer(resolution, stream):
            if event.type == "answer" and event.answer is not None:
                remember(self.state, question, resolution, event.answer)
            yield event

    def ask(self, question: str) -> Turn:
        """`run`, consumed: the answered turn."""
        resolution, answer = None, None
        for event in self.run(question, stream=False):
            if event.type == "query":
                resolution = event.resolved
            elif event.type == "answer":
                answer = event.answer
        if resolution is None or answer is None:
            raise RagError("the answer stopped before it was complete")
        return Turn(question, resolution, answer, list(answer.warnings))

    def named_papers_answer(self, resolution: Resolution) -> bool:
        """A question about named papers whose abstracts use its words ("is it tested on RWKU?")."""
        if not resolution.paper_ids:
            return False
        words = content_words(resolution.query)
        papers = self.store.get_papers(resolution.paper_ids).values()
        return bool(words) and any(mentions(words, paper.abstract) for paper in papers)

    def side_by_side(self, resolution: Resolution, policy) -> Iterator[Event]:
        """Extractive "compare them": each paper's best sentences on the topic, so none is dropped as a weaker match."""
        query = parse(resolution.query)
        parts = [
            self.pipeline.answer(query, k=1, backend="extractive", paper_ids=[pid], policy=policy)
            for pid in resolution.paper_ids
        ]
        sources = [part.sources[0] for part in parts if part.sources]
        yield Event("query", query=resolution.to_query())
        yield Event("sources", sources=sources)
        lines = [line for part in parts for line in part.answer.splitlines()[1:]]
        text = f"{len(lines)} papers side by side:\n" + "\n".join(lines)
        yield Event("text", text=text)
        timings = {key: sum(p.timings_ms.get(key, 0.0) for p in parts) for key in ("retrieve", "generate", "total")}
        quoted = {pid: sentences for part in parts for pid, sentences in part.quoted.items()}
        answer = Answer(
            resolution.to_query(), text, find_citations(text), sources, False, "extractive", [], timings, None
        )
        answer.quoted = quoted
        yield Event("answer", answer=answer)

    # -- a conversation sent back by a stateless client ------------------------------------------------

    def replay(self, turns: Iterable[PastTurn]) -> None:
        """Rebuild the state from earlier turns, reading each question through the same rules as a live chat.

        The papers each answer showed are the ids it cites, in order: what the user saw and can point back at
        ("the second one"). Nothing is retrieved or generated again; a turn the rules cannot read (it pointed at
        nothing) is skipped, as the live chat would have answered it with an error and remembered nothing.
        """
        for past in list(turns)[-(HISTORY_TURNS + 2) :]:
            cited = find_citations(past.answer)
            known = set(self.store.get_papers(cited + candidate_ids(past.question)))
            try:
                resolution = resolve(past.question, self.state, known, ())
            except ResolveError:
                continue
            cited = [pid for pid in cited if pid in known]
            papers = self.store.get_papers(cited)
            sources = [_shown(papers[pid]) for pid in cited]
            answer = Answer(resolution.to_query(), past.answer, cited, sources, not cited, "replayed")
            remember(self.state, past.question, resolution, answer)


def _shown(paper: Paper) -> Source:
    """A cited paper as a past answer showed it (for its label in the condense prompt)."""
    return Source(paper.id, paper.title, paper.year, paper.venue, 0.0, "", paper.abstract)
