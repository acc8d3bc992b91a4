"""Helpers shared by test modules: the plumbing of a question through the core's pipeline, and of the installed
commands run in subprocesses."""

from __future__ import annotations

import gzip
import json
import os
import sqlite3
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable

    from rag.types import Answer, Event, Retrieval, Source

BIN = Path(sys.executable).parent


def cli_env(**extra: str) -> dict[str, str]:
    """The environment without the user's RAG_*/OPENAI_* settings, plus `extra`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RAG_", "OPENAI_"))}
    env.update(extra)
    return env


def write_jsonl_gz(papers, path: Path) -> Path:
    """Papers in the corpus format (gzipped JSONL), with a title each so chunks carry one."""
    with gzip.open(path, "wt", encoding="utf-8") as f:
        for p in papers:
            row = {"id": p.id, "title": f"Paper {p.id}", "abstract": p.abstract, "year": p.year, "venue": p.venue}
            f.write(json.dumps(row) + "\n")
    return path


def chroma_chunk_rows(store: Path) -> int:
    """Chunk records committed so far, read from Chroma's SQLite file as a progress probe (read-only)."""
    db = store / "chroma.sqlite3"
    if not db.exists():
        return 0
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1) as conn:
            return conn.execute("SELECT count(*) FROM embeddings").fetchone()[0]
    except sqlite3.Error:
        return 0


def ingest_counts(summary: str) -> dict[str, int]:
    """`95 papers in S: 10 added, 0 updated, 85 unchanged (30 chunks embedded in 2.0s)` → numbers."""
    line = summary.strip().splitlines()[-1]
    tail = line.split(": ", 1)[1]
    return {
        "added": int(tail.split(" added")[0]),
        "updated": int(tail.split("added, ")[1].split(" updated")[0]),
        "unchanged": int(tail.split("updated, ")[1].split(" unchanged")[0]),
        "embedded": int(tail.split("(")[1].split(" chunks")[0]),
    }


def expected_chunks(papers) -> dict:
    """chunk id → the `Chunk` an ingest with the default settings and the packaged model stores for `papers`."""
    from rag.chunking import chunk_paper
    from rag.config import Settings
    from rag.embedding import ONNX_MODEL_NAME

    settings = Settings()
    return {
        chunk.id: chunk
        for paper in papers
        for chunk in chunk_paper(paper, settings.chunk_tokens, settings.chunk_overlap, ONNX_MODEL_NAME)
    }


def assert_store_exact(store: Path, papers) -> None:
    """The store holds exactly `papers`: every chunk id `chunk_paper` gives for them and no other (nothing stale,
    nothing missing), each chunk with its current text and metadata (the paper's hash included: no chunk of an
    older version), and the paper count the CLI reports. Pass the papers as the CLI read them (`load_papers`)."""
    from dataclasses import replace

    from rag.config import Settings
    from rag.store import Store

    expected = expected_chunks(papers)
    final = Store(replace(Settings(), store=store))
    collection = final.collection()
    assert collection is not None, f"no collection to read in {store}"
    rows = collection.get(include=["documents", "metadatas"])
    stored = dict(zip(rows["ids"], zip(rows["documents"], rows["metadatas"], strict=True), strict=True))
    assert sorted(stored.keys() - expected.keys()) == [], "stale chunks left in the store"
    assert sorted(expected.keys() - stored.keys()) == [], "chunks missing from the store"
    for chunk_id, (document, metadata) in stored.items():
        chunk = expected[chunk_id]
        assert metadata["paper_hash"] == chunk.metadata["paper_hash"], f"{chunk_id} is of another version"
        assert (document, metadata) == (chunk.text, chunk.metadata), f"{chunk_id} differs from the paper's text"
    assert final.count_papers() == len(papers)


# -- a question through the pipeline ------------------------------------------------------------------------------


def run_events(
    question: str, store, embedder, settings, backend: str | None = None, *, year=None, venue=None, **options
) -> list[Event]:
    """Every event of `question` (parsed, `year`/`venue` as flags) through a `Pipeline` over the store; `options`
    go to `Pipeline.run` (streamed unless `stream=False`)."""
    from rag.pipeline import Pipeline
    from rag.query import parse

    return list(Pipeline(store, embedder, settings).run(parse(question, year, venue), backend=backend, **options))


def ask(
    question: str, store, embedder, settings, backend: str | None = None, *, year=None, venue=None, **options
) -> Answer:
    """The answer to `question` read whole (`stream=False` unless given), through a `Pipeline` over the store."""
    from rag.pipeline import answer_of

    options.setdefault("stream", False)
    return answer_of(run_events(question, store, embedder, settings, backend, year=year, venue=venue, **options))


def retrieve(question: str, store, embedder, settings, *, year=None, venue=None, **options) -> Retrieval:
    """The `Retrieval` for `question` (parsed, `year`/`venue` as flags); `options` go to `Pipeline.retrieve`."""
    from rag.pipeline import Pipeline
    from rag.query import parse

    return Pipeline(store, embedder, settings).retrieve(parse(question, year, venue), **options)


def answer_from(question: str, sources: list[Source], backend, policy, **options) -> Answer:
    """The answer `rag.pipeline.respond` gives to `question` from these sources (read whole unless `stream=True`)."""
    from rag.pipeline import answer_of, respond
    from rag.query import parse

    options.setdefault("stream", False)
    return answer_of(respond(parse(question), sources, backend, policy, **options))


def shown_text(events: Iterable[Event]) -> str:
    """What a reader of the events saw: the "text" pieces, joined."""
    return "".join(event.text for event in events if event.type == "text")


def generated(backend, question: str, sources: list[Source], policy=None, stream: bool = True):
    """What `backend.generate` yields for `question` from `sources` (judged under `policy`, default the settings'
    with the packaged calibration): the text pieces, and the `Generation` it returns."""
    from rag.config import Settings
    from rag.judge import judge
    from rag.policy import Policy
    from rag.query import parse

    query = parse(question)
    policy = policy or Policy.from_settings(Settings())
    run = backend.generate(query, sources, judge(query, sources, policy), stream=stream)
    pieces = []
    while True:
        try:
            pieces.append(next(run))
        except StopIteration as done:
            return pieces, done.value
