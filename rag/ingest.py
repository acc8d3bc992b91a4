"""Writing papers into a store: the windowed, resumable write, the writer lock, the rebuild swap, the first
run's seeding of the default store, then the indexes derived from the store.

The store (rag/store.py) is the Chroma adapter: it opens, reads and checks. This module is the one writer, and
the one place that writes the store and then refreshes the lexical index (rag/lexical.py, which reads chunks
through the store), so neither of those calls the other.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from .chunking import Chunk, chunk_paper, labels, metadata_hash, paper_hash
from .errors import StoreError
from .store import REBUILT, Store, ensure_search_beam, explain, set_metadata

if TYPE_CHECKING:
    from .config import Settings
    from .corpus import Paper
    from .embedding import Embedder

Progress = Callable[[int, int | None], None]
Window = list[tuple["Paper", int, list[Chunk]]]  # (paper, its chunks in the store now, its new chunks)
# Papers whose labels alone changed, rewritten per Chroma call: 512 papers' chunks (~1.5k at 31.5k papers' rate)
# keep one call well under Chroma's batch limit.
RELABEL_BATCH = 512


@dataclass
class IngestReport:
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    chunks_embedded: int = 0

    @property
    def total(self) -> int:
        return self.added + self.updated + self.unchanged


def ingest(
    store: Store,
    papers: Iterable[Paper],
    embedder: Embedder,
    rebuild: bool = False,
    on_progress: Progress | None = None,
    total: int | None = None,
    refresh_index: bool = True,
) -> IngestReport:
    """Add new papers, replace changed ones, skip unchanged ones, streaming: memory holds one window of chunks,
    not the corpus. Safe to kill at any point: a rerun redoes only unfinished papers. Then the BM25 index is
    brought up to date now rather than at the first question (`refresh_index=False`, or `write`: at its next use).

    The caller holds the writer lock (`ingest_lock`): a rebuild swap cut short earlier is settled first.
    """
    recover_rebuild(store)
    if rebuild:
        report = _rebuild(store, papers, embedder, on_progress, total)
    else:
        report = Writer(store, embedder, on_progress).run(papers, total)
    if refresh_index and (report.added or report.updated or rebuild):
        from . import lexical

        lexical.refresh(store)
    return report


write = partial(ingest, refresh_index=False)  # the store only: the BM25 index notices the change at its next use


# -- the windowed writer ---------------------------------------------------------------------------------------


class Writer:
    """One ingest into one collection: papers are hashed against the store, changed ones chunked, embedded a
    window at a time, and written on a second thread while the next window is embedded (one write in flight)."""

    def __init__(self, store: Store, embedder: Embedder, on_progress: Progress | None = None) -> None:
        self.store = store
        self.embedder = embedder
        self.on_progress = on_progress
        self.report = IngestReport()

    def run(self, papers: Iterable[Paper], total: int | None = None) -> IngestReport:
        if isinstance(papers, list) and total is None:
            total = len(papers)
        store, embedder, on_progress, report = self.store, self.embedder, self.on_progress, self.report
        existing = store.collection(embedder)  # an existing store must have been built with this embedder
        if existing is not None:
            ensure_search_beam(existing)  # a store made before EF_SEARCH searches as exactly as a new one
        settings = store.settings
        stored = store.stored_papers()
        window: Window = []
        window_chunks = 0
        relabel: list[tuple[Paper, int]] = []  # (paper, its chunks): papers whose labels alone changed
        done = 0
        last_progress = 0.0
        changing = False  # a paper to add, replace or relabel was seen
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="rag-write") as writer:
            pending: Future | None = None
            for paper in papers:
                digest = paper_hash(paper, settings.chunk_tokens, settings.chunk_overlap, embedder.name)
                previous = stored.get(paper.id)
                same_text = previous is not None and previous[0] == digest
                if same_text and previous[2] == metadata_hash(paper):
                    report.unchanged += 1
                    done += 1
                else:
                    if not changing:
                        changing = True
                        if store.collection() is not None:
                            # Invalidate derived indexes before the first write, in case we die mid-way. (A flag,
                            # not `report`: the writer thread fills that in later, so it cannot tell the first.)
                            store.bump_generation()
                    if same_text:
                        # Only the labels changed (link, area, decision): its chunks' metadata is rewritten, and
                        # nothing is embedded again.
                        relabel.append((paper, previous[1]))
                        if len(relabel) >= RELABEL_BATCH:
                            pending = self._submit(writer, pending, self._relabel, relabel)
                            done += len(relabel)
                            relabel = []
                    else:
                        chunks = chunk_paper(paper, settings.chunk_tokens, settings.chunk_overlap, embedder.name)
                        window.append((paper, previous[1] if previous else 0, chunks))
                        window_chunks += len(chunks)
                        if window_chunks >= settings.ingest_window:
                            pending = self._embed_and_submit(window, writer, pending)
                            done += len(window)
                            window, window_chunks = [], 0
                if on_progress and time.monotonic() - last_progress > 0.2:
                    on_progress(done, total)
                    last_progress = time.monotonic()
            if window:
                pending = self._embed_and_submit(window, writer, pending)
                done += len(window)
            if relabel:
                pending = self._submit(writer, pending, self._relabel, relabel)
                done += len(relabel)
            if pending is not None:
                pending.result()
        if on_progress:
            on_progress(done, total if total is not None else done)
        if report.added or report.updated:
            self._finish()
        return report

    def _embed_and_submit(self, window: Window, writer: ThreadPoolExecutor, pending: Future | None) -> Future:
        chunks = [chunk for _, _, paper_chunks in window for chunk in paper_chunks]
        vectors = self.embedder.embed([c.embed_text for c in chunks])
        if pending is not None:
            pending.result()  # the previous window is written (or its error raised) before the next goes
        # Created on first write: an endpoint's embedding dimension is known only after its first reply.
        self.store.collection(self.embedder, create=True)
        return writer.submit(self._write, window, chunks, vectors)

    def _submit(self, writer: ThreadPoolExecutor, pending: Future | None, write: Callable, *args) -> Future:
        """`write(*args)` on the writer thread, once the write before it is done (or its error raised)."""
        if pending is not None:
            pending.result()
        return writer.submit(write, *args)

    def _relabel(self, papers: list[tuple[Paper, int]]) -> None:
        """Rewrite the labels (`rag.chunking.labels`) on every chunk of `papers`, in one call; the rest of each
        chunk's metadata, its text and its vector stay (Chroma merges the keys given)."""
        ids: list[str] = []
        metadatas: list[dict] = []
        for paper, n_chunks in papers:
            changes = labels(paper)
            for number in range(n_chunks):
                ids.append(f"{paper.id}#{number}")
                metadatas.append(changes)
        try:
            self.store.collection().update(ids=ids, metadatas=metadatas)
        except Exception as exc:
            raise StoreError(explain(exc, self.store.settings.store_label)) from None
        self.report.updated += len(papers)

    def _write(self, window: Window, chunks: list[Chunk], vectors) -> None:
        """Write whole papers in one call per batch, so a paper is never half-updated."""
        collection = self.store.collection()
        # Stale chunks go first: if we die after this, chunk 0 still carries the old hash and the
        # paper is redone on the next run.
        stale = [f"{paper.id}#{n}" for paper, old, new in window for n in range(len(new), old)]
        try:
            if stale:
                collection.delete(ids=stale)
            collection.upsert(
                ids=[c.id for c in chunks],
                embeddings=vectors,
                documents=[c.text for c in chunks],
                metadatas=[c.metadata for c in chunks],
            )
        except Exception as exc:
            raise StoreError(explain(exc, self.store.settings.store_label)) from None
        for _, old, _ in window:
            if old:
                self.report.updated += 1
            else:
                self.report.added += 1
        self.report.chunks_embedded += len(chunks)

    def _finish(self) -> None:
        """Record the paper count and move to a new generation (derived indexes see they are stale)."""
        collection = self.store.collection()
        papers = len(collection.get(where={"chunk": 0}, include=[])["ids"])
        self.store.bump_generation(papers=papers)


