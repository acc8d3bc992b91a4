"""`Papers`: the Python API, and the one core every client calls (the CLI, the chat, the eval, the servers).

    from rag import Papers
    papers = Papers()                       # the default store; Papers(store=PATH) or Papers(chroma_url=URL)
    answer = papers.ask("which papers study unlearning?", k=5)
    hits = papers.search("graph neural networks", k=3)
    paper = papers.get("001-02")            # NotFoundError when absent
    for event in papers.stream("which papers study unlearning?"):
        ...                                 # event.type: query, sources, text, warning, answer
    papers.ask("only 2025 ones", history=[PastTurn(question, answer.answer)])  # a follow-up, as `rag chat` reads it

The store and the embedding model open on first use, so constructing a `Papers` is instant; an empty default
store is first filled with the bundled seed abstracts (a store you name is yours to fill).
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from .conversation import PastTurn, resolution_json
from .errors import InputError, StoreError

if TYPE_CHECKING:
    from collections.abc import Sequence

    from .answer import Answer
    from .config import Settings
    from .conversation import Conversation
    from .corpus import Paper
    from .embedding import Embedder
    from .followups import Resolution
    from .query import Query
    from .retrieval import Retrieval, Source
    from .store import Store

__all__ = ["Event", "Papers", "PastTurn"]

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

    def to_json(self) -> dict:
        if self.type == "query" and self.query is not None:
            resolved = {} if self.resolved is None else {"resolved": resolution_json(self.resolved)}
            return {"type": "query", "query": self.query.to_json(), **resolved}
        if self.type == "sources":
            return {"type": "sources", "sources": [s.to_json() for s in self.sources or []]}
        if self.type == "answer" and self.answer is not None:
            return {"type": "answer", "answer": self.answer.to_json()}
        return {"type": self.type, "text": self.text}


def how_to_fill(settings: Settings | None = None) -> str:
    """How to put papers in a store, naming the bundled seeds (an installed wheel has no seeds/ to point at); for a
    store the user named, the commands name it too: copied without it, they would fill the default store."""
    import shlex

    from .corpus import bundled_seeds_dir

    where = ""
    if settings is not None and settings.chroma_url:
        where = f" --chroma-url {shlex.quote(settings.chroma_url)}"
    elif settings is not None and not is_default_store(settings):
        where = f" --store {shlex.quote(str(settings.store))}"
    try:
        seeds = f" (the bundled seed abstracts: `rag ingest {bundled_seeds_dir()}{where}`)"
    except InputError:
        seeds = ""
    return f"add papers with `rag ingest FILE...{where}`{seeds}"


def is_default_store(settings: Settings) -> bool:
    """Whether `settings` point at the per-user default store (the one that fills itself), not one named."""
    from .config import default_store

    return not settings.chroma_url and settings.store == default_store()


def open_store(
    settings: Settings,
    auto_seed: bool,
    ingest: Callable[[Store, list[Paper], Embedder], object] | None = None,
    on_note: Callable[[str], None] | None = None,
) -> tuple[Store, Embedder]:
    """The store and the embedder, ready to query. An empty store is filled with the bundled seeds when
    `auto_seed` (through `ingest`, which a client may give a progress display), else a clear `StoreError`."""
    from .embedding import get_embedder
    from .store import Store

    # Opening a Chroma store creates it: a mistyped --store must not leave an empty database behind.
    if not auto_seed and not settings.chroma_url and not (settings.store / "chroma.sqlite3").is_file():
        raise StoreError(f"no store at {settings.store_label}: {how_to_fill(settings)}")
    store = Store(settings)
    embedder = get_embedder(settings)
    if store.collection(embedder) is None or store.collection().count() == 0:
        if not auto_seed:
            raise StoreError(f"the store at {settings.store_label} is empty: {how_to_fill(settings)}")
        from .ingest import fill_with_seeds

        fill_with_seeds(store, embedder, using=ingest, on_note=on_note)
    return store, embedder


class Papers:
    """Questions and searches over one store of paper abstracts."""

    def __init__(
        self, store: str | Path | None = None, chroma_url: str | None = None, settings: Settings | None = None
    ) -> None:
        from .config import Settings

        settings = settings or Settings.from_env()
        if store is not None:
            settings = replace(settings, store=Path(store).expanduser(), chroma_url=None)
        if chroma_url:
            settings = replace(settings, chroma_url=chroma_url)
        self.settings = settings
        self._opened: tuple[Store, Embedder] | None = None
        self._lock = threading.Lock()

    def _open(self) -> tuple[Store, Embedder]:
        with self._lock:
            if self._opened is None:
                self._opened = open_store(self.settings, auto_seed=is_default_store(self.settings))
            return self._opened

    def _prepare(
        self, question: str, year: int | None, venue: str | None, backend: str | None
    ) -> tuple[Query, Store, Embedder, Settings]:
        """The question parsed (a bad one raises before the store opens), the open store, and the settings with
        `backend` applied: what `ask` and `stream` start from."""
        from .query import parse

        query = parse(question, year=year, venue=venue)
        store, embedder = self._open()
        return query, store, embedder, replace(self.settings, backend=backend) if backend else self.settings

    def ask(
        self,
        question: str,
        k: int | None = None,
        year: int | None = None,
        venue: str | None = None,
        backend: str | None = None,
        history: Sequence[PastTurn] | None = None,
    ) -> Answer:
        """The answer to `question`, citing only retrieved papers. An LLM that fails falls back to the
        extractive answer, with the reason in `Answer.warnings`.

        With `history` (the earlier turns, oldest first; may be empty) the question is read as a follow-up, as
        `rag chat` reads it: "the second one", "only 2025 ones", "compare them".
        """
        from .answer import ask

        query, store, embedder, settings = self._prepare(question, year, venue, backend)
        if history is None:
            return ask(query, store, embedder, settings, settings.backend, k=k)
        return self._conversation(settings, history, k, year, venue).ask(question).answer

    def _conversation(
        self, settings: Settings, history: Sequence[PastTurn], k: int | None, year: int | None, venue: str | None
    ) -> Conversation:
        """A conversation rebuilt from the turns a stateless client sends back (`Conversation.replay`)."""
        from .conversation import Conversation
        from .followups import ChatState

        store, embedder = self._open()
        state = ChatState(k=k or settings.k, backend=settings.backend, year=year)
        conversation = Conversation(store, embedder, settings, state, venue=venue)
        conversation.replay(history)
        return conversation

    def search(
        self, query: str, k: int | None = None, year: int | None = None, venue: str | None = None
    ) -> list[Source]:
        """The papers that best match `query`, best first, each with its best chunk and cosine score."""
        from .query import parse
        from .retrieval import retrieve

        store, embedder = self._open()
        return retrieve(parse(query, year=year, venue=venue), store, embedder, self.settings, k=k).sources

    def get(self, paper_id: str) -> Paper:
        """The paper `paper_id` (`NotFoundError` when the store has none)."""
        store, _ = self._open()
        with store.reading():
            return store.get_paper(paper_id)

    def info(self) -> dict:
        """What the store holds: its paper count, label, and the years and venues a filter can take."""
        from .lexical import get_index

        store, _ = self._open()
        with store.reading():
            index = get_index(store)
            return {
                "papers": store.count_papers(),
                "store": self.settings.store_label,
                "backend": self.settings.backend,
                "years": sorted({int(y) for y in index.years if y > 0}),
                "venues": sorted({v for v in index.venues if v}),
            }

    def stream(
        self,
        question: str,
        k: int | None = None,
        year: int | None = None,
        venue: str | None = None,
        backend: str | None = None,
        history: Sequence[PastTurn] | None = None,
    ) -> Iterator[Event]:
        """The answer as events: "query", "sources", then "text" pieces (and any "warning"), then "answer".

        The question is parsed before the first event, so a bad question raises here, not midway. Leaving the
        loop early stops the answer at its next piece of text. `history`: as for `ask`.
        """
        query, store, embedder, settings = self._prepare(question, year, venue, backend)
        events: queue.Queue[Event | BaseException | None] = queue.Queue()
        stopped = threading.Event()
        resolved: list[Resolution] = []

        def on_text(piece: str) -> None:
            if stopped.is_set():
                raise _Stopped
            events.put(Event("text", text=piece))

        def on_retrieved(found: Retrieval) -> None:
            events.put(Event("query", query=found.query, resolved=resolved[0] if resolved else None))
            events.put(Event("sources", sources=list(found.sources)))

        def on_warning(warning: str) -> None:
            events.put(Event("warning", text=warning))

        def answer() -> Answer:
            from .answer import ask

            if history is None:
                return ask(
                    query,
                    store,
                    embedder,
                    settings,
                    settings.backend,
                    k=k,
                    on_text=on_text,
                    on_warning=on_warning,
                    on_retrieved=on_retrieved,
                )
            turn = self._conversation(settings, history, k, year, venue).ask(
                question, on_resolved=resolved.append, on_text=on_text, on_warning=on_warning, on_retrieved=on_retrieved
            )
            return turn.answer

        def work() -> None:
            try:
                events.put(Event("answer", answer=answer()))
            except _Stopped:
                pass
            except BaseException as exc:  # handed to the caller's thread, raised there
                events.put(exc)
            finally:
                events.put(None)

        # A thread, because the backends push text through callbacks while a caller pulls events.
        worker = threading.Thread(target=work, name="rag-stream", daemon=True)
        worker.start()
        try:
            while (item := events.get()) is not None:
                if isinstance(item, BaseException):
                    raise item
                yield item
        finally:
            stopped.set()


class _Stopped(Exception):
    """The consumer left the stream: end the answer being written."""
