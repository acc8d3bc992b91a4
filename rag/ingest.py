"""Writing papers into a store: the store's resumable, windowed write, then the indexes derived from it.

The store (rag/store.py) knows Chroma; the lexical index (rag/lexical.py) reads the store. This module is the
one place that does both, in order, so neither calls the other.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .corpus import Paper
    from .embedding import Embedder
    from .store import IngestReport, Store


def ingest(
    store: Store,
    papers: Iterable[Paper],
    embedder: Embedder,
    rebuild: bool = False,
    on_progress: Callable[[int, int | None], None] | None = None,
    total: int | None = None,
) -> IngestReport:
    """Add new papers, replace changed ones, skip unchanged ones (`Store.ingest`), then bring the BM25 index up
    to date now rather than at the first question. The caller holds the writer lock (`store.ingest_lock`)."""
    from . import lexical

    report = store.ingest(papers, embedder, rebuild=rebuild, on_progress=on_progress, total=total)
    if report.added or report.updated or rebuild:
        lexical.refresh(store)
    return report
