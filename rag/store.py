"""Chroma as the store: embedded `PersistentClient` by default, a `chroma run` server by configuration.

Each chunk is one Chroma record (`<paper id>#<chunk number>`); every record carries its paper's content
hash, so re-ingesting unchanged papers embeds nothing. The collection's metadata records the embedding
model that built it: querying with another model is refused rather than returning garbage.

This module opens, reads and checks the store; writing it (the windowed ingest, the writer lock, the rebuild
swap) is rag/ingest.py's.
"""

from __future__ import annotations

import re
import threading
import time
import uuid
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse

from .corpus import Paper, paper_url
from .errors import NotFoundError, RagError, StoreError

if TYPE_CHECKING:
    import numpy as np

    from .config import Settings
    from .embedding import Embedder


@dataclass(frozen=True)
class ChunkHit:
    chunk_id: str
    paper_id: str
    text: str
    score: float
    metadata: dict


def _client(settings: Settings):
    import chromadb
    from chromadb.config import Settings as ChromaSettings

    chroma_settings = ChromaSettings(anonymized_telemetry=False)
    if settings.chroma_url:
        url = urlparse(settings.chroma_url if "://" in settings.chroma_url else f"http://{settings.chroma_url}")
        try:
            return chromadb.HttpClient(
                host=url.hostname or "127.0.0.1",
                port=url.port or (443 if url.scheme == "https" else 8000),
                ssl=url.scheme == "https",
                settings=chroma_settings,
            )
        except Exception as exc:
            raise StoreError(f"cannot reach the Chroma server at {settings.chroma_url} ({_short(exc)})") from None
    try:
        settings.store.mkdir(parents=True, exist_ok=True)
        return chromadb.PersistentClient(path=str(settings.store), settings=chroma_settings)
    except Exception as exc:
        # Chroma keeps a system that failed to start (a full disk) cached for the path, and every later client
        # there fails with "no attribute 'bindings'": dropped, so the next open tries afresh.
        _forget_system(str(settings.store))
        raise StoreError(explain(exc, str(settings.store))) from None


def _forget_system(path: str) -> object | None:
    """Take the embedded Chroma system for `path` out of Chroma's process-wide cache (returned, not stopped):
    the next `PersistentClient` there starts a new one, reading the files afresh, while clients and collection
    handles of the old one keep working until they are dropped."""
    from chromadb.api.shared_system_client import SharedSystemClient

    with SharedSystemClient._refcount_lock:
        return SharedSystemClient._identifier_to_system.pop(path, None)


def _restore_system(path: str, system: object | None) -> None:
    """Put back a system `_forget_system` took, unless a new one took its place."""
    from chromadb.api.shared_system_client import SharedSystemClient

    if system is not None:
        with SharedSystemClient._refcount_lock:
            SharedSystemClient._identifier_to_system.setdefault(path, system)


def explain(exc: BaseException, label: str) -> str:
    """What went wrong with the store, in words a user can act on."""
    text = str(exc).lower()
    if "readonly database" in text or "read-only file system" in text:
        return f"the store at {label} is read-only, and Chroma must write even to read: copy it somewhere writable"
    if "not a database" in text or "malformed" in text:
        return (
            f"the store at {label} is damaged (not a readable Chroma database): keep it for recovery and "
            "rebuild into a new --store with `rag ingest --rebuild`"
        )
    if "no space left" in text or "disk is full" in text or "failed to apply logs" in text:
        return f"the store at {label} could not be written (is the disk full?): free space and run the command again"
    return f"the store at {label} failed ({_short(exc)})"


def set_metadata(collection, **changes: Any) -> None:
    """Change some of a collection's metadata, keeping the rest."""
    # Chroma replaces metadata wholesale and refuses to restate the distance function.
    meta = {k: v for k, v in (collection.metadata or {}).items() if not k.startswith("hnsw:")}
    meta.update(changes)
    collection.modify(metadata=meta)


def ensure_search_beam(collection) -> None:
    """Raise a collection's HNSW search beam to EF_SEARCH (one made before it was set, or by another tool)."""
    hnsw = (collection.configuration_json or {}).get("hnsw") or {}  # the raw form: `.configuration` warns
    if int(hnsw.get("ef_search") or 0) < EF_SEARCH:
        collection.modify(configuration={"hnsw": {"ef_search": EF_SEARCH}})


