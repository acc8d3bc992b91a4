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

import threading
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from .config import Settings, default_store
from .conversation import Conversation, PastTurn
from .errors import InputError, StoreError
from .followups import ChatState
from .query import STATUS_FILTERS, Query, parse
from .types import Answer, Event, Retrieval, Source

if TYPE_CHECKING:
    from collections.abc import Sequence

    from .corpus import Paper
    from .embedding import Embedder
    from .pipeline import Pipeline
    from .similar import Similar
    from .store import Store
    from .trend import Trend

__all__ = ["Event", "Papers", "PastTurn"]


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
    with store.reading():  # the count is Chroma's first read: a full disk fails it, as one line
        empty = store.collection(embedder) is None or store.collection().count() == 0
    if empty:
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
        settings = settings or Settings.from_env()
        if store is not None:
            settings = replace(settings, store=Path(store).expanduser(), chroma_url=None)
        if chroma_url:
            settings = replace(settings, chroma_url=chroma_url)
        self.settings = settings
        self._pipeline: Pipeline | None = None
        self._lock = threading.Lock()

    @property
    def pipeline(self) -> Pipeline:
        """The store, the models and the policy, opened once (an empty default store is filled first)."""
        with self._lock:
            if self._pipeline is None:
                from .pipeline import Pipeline  # the models: loaded on first use, so `Papers()` is instant

                store, embedder = open_store(self.settings, auto_seed=is_default_store(self.settings))
                self._pipeline = Pipeline(store, embedder, self.settings)
            return self._pipeline

    def ask(
        self,
        question: str,
        k: int | None = None,
        year: int | None = None,
        venue: str | None = None,
        backend: str | None = None,
        history: Sequence[PastTurn] | None = None,
        area: str | None = None,
        status: str | None = None,
    ) -> Answer:
        """The answer to `question`, citing only retrieved papers. An LLM that fails falls back to the
        extractive answer, with the reason in `Answer.warnings`. `area` (a primary area, any case) and `status`
        (accepted, oral, spotlight, poster, rejected, withdrawn) keep only those papers; one the store has no paper
        of is an `InputError` naming what it has.

        With `history` (the earlier turns, oldest first; may be empty) the question is read as a follow-up, as
        `rag chat` reads it: "the second one", "only 2025 ones", "compare them".
        """
        from .pipeline import answer_of

        return answer_of(self._events(question, k, year, venue, backend, history, area, status, stream=False))

    def stream(
        self,
        question: str,
        k: int | None = None,
        year: int | None = None,
        venue: str | None = None,
        backend: str | None = None,
        history: Sequence[PastTurn] | None = None,
        area: str | None = None,
        status: str | None = None,
    ) -> Iterator[Event]:
        """The answer as events: "query", "sources", then "text" pieces (and any "warning"), then "answer".

        The question is parsed before the first event, so a bad question raises here, not midway. Leaving the
        loop early (or closing the generator) stops the answer there. `history`, `area`, `status`: as for `ask`.
        """
        return self._events(question, k, year, venue, backend, history, area, status, stream=True)

    def _events(
        self,
        question: str,
        k: int | None,
        year: int | None,
        venue: str | None,
        backend: str | None,
        history: Sequence[PastTurn] | None,
        area: str | None,
        status: str | None,
        stream: bool,
    ) -> Iterator[Event]:
        # A bad question (or status) raises now, before the store opens.
        query = parse(question, year=year, venue=venue, area=area, status=status)
        pipeline = self.pipeline
        if history is None:
            return pipeline.run(query, k=k, backend=backend, stream=stream)
        state = ChatState(
            k=k or self.settings.k,
            backend=backend or self.settings.backend,
            year=year,
            area=query.area,
            status=query.status,
        )
        conversation = Conversation(pipeline, state, venue=venue)
        conversation.replay(history)
        return conversation.run(question, stream=stream)

    def search(
        self,
        query: str,
        k: int | None = None,
        year: int | None = None,
        venue: str | None = None,
        area: str | None = None,
        status: str | None = None,
    ) -> list[Source]:
        """The papers that best match `query`, best first, each with its best chunk and cosine score (filters: as
        for `ask`)."""
        return self.search_query(parse(query, year=year, venue=venue, area=area, status=status), k).sources

    def search_query(self, query: Query, k: int | None = None) -> Retrieval:
        """The `Retrieval` for a parsed query (the query as applied, and the papers)."""
        return self.pipeline.retrieve(query, k=k)

    def similar(
        self,
        paper_id: str | None = None,
        text: str | None = None,
        k: int = 5,
        year: int | None = None,
        venue: str | None = None,
        area: str | None = None,
        status: str | None = None,
    ) -> tuple[Paper | None, list[Similar]]:
        """The `k` papers closest to the stored paper `paper_id` (itself left out) or to `text` (an abstract, a
        draft paragraph), each with the sentence pairs that make it close; and the paper asked about (None for a
        text). Filters: as for `ask`."""
        from .catalogue import filters_where
        from .similar import similar

        pipeline = self.pipeline
        where = filters_where(pipeline.store, parse("papers", year=year, venue=venue, area=area, status=status))
        return similar(pipeline.store, pipeline.embedder, self.settings, paper_id, text, k, where)

    def trend(
        self,
        topic: str,
        year: int | None = None,
        venue: str | None = None,
        area: str | None = None,
        status: str | None = None,
    ) -> Trend:
        """How many papers of the store are on `topic` ("unlearning", or "how many papers study unlearning?"), by
        year, area and decision, membership judged paper by paper as a list's is (rag.trend)."""
        from .trend import trend

        return trend(self.pipeline, parse(topic, year=year, venue=venue, area=area, status=status))

    def get(self, paper_id: str) -> Paper:
        """The paper `paper_id` (`NotFoundError` when the store has none)."""
        store = self.pipeline.store
        with store.reading():
            return store.get_paper(paper_id)

    def info(self) -> dict:
        """What the store holds: its paper count, label, and the years, venues, primary areas and statuses a filter
        can take, the areas and statuses with their papers (`[{"area", "papers"}]`, `[{"status", "papers"}]`: the
        `status` values the filter takes, "accepted" counting oral, spotlight and poster papers)."""
        from .lexical import get_index

        store = self.pipeline.store
        with store.reading():
            index = get_index(store)
            facets = index.facets()
            decisions = facets["statuses"]
            statuses = {key: sum(decisions.get(d, 0) for d in kept) for key, kept in STATUS_FILTERS.items()}
            return {
                "papers": store.count_papers(),
                "store": self.settings.store_label,
                "backend": self.settings.backend,
                "years": sorted({int(y) for y in index.years if y > 0}),
                "venues": sorted({v for v in index.venues if v}),
                "areas": [{"area": area, "papers": n} for area, n in sorted(facets["areas"].items())],
                "statuses": [{"status": key, "papers": n} for key, n in statuses.items() if n],
            }