# -- rebuilding ------------------------------------------------------------------------------------------------


def _rebuild(
    store: Store, papers: Iterable[Paper], embedder: Embedder, on_progress: Progress | None, total: int | None
) -> IngestReport:
    """Build a fresh collection beside the old one and swap it in only when complete.

    The swap is four steps, and a kill between any two leaves a complete collection to read (`Store` reads
    through it) and a state `recover_rebuild` finishes: (1) the new collection is marked complete; (2) the old
    one is renamed aside; (3) the new one takes the final name; (4) the old one is deleted.
    """
    final = store.settings.collection
    temp_name, aside_name = store.swap_names()
    temp = Store(replace(store.settings, collection=temp_name), client=store.client, fallback=False)
    report = Writer(temp, embedder, on_progress).run(papers, total)
    new = temp.collection(embedder, create=True)  # exists even when nothing was added
    try:
        set_metadata(new, **{REBUILT: True})  # (1)
        old = store.find(final)
        if old is not None:
            old.modify(name=aside_name)  # (2)
        new.modify(name=final)  # (3)
        if old is not None:
            store.client.delete_collection(aside_name)  # (4)
    except Exception as exc:
        raise StoreError(explain(exc, store.settings.store_label)) from None
    store.forget_collection()
    return report


def recover_rebuild(store: Store) -> None:
    """Settle a rebuild that was cut short: a complete new collection is swapped in (the steps of `_rebuild`
    that did not run), an unfinished one deleted (the old one stands). Only under the writer lock."""
    from chromadb.errors import NotFoundError as ChromaNotFound

    if not store.fallback:
        return  # a rebuild's own collection
    final = store.settings.collection
    temp_name, aside_name = store.swap_names()
    try:
        new, aside = store.find(temp_name), store.find(aside_name)
        if new is None and aside is None:
            return  # the usual case: no rebuild was interrupted
        if new is not None and not (new.metadata or {}).get(REBUILT):
            store.client.delete_collection(temp_name)  # killed while filling it
            new = None
        current = store.find(final)
        if new is not None:
            if current is not None:
                if aside is not None:
                    store.client.delete_collection(aside_name)  # older still than the current one
                current.modify(name=aside_name)
                aside = current
            new.modify(name=final)
        elif current is None and aside is not None:
            aside.modify(name=final)  # the old one back: there is no new one
            aside = None
        if aside is not None:
            with contextlib.suppress(ChromaNotFound):  # a delete cut short may have finished
                store.client.delete_collection(aside_name)
    except Exception as exc:
        raise StoreError(explain(exc, store.settings.store_label)) from None
    store.forget_collection()