def _short(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else exc.__class__.__name__
    return text[:200]


OVERFETCH = 8
# HNSW's search beam. Chroma's default (100) made the dense list approximate at the depth fusion reads (80
# chunks): over fresh seed stores 27 of 290 eval questions lost a true top-80 chunk there, which moved a
# BM25-only paper's fused score with the index's build order (a different ranking after a server restart).
# At 400 none did in five fresh builds; 1.4 → 2.1 ms per query at 4.4k chunks (evals/ef_search.py). Stores
# made before get it on their next ingest (`ensure_search_beam`).
EF_SEARCH = 400
REBUILT = "rebuild_complete"  # metadata of a rebuild's new collection once every paper is in it
# How long a long-lived process (`rag serve`, a `Papers`) may answer from its old view of the store after another
# process's ingest: at most this often the collection's metadata is read again (one get_collection, 0.1-0.2 ms on
# the seed store), and a new generation drops the cached handle and count (and, embedded, reopens Chroma: see
# `Store.follow_disk`). Checking on every call would add that read to each of the several `collection()` calls
# of a query; 2 s keeps it off nearly every query, and a new paper still shows within a few seconds.
REFRESH_SECONDS = 2.0


def _simple_filter(where: dict) -> bool:
    """A filter of plain field equalities (what year/venue parsing builds) and of values among several (the status
    filter's `$in`, a venue named without a year), which `_passes` can check."""
    clauses = where.get("$and", [where])
    return all(
        len(c) == 1
        and not str(next(iter(c))).startswith("$")
        and (not isinstance(value := next(iter(c.values())), dict) or list(value) == ["$in"])
        for c in clauses
    )


def _passes(metadata: dict, where: dict) -> bool:
    return all(
        metadata.get(field) in value["$in"] if isinstance(value, dict) else metadata.get(field) == value
        for clause in where.get("$and", [where])
        for field, value in clause.items()
    )


def paper_of_chunk(chunk_id: str) -> str:
    """Chunk ids are "<paper id>#<n>"."""
    return chunk_id.rsplit("#", 1)[0]


class Store:
    """One collection of paper chunks."""

    def __init__(self, settings: Settings, client: Any = None, fallback: bool = True) -> None:
        self.settings = settings
        # A client of our own can be reopened when another process writes (`follow_disk`); a lent one is not.
        self._own_client = client is None
        self.client = client if client is not None else _client(settings)
        self._collection = None
        self._count: tuple[object, int] | None = None  # (collection handle, its chunk count)
        self._venues: tuple[object, dict[str, bool]] | None = None  # (collection handle, venue → whether used)
        # The generation whose vectors this client holds: read when the collection is first opened, moved on by
        # this Store's own writes; a different one on disk was written by another process.
        self._held: str | None = None
        self._reopen = False  # a read failed inside Chroma: the next read starts on a new system
        self._next_check = time.monotonic() + REFRESH_SECONDS
        self._following = threading.Lock()  # one check (and reopen) at a time; queries never wait on it
        # Read through an interrupted rebuild swap (`rag.ingest.recover_rebuild`); off for a rebuild's own collection.
        self.fallback = fallback

    # -- opening -----------------------------------------------------------------------------------

    def collection(self, embedder: Embedder | None = None, create: bool = False):
        """The collection, checked against `embedder`; `create` makes it when missing. Every read of the store
        passes here, so here it follows another process's writes (`follow_disk`)."""
        if time.monotonic() >= self._next_check:  # the hot path: one clock read
            self.follow_disk()
        collection = self._collection  # a local: another thread may drop the handle meanwhile
        if collection is None:
            name = self.settings.collection
            try:
                if create:
                    if embedder is None:
                        raise ValueError("creating a collection needs the embedder")
                    collection = self.client.get_or_create_collection(
                        name,
                        embedding_function=None,
                        metadata=self._manifest(embedder),
                        # `space` again here: given a configuration, Chroma ignores `hnsw:space` and takes l2
                        configuration={"hnsw": {"space": "cosine", "ef_search": EF_SEARCH}},
                    )
                else:
                    collection = self._readable(name)
            except Exception as exc:
                from chromadb.errors import NotFoundError as ChromaNotFound

                if isinstance(exc, ChromaNotFound) and not create:
                    return None
                raise StoreError(
                    f"cannot open collection {name!r} at {self.settings.store_label} ({_short(exc)})"
                ) from None
            if self._held is None:
                self._held = _generation_of(collection)
            self._collection = collection
        if embedder is not None:
            self._check_model(collection, embedder)
        return collection

    def follow_disk(self, force: bool = False) -> None:
        """Catch up with another process's writes, at most once every REFRESH_SECONDS (`force`: now).

        The collection's metadata is read again; when its generation is not the one this client holds, another
        writer changed the store: the cached handle, whose metadata (generation, paper count) is a snapshot, and
        the chunk count and venues kept with it are dropped. Embedded, that is not enough: a Chroma system keeps
        the HNSW index it loaded in memory and never sees vectors another process adds (a re-got collection
        still searches the old ones; only a new system reads the files afresh), so the client is reopened on a
        new system. A query already running keeps its handle on the old system, which stays usable until
        dropped. (With a Chroma server the vectors are the server's: a fresh handle is enough.)
        """
        if not self._following.acquire(blocking=force):
            return  # another thread is checking: this call reads the view as it is, rather than wait
        try:
            now = time.monotonic()
            if not force and now < self._next_check:
                return  # another thread just checked
            self._next_check = now + REFRESH_SECONDS
            if self._held is None and not self._reopen:
                return  # nothing read yet: the first open reads the disk as it is
            self._catch_up()
        finally:
            self._following.release()

    def _catch_up(self) -> None:
        """The check itself. It never fails a read: when Chroma cannot answer it (a server gone, a full disk),
        the read that follows says so, or answers from the view this process has; checked again later."""
        from chromadb.errors import NotFoundError as ChromaNotFound

        try:
            current = self._readable(self.settings.collection)
        except ChromaNotFound:
            current = None
        except Exception:
            if not self._reopen:
                return
            current = None  # the old system fails: a new one is tried below
        generation = _generation_of(current) if current is not None else None
        if generation == self._held and not self._reopen:
            return
        count: int | None = None
        if self._own_client and not self.settings.chroma_url:
            try:
                self.client, current, count = self._reopened()
            except RagError:
                return  # the old client still answers, from the old view
            generation = _generation_of(current) if current is not None else None
        self._collection = current
        self._count = (current, count) if current is not None and count is not None else None
        self._venues = None
        self._held = generation

    def _reopened(self) -> tuple[Any, Any, int | None]:
        """(a client on a new embedded Chroma system for the store, its collection, the chunk count): see
        `follow_disk`. The count is the new system's first read, where Chroma applies the log another writer
        left; when that fails (a full disk: another ingest stopped half-way), the old system is kept, and this
        process answers from its old view instead of failing every read until there is room."""
        from chromadb.errors import NotFoundError as ChromaNotFound

        path = self.client._identifier  # the key Chroma caches the system under: the path as it was given
        old = _forget_system(path)
        client = None
        try:
            client = _client(self.settings)
            try:
                collection = self._readable(self.settings.collection, client)
                count = collection.count()
            except ChromaNotFound:
                collection, count = None, None
            self._reopen = False
            return client, collection, count
        except Exception as exc:
            if client is not None and self._reopen:
                # The old system failed a read itself: no view to keep. The new one goes on (the read that
                # follows fails in one line), and `_reopen` stays: the next check starts another new system.
                return client, None, None
            _forget_system(path)  # the new system, if it started: dropped
            _restore_system(path, old)
            if isinstance(exc, RagError):
                raise
            raise StoreError(explain(exc, self.settings.store_label)) from None

    def _readable(self, name: str, client: Any = None):
        """The collection `name` (through `client`, else this Store's); while a rebuild's swap is cut short
        between its renames (no `name` for a moment), the complete one of the two beside it: the new if it was
        finished, else the old."""
        from chromadb.errors import NotFoundError as ChromaNotFound

        client = client or self.client
        try:
            return client.get_collection(name, embedding_function=None)
        except ChromaNotFound:
            if not self.fallback:
                raise
        temp_name, aside_name = self.swap_names()
        new = self.find(temp_name, client)
        if new is not None and (new.metadata or {}).get(REBUILT):
            return new
        old = self.find(aside_name, client)
        if old is not None:
            return old
        return client.get_collection(name, embedding_function=None)  # raises NotFound: there is none

    def swap_names(self) -> tuple[str, str]:
        """(the collection a rebuild fills, the name the old collection is moved to while the new one moves in)"""
        final = self.settings.collection
        return f"{final}-rebuild", f"{final}-replaced"

    def find(self, name: str, client: Any = None):
        """The collection `name` (through `client`, else this Store's), or None when there is none."""
        from chromadb.errors import NotFoundError as ChromaNotFound

        try:
            return (client or self.client).get_collection(name, embedding_function=None)
        except ChromaNotFound:
            return None

    def _manifest(self, embedder: Embedder) -> dict[str, Any]:
        from . import __version__

        return {
            "hnsw:space": "cosine",
            "embedding_model": embedder.name,
            "embedding_dim": embedder.dimension,
            "chunk_tokens": self.settings.chunk_tokens,
            "chunk_overlap": self.settings.chunk_overlap,
            "rag_version": __version__,
            "generation": uuid.uuid4().hex[:16],
        }

    def _check_model(self, collection, embedder: Embedder) -> None:
        meta = collection.metadata or {}
        built_with = meta.get("embedding_model")
        if built_with and built_with != embedder.name:
            raise StoreError(
                f"the store at {self.settings.store_label} was built with embedding model {built_with!r}, "
                f"not {embedder.name!r}: use the same model, or re-ingest with --rebuild"
            )

    def forget_collection(self) -> None:
        """Drop the cached collection handle (after this process changed the store through its client: a
        rebuild's swap; another process's writes are `follow_disk`'s)."""
        self._collection = None

    def generation(self) -> str:
        """Changes whenever an ingest changes the collection; derived indexes record the one they saw."""
        collection = self.collection()
        return _generation_of(collection) if collection is not None else "none"

    def bump_generation(self, papers: int | None = None) -> None:
        generation = uuid.uuid4().hex[:16]
        changes: dict[str, Any] = {"generation": generation}
        if papers is not None:
            changes["papers"] = papers
        with self.reading():
            set_metadata(self.collection(), **changes)
        # Written through this client, which holds every vector it wrote: not another writer's change.
        self._held = generation
        self._collection = None

    def exists(self) -> bool:
        return self.collection() is not None

    def count_papers(self) -> int:
        """Papers in the store: recorded by the last ingest, counted if it did not finish."""
        with self.reading():
            collection = self.collection()
            if collection is None:
                return 0
            recorded = (collection.metadata or {}).get("papers")
            if isinstance(recorded, int):
                return recorded
            return len(collection.get(where={"chunk": 0}, include=[])["ids"])

    def stored_papers(self) -> dict[str, tuple[str, int, str]]:
        """paper id → (content hash, number of chunks, labels' hash), read from each paper's chunk 0 (a store written
        before the labels were kept has no labels' hash: "", as a paper without labels has)."""
        with self.reading():
            collection = self.collection()
            if collection is None:
                return {}
            result = collection.get(where={"chunk": 0}, include=["metadatas"])
        return {
            meta["paper_id"]: (meta.get("paper_hash", ""), int(meta.get("n_chunks", 1)), meta.get("meta_hash", ""))
            for meta in result["metadatas"] or []
        }

    # -- reading -----------------------------------------------------------------------------------

    @contextmanager
    def reading(self) -> Iterator[None]:
        """Chroma's read failures (server gone, damaged files, a full disk) as one clear StoreError."""
        try:
            yield
        except RagError:
            raise  # already a user-facing failure: an unknown retriever is the user's input, not the store's fault
        except Exception as exc:
            self._after_failure(exc)
            raise StoreError(explain(exc, self.settings.store_label)) from None

    def _after_failure(self, exc: Exception) -> None:
        """After an embedded Chroma read failed inside Chroma (a full disk: "failed to apply logs"), the next
        read, here or by a new `Store` in this process, starts on a new Chroma system. Retried on the same one,
        `count()` hung for good within 2-5 tries (measured on a full tmpfs); on a new one each try fails at once,
        and succeeds once there is room."""
        from chromadb.errors import InternalError

        if isinstance(exc, InternalError) and self._own_client and not self.settings.chroma_url:
            _forget_system(self.client._identifier)
            self._reopen = True
            self._next_check = 0.0  # at the next read, not in REFRESH_SECONDS

    def query(self, vector: np.ndarray, n: int, where: dict | None = None, details: bool = True) -> list[ChunkHit]:
        """The `n` nearest chunks, best first, with cosine similarity as the score.

        `details=False` leaves out texts and metadata (ids and scores only): a caller that keeps a few hits
        reads those afterwards, instead of Chroma fetching every candidate's row from SQLite.
        """
        with self.reading():
            if where is not None and _simple_filter(where):
                # Chroma applies `where` by listing every matching id in SQLite first: at 91k chunks a year filter
                # costs 177 ms against 4 ms unfiltered. The year/venue filters of questions keep a large share of
                # the store, so the nearest OVERFETCH × n chunks nearly always hold n that pass; checked here in
                # Python, and the filtered Chroma query is the fallback when they do not.
                hits = self._query(vector, n * OVERFETCH, None, details, metadata=True)
                passing = [hit for hit in hits if _passes(hit.metadata, where)]
                if len(passing) >= n or len(hits) < n * OVERFETCH:
                    return passing[:n]
            return self._query(vector, n, where, details)

    def _query(
        self, vector: np.ndarray, n: int, where: dict | None, details: bool = True, metadata: bool = False
    ) -> list[ChunkHit]:
        collection = self.collection()
        if collection is None:
            return []
        # Counting costs a SQLite scan per query (3.7 ms of a 46 ms hybrid query). The count is kept with the
        # collection handle: an ingest through this Store drops both, another process's ingest `follow_disk`.
        if self._count is None or self._count[0] is not collection:
            self._count = (collection, collection.count())
        total = self._count[1]
        if total == 0:
            return []
        include = ["documents", "metadatas"] if details else (["metadatas"] if metadata else [])
        result = collection.query(
            query_embeddings=[vector.tolist()], n_results=min(n, total), where=where, include=[*include, "distances"]
        )
        ids, distances = result["ids"][0], result["distances"][0]
        texts = result["documents"][0] if "documents" in include else [""] * len(ids)
        metas = result["metadatas"][0] if "metadatas" in include else [None] * len(ids)
        hits = []
        for chunk_id, text, meta, distance in zip(ids, texts, metas, distances, strict=True):
            paper_id = meta["paper_id"] if meta else paper_of_chunk(chunk_id)
            hits.append(ChunkHit(chunk_id, paper_id, text or "", 1.0 - float(distance), meta or {}))
        return hits

    def get_chunks_and_papers(
        self, chunk_ids: list[str], query_vector: np.ndarray, paper_ids: list[str]
    ) -> tuple[list[ChunkHit], dict[str, Paper]]:
        """The chunks `chunk_ids` (scored against `query_vector`) and the papers `paper_ids`, in one Chroma read.

        A query's last step: the best chunk of each paper it keeps, and each paper's abstract (on chunk 0).
        """
        import numpy as np

        heads = [f"{pid}#0" for pid in dict.fromkeys(paper_ids)]
        wanted = list(dict.fromkeys(chunk_ids + heads))
        with self.reading():
            collection = self.collection()
            if collection is None or not wanted:
                return [], {}
            include = ["documents", "metadatas", "embeddings"] if chunk_ids else ["documents", "metadatas"]
            result = collection.get(ids=wanted, include=include)
        embeddings = result["embeddings"] if chunk_ids else [None] * len(result["ids"])
        rows = dict(
            zip(result["ids"], zip(result["documents"], result["metadatas"], embeddings, strict=True), strict=True)
        )
        hits = []
        for chunk_id in chunk_ids:
            if chunk_id in rows:
                text, meta, vector = rows[chunk_id]
                score = float(np.asarray(vector, dtype=np.float32) @ query_vector)
                hits.append(ChunkHit(chunk_id, meta["paper_id"], text or "", score, meta))
        papers = {}
        for head in heads:
            if head in rows:
                text, meta, _ = rows[head]
                papers[meta["paper_id"]] = paper_from_metadata(meta, text)
        return hits, papers

    def best_cosines(self, vector: np.ndarray, paper_ids: list[str]) -> dict[str, float]:
        """paper id → the cosine of `vector` to that paper's nearest chunk, for the papers `paper_ids` (every chunk
        read, so no approximate-index miss). A paper the store lacks is left out."""
        import numpy as np

        with self.reading():
            collection = self.collection()
            if collection is None or not paper_ids:
                return {}
            # Read by id, the heads first (chunk 0 holds the paper's number of chunks): 5-8 ms for 12 papers at 84k
            # chunks, where a `paper_id $in` filter scans the metadata in 26-34 ms.
            include = ["metadatas", "embeddings"]
            heads = collection.get(ids=[f"{paper}#0" for paper in paper_ids], include=include)
            rest = [
                f"{meta['paper_id']}#{number}"
                for meta in heads["metadatas"]
                for number in range(1, int(meta.get("n_chunks", 1)))
            ]
            tails = collection.get(ids=rest, include=include) if rest else {"metadatas": [], "embeddings": []}
        best: dict[str, float] = {}
        for result in (heads, tails):
            for meta, embedding in zip(result["metadatas"], result["embeddings"], strict=True):
                score = float(np.asarray(embedding, dtype=np.float32) @ vector)
                best[meta["paper_id"]] = max(score, best.get(meta["paper_id"], -1.0))
        return best

    def has_venue(self, venue: str) -> bool:
        with self.reading():
            collection = self.collection()
            if collection is None:
                return False
            # A metadata scan (116 ms at 91k chunks): remembered with the collection handle, like the count.
            if self._venues is None or self._venues[0] is not collection:
                self._venues = (collection, {})
            known = self._venues[1]
            if venue not in known:
                known[venue] = bool(collection.get(where={"venue": venue}, limit=1, include=[])["ids"])
            return known[venue]

    def get_papers(self, ids: Iterable[str]) -> dict[str, Paper]:
        """Full papers (from chunk 0) for the ids that exist."""
        ids = list(dict.fromkeys(ids))
        with self.reading():
            collection = self.collection()
            if collection is None or not ids:
                return {}
            result = collection.get(ids=[f"{pid}#0" for pid in ids], include=["metadatas", "documents"])
        papers = {}
        for meta, document in zip(result["metadatas"], result["documents"], strict=True):
            papers[meta["paper_id"]] = paper_from_metadata(meta, document)
        return papers

    def papers_mentioning(self, word: str, limit: int = 2) -> list[str]:
        """Ids of up to `limit` papers whose text contains `word` as a whole word (case-sensitive).

        For names such as "PURGE" or "DiVeQ": a name only one paper uses picks out that paper.
        """
        with self.reading():
            collection = self.collection()
        if collection is None or not word:
            return []
        try:
            # Chroma's $contains is a substring match; the word-boundary check below drops "SAMPLE" for "SAM".
            result = collection.get(
                where_document={"$contains": word}, limit=limit * 8, include=["metadatas", "documents"]
            )
        except Exception as exc:
            raise StoreError(f"searching the store at {self.settings.store_label} failed ({_short(exc)})") from None
        pattern = re.compile(rf"(?<![A-Za-z0-9]){re.escape(word)}(?![A-Za-z0-9])")
        found: list[str] = []
        for meta, document in zip(result["metadatas"], result["documents"], strict=True):
            if meta["paper_id"] not in found and pattern.search(document or ""):
                found.append(meta["paper_id"])
        return found[:limit]

    def get_paper(self, paper_id: str) -> Paper:
        paper = self.get_papers([paper_id]).get(paper_id)
        if paper is None:
            raise NotFoundError(f"no paper with id {paper_id!r} in the store at {self.settings.store_label}")
        return paper


def _generation_of(collection) -> str:
    return str((collection.metadata or {}).get("generation", "0"))


def paper_from_metadata(meta: dict, document: str | None = None) -> Paper:
    year = meta.get("year", -1)
    keywords = tuple(k for k in (meta.get("keywords") or "").split("; ") if k)
    return Paper(
        id=meta["paper_id"],
        abstract=meta.get("abstract") or document or "",
        title=meta.get("title") or None,
        year=year if isinstance(year, int) and year > 0 else None,
        venue=meta.get("venue") or None,
        keywords=keywords,
        url=stored_url(meta),
        area=meta.get("area") or None,
        status=meta.get("status") or None,
    )


def stored_url(meta: dict) -> str | None:
    """A chunk's paper link: the one stored if it is an http(s) address (the page links to it), else the rule's
    (`rag.corpus.paper_url`: a store written before links were kept still links OpenReview ids)."""
    url = meta.get("url")
    url = url if isinstance(url, str) and url.lower().startswith(("http://", "https://")) else None
    return paper_url(meta["paper_id"], url)
