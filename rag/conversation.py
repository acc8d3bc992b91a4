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

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from .citations import find_citations
from .errors import RagError
from .followups import (
    HISTORY_TURNS,
    ChatState,
    Resolution,
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
from .query import asks_for_list, coined_names

if TYPE_CHECKING:
    from .answer import Answer
    from .config import Settings
    from .embedding import Embedder
    from .query import Query
    from .retrieval import Retrieval
    from .store import Store


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

    def resolved_json(self) -> dict:
        """How the follow-up was read, as `rag chat --json` reports it."""
        return resolution_json(self.resolution)


def resolution_json(resolution: Resolution) -> dict:
    return {
        "query": resolution.query,
        "paper_ids": list(resolution.paper_ids),
        "year": resolution.year,
        "described": resolution.describe(),
    }


class Conversation:
    """Questions in context over one open store. `ask` answers and remembers; `state` is what it remembers."""

    def __init__(
        self,
        store: Store,
        embedder: Embedder,
        settings: Settings,
        state: ChatState | None = None,
        venue: str | None = None,
    ) -> None:
        self.store, self.embedder, self.settings = store, embedder, settings
        self.state = state or ChatState(k=settings.k, backend=settings.backend)
        self.venue = venue  # a venue filter set by the client (the web page's), for every question
        # Why the LLM failed while rewriting this turn's follow-up: the answer then goes straight to the
        # extractive backend instead of waiting for the same failing endpoint a second time.
        self.llm_failure: str | None = None

    # -- reading a follow-up ---------------------------------------------------------------------------

    def resolve(self, question: str) -> Resolution:
        """`question` made standalone in this conversation (the rules, then the LLM's wording when one is set)."""
        from .answer import clean_question

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

    def answer(
        self,
        resolution: Resolution,
        on_text: Callable[[str], None] | None = None,
        on_warning: Callable[[str], None] | None = None,
        on_retrieved: Callable[[Retrieval], None] | None = None,
    ) -> Answer:
        """The answer to a resolved question (not yet remembered: see `ask`)."""
        from .answer import ask

        state = self.state
        settings = self.settings
        if resolution.about_papers or self.named_papers_answer(resolution):
            # The user chose these papers: whether they match the question well enough is not the issue.
            settings = replace(settings, min_score=0.0)
        k = max(state.k, len(resolution.paper_ids))
        backend = state.backend
        skipped: list[str] = []
        if backend == "openai" and self.llm_failure:
            skipped.append(
                f"{self.llm_failure}; the conversation was read by the rules alone, "
                "showing the extractive answer instead"
            )
            if on_warning:
                on_warning(skipped[0])
            backend = "extractive"
        if resolution.about_papers and len(resolution.paper_ids) > 1 and backend == "extractive":
            result = self.side_by_side(resolution, settings, on_text, on_retrieved)
        else:
            result = ask(
                self.query(resolution),
                self.store,
                self.embedder,
                settings,
                backend,
                k=k,
                on_text=on_text,
                paper_ids=list(resolution.paper_ids) or None,
                on_warning=on_warning,
                on_retrieved=on_retrieved,
            )
        result.warnings[:0] = skipped
        return result

    def query(self, resolution: Resolution) -> Query:
        """The resolved question as searched: the client's venue filter applied when the question names none."""
        query = resolution.to_query()
        if self.venue and not query.venue:
            from .query import normalize_venue

            query = replace(query, venue=normalize_venue(self.venue), venue_in_text=False)
        return query

    def ask(
        self,
        question: str,
        on_resolved: Callable[[Resolution], None] | None = None,
        on_text: Callable[[str], None] | None = None,
        on_warning: Callable[[str], None] | None = None,
        on_retrieved: Callable[[Retrieval], None] | None = None,
    ) -> Turn:
        """Resolve `question` in context, answer it, and remember the exchange."""
        resolution = self.resolve(question)
        if on_resolved:
            on_resolved(resolution)
        result = self.answer(resolution, on_text, on_warning, on_retrieved)
        remember(self.state, question, resolution, result)
        return Turn(question, resolution, result, list(result.warnings))

    def named_papers_answer(self, resolution: Resolution) -> bool:
        """A question about named papers whose abstracts use its words ("is it tested on RWKU?")."""
        if not resolution.paper_ids:
            return False
        words = content_words(resolution.query)
        papers = self.store.get_papers(resolution.paper_ids).values()
        return bool(words) and any(mentions(words, paper.abstract) for paper in papers)

    def side_by_side(
        self,
        resolution: Resolution,
        settings: Settings,
        on_text: Callable[[str], None] | None,
        on_retrieved: Callable[[Retrieval], None] | None = None,
    ) -> Answer:
        """Extractive "compare them": each paper's best sentences on the topic, so none is dropped as a weaker match."""
        from .answer import Answer, ask
        from .retrieval import Retrieval

        parts = [
            ask(resolution.query, self.store, self.embedder, settings, "extractive", k=1, paper_ids=[pid])
            for pid in resolution.paper_ids
        ]
        sources = [part.sources[0] for part in parts if part.sources]
        if on_retrieved:
            on_retrieved(Retrieval(resolution.to_query(), sources))
        lines = [line for part in parts for line in part.answer.splitlines()[1:]]
        text = f"{len(lines)} papers side by side:\n" + "\n".join(lines)
        if on_text:
            on_text(text)
        timings = {key: sum(p.timings_ms.get(key, 0.0) for p in parts) for key in ("retrieve", "generate", "total")}
        return Answer(
            resolution.to_query(), text, find_citations(text), sources, False, "extractive", [], timings, None
        )

    # -- a conversation sent back by a stateless client ------------------------------------------------

    def replay(self, turns: Iterable[PastTurn]) -> None:
        """Rebuild the state from earlier turns, reading each question through the same rules as a live chat.

        The papers each answer showed are the ids it cites, in order: what the user saw and can point back at
        ("the second one"). Nothing is retrieved or generated again; a turn the rules cannot read (it pointed at
        nothing) is skipped, as the live chat would have answered it with an error and remembered nothing.
        """
        from .answer import Answer
        from .followups import ResolveError

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


def _shown(paper):
    """A cited paper as a past answer showed it (for its label in the condense prompt)."""
    from .retrieval import Source

    return Source(paper.id, paper.title, paper.year, paper.venue, 0.0, "", paper.abstract)