# -- one writer per store --------------------------------------------------------------------------------------


def _lock_path(settings: Settings) -> Path:
    if settings.chroma_url:
        from platformdirs import user_cache_dir

        key = hashlib.sha1(f"{settings.chroma_url}|{settings.collection}".encode()).hexdigest()[:12]
        return Path(user_cache_dir("rag-papers", appauthor=False)) / "locks" / f"{key}.lock"
    return settings.store / ".ingest.lock"


@contextmanager
def ingest_lock(settings: Settings) -> Iterator[None]:
    """One writer per store: a second `rag ingest` exits with a clear message instead of interleaving."""
    import fcntl

    path = _lock_path(settings)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle = open(path, "a+")  # noqa: SIM115 - held open for the lock's lifetime
    except OSError as exc:
        raise StoreError(f"cannot write to the store at {settings.store_label} ({exc.strerror or exc})") from None
    try:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "unknown"
            raise StoreError(
                f"another `rag ingest` (pid {holder}) is writing to {settings.store_label}: "
                "wait for it to finish, then run this again"
            ) from None
        handle.seek(0)
        handle.truncate()
        handle.write(str(os.getpid()))
        handle.flush()
        yield
    finally:
        handle.close()  # closing releases the lock


# -- the default store's first run -----------------------------------------------------------------------------


def fill_with_seeds(
    store: Store,
    embedder: Embedder,
    using: Callable[[Store, list[Paper], Embedder], object] | None = None,
    on_note: Callable[[str], None] | None = None,
) -> None:
    """Fill an empty store with the bundled seed abstracts, under the writer lock, through `using` (a client's
    ingest, with a progress display) or this module's `ingest`."""
    from .corpus import bundled_seeds_dir, load_papers

    settings = store.settings
    papers = load_papers([bundled_seeds_dir()])
    if on_note:
        on_note(f"First run: indexing the {len(papers)} bundled seed abstracts into {settings.store_label}")
    with ingest_lock(settings):
        (using or ingest)(store, papers, embedder)
    store.forget_collection()
