"""BM25 over the same chunks as the dense store, for the exact terms users type (method names, acronyms,
datasets) that MiniLM embeddings blur.

bm25s with Snowball stemming, used directly rather than through llama-index's BM25Retriever: that wrapper
keeps every node as JSON beside the index, which at 100k chunks costs seconds to load on each cold `ask`;
the bare bm25s index loads memory-mapped in milliseconds.

The index is derived data. It records the collection's `generation` (bumped by every ingest that changes
the store); when the numbers differ it is rebuilt from the collection's documents, which is also how a
Chroma server's index is made (cached in the user's cache directory).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import shutil
import tempfile
import threading
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from .text import bm25_stopwords

if TYPE_CHECKING:
    import numpy as np

    from .store import Store

FORMAT_VERSION = 3  # 3: each chunk's primary area and decision, for the filters and the facets
PAGE = 5000  # documents read from Chroma per call while rebuilding


@dataclass
class LexicalHit:
    chunk_id: str
    paper_id: str
    score: float
    doc: int = -1  # row in the index (for `LexicalIndex.coverage`)


def _stemmer():
    import Stemmer

    return Stemmer.Stemmer("english")


@lru_cache(maxsize=1)
def tokenizer_fingerprint() -> str:
    """What decides the terms an index holds (its stopwords and stemmer): an index saved under another one is
    rebuilt, since a query tokenized today must meet the terms its documents were indexed with."""
    return hashlib.sha256(("snowball-english\n" + "\n".join(bm25_stopwords())).encode()).hexdigest()[:16]


def tokenize(texts: list[str]):
    import bm25s

    return bm25s.tokenize(texts, stopwords=bm25_stopwords(), stemmer=_stemmer(), show_progress=False)


class LexicalIndex:
    def __init__(
        self,
        bm25,
        chunk_ids: list[str],
        paper_ids: list[str],
        years: np.ndarray,
        venues: list[str],
        generation: str,
        areas: list[str] | None = None,
        statuses: list[str] | None = None,
    ) -> None:
        self.bm25 = bm25
        self.chunk_ids = chunk_ids
        self.paper_ids = paper_ids
        self.years = years
        self.venues = venues
        self.generation = generation
        # Each chunk's paper's primary area and decision ("" when it has none).
        self.areas = areas if areas is not None else [""] * len(chunk_ids)
        self.statuses = statuses if statuses is not None else [""] * len(chunk_ids)

    # -- building and persistence -------------------------------------------------------------------------

    @classmethod
    def build(cls, chunk_ids: list[str], texts: list[str], metadatas: list[dict], generation: str) -> LexicalIndex:
        import bm25s
        import numpy as np

        bm25 = bm25s.BM25()
        if texts:
            bm25.index(tokenize(texts), show_progress=False)
        return cls(
            bm25,
            list(chunk_ids),
            [m["paper_id"] for m in metadatas],
            np.asarray([int(m.get("year", -1)) for m in metadatas], dtype=np.int32),
            [str(m.get("venue", "")) for m in metadatas],
            generation,
            [str(m.get("area") or "") for m in metadatas],
            [str(m.get("status") or "") for m in metadatas],
        )

    @classmethod
    def from_store(cls, store: Store) -> LexicalIndex:
        """Read every chunk back from Chroma and index it (title + text, as embedded)."""
        ids: list[str] = []
        texts: list[str] = []
        metas: list[dict] = []
        with store.reading():  # Chroma's failures as one line, for every caller (an ingest's refresh too)
            collection = store.collection()
            if collection is None:  # no collection yet: an empty index
                return cls.build(ids, texts, metas, store.generation())
            # The generation read with the documents, from the same handle: one that moves on meanwhile (another
            # process's ingest) makes this index stale at once, never one labelled newer than what it holds.
            generation = str((collection.metadata or {}).get("generation", "0"))
            total = collection.count()
            for offset in range(0, total, PAGE):
                page = collection.get(include=["documents", "metadatas"], limit=PAGE, offset=offset)
                for chunk_id, text, meta in zip(page["ids"], page["documents"], page["metadatas"], strict=True):
                    ids.append(chunk_id)
                    title = meta.get("title") or ""
                    texts.append(f"{title}. {text}" if title else (text or ""))
                    metas.append(meta)
        return cls.build(ids, texts, metas, generation)

    def save(self, directory: Path) -> None:
        """Write atomically: a half-written index is never loaded."""
        import numpy as np

        directory.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".lexical-", dir=directory.parent))
        try:
            if self.chunk_ids:
                self.bm25.save(staging / "bm25")
            np.save(staging / "years.npy", self.years)
            (staging / "docs.json").write_text(
                json.dumps(
                    {
                        "chunk_ids": self.chunk_ids,
                        "paper_ids": self.paper_ids,
                        "venues": self.venues,
                        "areas": self.areas,
                        "statuses": self.statuses,
                    }
                )
            )
            (staging / "manifest.json").write_text(
                json.dumps(
                    {
                        "format": FORMAT_VERSION,
                        "tokenizer": tokenizer_fingerprint(),
                        "generation": self.generation,
                        "chunks": len(self.chunk_ids),
                    }
                )
            )
            old = directory.with_name(directory.name + ".old")
            # Two processes may save at once (an ingest's refresh, and a server following the store rebuilding
            # the same generation): a rename the other one raced is tried again, and the last index saved wins.
            for attempt in range(3):
                try:
                    shutil.rmtree(old, ignore_errors=True)
                    if directory.exists():
                        directory.rename(old)
                    staging.rename(directory)
                    break
                except OSError:
                    if attempt == 2:
                        raise
            shutil.rmtree(old, ignore_errors=True)
        finally:
            shutil.rmtree(staging, ignore_errors=True)

    @classmethod
    def load(cls, directory: Path) -> LexicalIndex | None:
        """The saved index, or None when there is none or it is unreadable (it is then rebuilt)."""
        import bm25s
        import numpy as np

        try:
            manifest = json.loads((directory / "manifest.json").read_text())
            if manifest.get("format") != FORMAT_VERSION or manifest.get("tokenizer") != tokenizer_fingerprint():
                return None
            docs = json.loads((directory / "docs.json").read_text())
            years = np.load(directory / "years.npy")
            bm25 = bm25s.BM25.load(directory / "bm25", mmap=True) if docs["chunk_ids"] else bm25s.BM25()
        except (OSError, ValueError, KeyError):
            return None
        generation = str(manifest["generation"])
        return cls(
            bm25,
            docs["chunk_ids"],
            docs["paper_ids"],
            years,
            docs["venues"],
            generation,
            docs["areas"],
            docs["statuses"],
        )

    # -- searching --------------------------------------------------------------------------------------------

    def search(
        self,
        query: str,
        n: int,
        year: int | None = None,
        venue: str | tuple[str, ...] | None = None,
        paper_ids: list[str] | None = None,
        since: int | None = None,
        area: str | None = None,
        statuses: tuple[str, ...] | None = None,
        until: int | None = None,
    ) -> list[LexicalHit]:
        """The `n` best-scoring chunks for `query` (score > 0), best first, within the filters (`since`: papers of
        that year or later, `until`: of that year or earlier; `area`: the primary area as stored; `statuses`: the
        decisions kept)."""
        import numpy as np

        if not self.chunk_ids:
            return []
        terms = _query_tokens(query)
        if not terms or n <= 0:
            return []
        mask = None
        if year is not None or venue or paper_ids or since is not None or until is not None or area or statuses:
            mask = np.ones(len(self.chunk_ids), dtype=np.float32)
            if year is not None:
                mask *= self.years == year
            if since is not None:
                mask *= self.years >= since
            if until is not None:
                mask *= self.years <= until
            if isinstance(venue, tuple):
                mask *= np.isin(self._column("venues"), list(venue))
            elif venue:
                mask *= self._column("venues") == venue
            if paper_ids:
                mask *= np.isin(self._column("paper_ids"), list(paper_ids))
            if area:
                mask *= self._column("areas") == area
            if statuses:
                mask *= np.isin(self._column("statuses"), list(statuses))
            if not mask.any():
                return []
        known = self.bm25.get_tokens_ids([term for term in terms if term])
        if not known:
            return []
        scores = self.bm25.get_scores(known, weight_mask=mask)
        # Top n among the chunks that score at all, rather than bm25s's argpartition over every chunk: with
        # most scores exactly 0, that argpartition took 3.7-5.8 ms at 91k chunks against 0.4-0.8 ms (measured).
        # (BM25 variants that score absent terms have no zeros to skip; the index uses Lucene's, which has.)
        candidates = np.flatnonzero(scores > 0)
        if len(candidates) > n:
            candidates = candidates[np.argpartition(-scores[candidates], n - 1)[:n]]
        best = candidates[np.argsort(-scores[candidates], kind="stable")]
        return [
            LexicalHit(self.chunk_ids[doc], self.paper_ids[doc], float(scores[doc]), int(doc)) for doc in best.tolist()
        ]

    def _column(self, name: str) -> np.ndarray:
        """`venues` / `paper_ids` / `areas` / `statuses` as a numpy array, made once: a Python loop over 91k chunks
        costs 6 ms a query."""
        import numpy as np

        cached = self.__dict__.setdefault("_columns", {})
        if name not in cached:
            cached[name] = np.asarray(getattr(self, name))
        return cached[name]

    def document_frequency(self, term: str) -> int:
        """Chunks holding the stemmed `term` (its postings list's length)."""
        index = self.bm25.vocab_dict.get(term) if self.chunk_ids else None
        if index is None:
            return 0
        indptr = self.bm25.scores["indptr"]
        return int(indptr[index + 1] - indptr[index])

    def facets(self) -> dict[str, dict[str, int]]:
        """The papers of each primary area and of each decision the store holds: {"areas": {area: papers},
        "statuses": {decision: papers}} (papers without one are not counted). Counted once per index."""
        cached = self.__dict__.get("_facets")
        if cached is None:
            areas: dict[str, int] = {}
            statuses: dict[str, int] = {}
            for chunk_id, area, status in zip(self.chunk_ids, self.areas, self.statuses, strict=True):
                if not chunk_id.endswith("#0"):  # one chunk per paper
                    continue
                if area:
                    areas[area] = areas.get(area, 0) + 1
                if status:
                    statuses[status] = statuses.get(status, 0) + 1
            cached = self.__dict__["_facets"] = {"areas": areas, "statuses": statuses}
        return cached

    def venue_names(self) -> frozenset[str]:
        """The venues the store's papers give ("ICLR 2025", …), made once."""
        cached = self.__dict__.get("_venue_names")
        if cached is None:
            cached = self.__dict__["_venue_names"] = frozenset(v for v in self.venues if v)
        return cached

    def has_venue(self, venue: str) -> bool:
        return bool(len(self.chunk_ids)) and bool((self._column("venues") == venue).any())

    def coverage(self, query: str, docs: list[int]) -> float:
        """`term_coverage(query, texts of docs)` from the index's own postings: no store read, no re-tokenizing.

        Every stemmed query term is looked up in the BM25 postings (a term scores > 0 exactly in the chunks
        that contain it), so this equals term_coverage over the indexed texts (tested).
        """
        import numpy as np

        wanted = query_terms(query)
        if not wanted or not docs or not self.chunk_ids:
            return 0.0
        vocab = self.bm25.vocab_dict
        indptr, indices = self.bm25.scores["indptr"], self.bm25.scores["indices"]
        covered = np.zeros(len(docs), dtype=np.int32)
        targets = np.asarray(docs)
        for term in wanted:
            index = vocab.get(term)
            if index is None:
                continue
            postings = indices[indptr[index] : indptr[index + 1]]  # sorted doc rows (bm25s builds them so)
            # Binary search, not np.isin: a common stem's postings run to 55k rows at 31.5k papers (10 ms → 0.2 ms).
            at = np.minimum(np.searchsorted(postings, targets), len(postings) - 1)
            covered += postings[at] == targets
        return float(covered.max()) / len(wanted)


@lru_cache(maxsize=64)
def _query_tokens(query: str) -> tuple[str, ...]:
    """The stemmed, non-stopword tokens of `query`, in order (one question is looked up several times)."""
    tokenized = tokenize([query])
    vocabulary = {index: token for token, index in tokenized.vocab.items()}
    return tuple(vocabulary[i] for i in tokenized.ids[0]) if tokenized.ids else ()


def query_terms(query: str) -> set[str]:
    """The stemmed, non-stopword terms of `query`."""
    return set(_query_tokens(query)) - {""}


def term_coverage(query: str, texts: list[str]) -> float:
    """The largest share of the query's stemmed, non-stopword terms that one of `texts` contains."""
    return max(term_coverages(query, texts), default=0.0)


def term_coverages(query: str, texts: list[str]) -> list[float]:
    """For each of `texts`, the share of the query's stemmed, non-stopword terms it contains (one tokenizer call
    for all of them)."""
    wanted = query_terms(query)
    if not wanted or not texts:
        return [0.0] * len(texts)
    tokenized = tokenize(texts)
    vocabulary = {index: token for token, index in tokenized.vocab.items()}
    return [len(wanted & {vocabulary[i] for i in ids}) / len(wanted) for ids in tokenized.ids]


def contains_phrase(query: str, text: str) -> bool:
    """Whether `text` holds the query's terms as one run, in order ("conformal prediction"): stemmed, with
    stopwords skipped, so "the implicit bias of gradient descent" needs those four terms side by side."""
    query_ids, text_ids = tokenize([query, text]).ids  # one vocabulary for both
    n = len(query_ids)
    return n > 0 and any(text_ids[i : i + n] == query_ids for i in range(len(text_ids) - n + 1))


def index_dir(store: Store) -> Path:
    """Beside the embedded store; for a server, in the user's cache keyed by URL and collection."""
    settings = store.settings
    if settings.chroma_url:
        from platformdirs import user_cache_dir

        key = hashlib.sha1(settings.chroma_url.encode()).hexdigest()[:12]
        return Path(user_cache_dir("rag-papers", appauthor=False)) / "lexical" / f"{key}-{settings.collection}"
    return settings.store / "lexical" / settings.collection


_loading = threading.Lock()
_loaded: dict[Path, LexicalIndex] = {}


def get_index(store: Store) -> LexicalIndex:
    """The lexical index in step with the store: cached in memory, loaded from disk, or rebuilt."""
    directory = index_dir(store)
    generation = store.generation()
    index = _loaded.get(directory)
    if index is not None and index.generation == generation:
        return index
    # One loader at a time (the HTTP server's requests share this cache): two threads rebuilding the same index
    # would write the same staging folder. While one rebuilds after another process's ingest (seconds to minutes
    # at 31.5k papers), the others answer from the index they had rather than queue behind it: a paper the old
    # index names that the store no longer has is dropped by the fusion's store read, and a new one is found by
    # the dense side meanwhile.
    if not _loading.acquire(blocking=index is None):
        return index
    try:
        index = _loaded.get(directory)
        if index is None or index.generation != generation:
            index = LexicalIndex.load(directory)
            if index is None or index.generation != generation:
                index = LexicalIndex.from_store(store)
                with contextlib.suppress(OSError):  # a read-only location: keep the rebuilt index in memory only
                    index.save(directory)
            _loaded[directory] = index
        return index
    finally:
        _loading.release()


def clear_cache() -> None:
    """Forget the indexes loaded in this process (a benchmark's cold start; the next `get_index` reads the disk)."""
    with _loading:
        _loaded.clear()


def refresh(store: Store) -> None:
    """Rebuild and save after an ingest changed the store."""
    directory = index_dir(store)
    index = LexicalIndex.from_store(store)
    index.save(directory)
    _loaded[directory] = index
