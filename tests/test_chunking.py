"""Chunks fit the embedding model's window (checked with its real tokenizer) and carry flat metadata."""

from __future__ import annotations

from dataclasses import replace
from itertools import pairwise

import pytest

from rag.chunking import Chunk, chunk_paper
from rag.config import Settings
from rag.corpus import Paper
from rag.embedding import MAX_TOKENS, get_embedder, load_tokenizer, token_counter
from rag.store import Store

LONG = " ".join(
    f"Sentence number {i} describes a distinct experimental finding about model calibration and robustness."
    for i in range(60)
)
# Short sentences of 7 tokens each: overlap is carried in whole sentences, so these show it finely.
SHORT = " ".join(f"Result {i} holds for model {chr(97 + i % 26)}." for i in range(80))
SENTENCE_TOKENS = 7


def model_tokens(text: str) -> int:
    """Tokens the model sees, [CLS] and [SEP] included, before any truncation."""
    tokenizer = load_tokenizer()
    tokenizer.no_truncation()
    try:
        return len(tokenizer.encode(text).ids)
    finally:
        tokenizer.enable_truncation(max_length=MAX_TOKENS)


def test_every_seed_chunk_fits_the_window_untruncated(seed_papers):
    for paper in seed_papers:
        for chunk in chunk_paper(paper, 128, 24, "m"):
            assert model_tokens(chunk.embed_text) <= MAX_TOKENS, chunk.id


def test_long_abstract_with_title_is_split_and_every_chunk_fits():
    paper = Paper(id="p1", abstract=LONG, title="A Rather Long Title About Calibration " * 3, year=2026)
    for size in (128, 254, 400):
        chunks = chunk_paper(paper, size, 24, "m")
        assert len(chunks) > 1
        assert all(model_tokens(c.embed_text) <= MAX_TOKENS for c in chunks)
        # Nothing is lost: every sentence appears in some chunk.
        for i in range(60):
            assert any(f"Sentence number {i} " in c.text for c in chunks), (size, i)


def test_metadata_is_flat_and_names_the_paper():
    paper = Paper(id="p1", abstract=LONG, title="T", year=2025, venue="ICLR 2025", keywords=("a", "b"))
    chunks = chunk_paper(paper, 128, 24, "m")
    assert [c.number for c in chunks] == list(range(len(chunks)))
    assert [c.id for c in chunks] == [f"p1#{n}" for n in range(len(chunks))]
    for chunk in chunks:
        meta = chunk.metadata
        assert all(isinstance(v, (str, int, float, bool)) for v in meta.values())
        assert (meta["paper_id"], meta["title"], meta["year"], meta["venue"], meta["keywords"]) == (
            "p1",
            "T",
            2025,
            "ICLR 2025",
            "a; b",
        )
        assert meta["n_chunks"] == len(chunks)
    assert chunks[0].metadata["abstract"] == LONG  # the whole abstract rides on chunk 0 only
    assert all("abstract" not in c.metadata for c in chunks[1:])


def test_short_abstract_is_one_chunk():
    (chunk,) = chunk_paper(Paper(id="s", abstract="A short abstract."), 128, 24, "m")
    assert chunk.text == "A short abstract." and chunk.metadata["year"] == -1


def text_tokens(text: str) -> int:
    """Tokens of `text` alone, as the chunker counts them (no [CLS]/[SEP])."""
    return len(token_counter()(text))


def shared_text(earlier: Chunk, later: Chunk) -> str:
    """The longest end of `earlier` that `later` starts with: the text the two chunks share."""
    a, b = earlier.text.strip(), later.text.strip()
    return next((a[-n:] for n in range(min(len(a), len(b)), 0, -1) if b.startswith(a[-n:])), "")


@pytest.mark.parametrize(("overlap", "effective"), [(8, 8), (24, 24), (32, 32), (100, 32)])
def test_consecutive_chunks_share_about_the_overlap(overlap, effective):
    """Each chunk repeats the previous one's last sentences, up to `overlap` tokens (a quarter of the chunk at most,
    so a chunk is mostly new text)."""
    chunks = chunk_paper(Paper(id="p", abstract=SHORT), 128, overlap, "m")
    assert len(chunks) > 3
    for earlier, later in pairwise(chunks):
        shared = text_tokens(shared_text(earlier, later))
        assert effective - SENTENCE_TOKENS < shared <= effective, (earlier.number, shared)


def test_overlap_zero_shares_nothing_and_loses_nothing():
    chunks = chunk_paper(Paper(id="p", abstract=SHORT), 128, 0, "m")
    assert len(chunks) > 3
    assert all(shared_text(earlier, later) == "" for earlier, later in pairwise(chunks))
    assert " ".join(c.text.strip() for c in chunks) == SHORT  # every sentence exactly once


@pytest.mark.parametrize("size", [48, 128, 200])
def test_chunks_fit_the_token_budget_and_fill_it(size):
    chunks = chunk_paper(Paper(id="p", abstract=SHORT), size, 24, "m")
    assert len(chunks) > 1
    sizes = [text_tokens(c.text) for c in chunks]
    # Within the budget, and short of it by less than a sentence (the last chunk takes what is left).
    assert all(size - SENTENCE_TOKENS < tokens <= size for tokens in sizes[:-1]), sizes


def test_changing_the_overlap_re_embeds_the_paper_on_the_next_ingest(tmp_path):
    """The overlap is part of the paper's hash: a re-ingest with another overlap replaces its stored chunks."""
    paper = Paper(id="p", abstract=SHORT, year=2026)
    settings = replace(Settings(), store=tmp_path / "store")
    embedder = get_embedder(settings)

    def stored_texts(store: Store) -> list[str]:
        rows = store.collection().get(where={"paper_id": "p"}, include=["documents", "metadatas"])
        return [
            text for _, text in sorted(zip([m["chunk"] for m in rows["metadatas"]], rows["documents"], strict=True))
        ]

    first = Store(settings).ingest([paper], embedder)
    assert (first.added, first.chunks_embedded) == (1, len(chunk_paper(paper, 128, 24, embedder.name)))
    again = Store(settings).ingest([paper], embedder)
    assert (again.unchanged, again.chunks_embedded) == (1, 0)  # same settings: nothing to do

    no_overlap = replace(settings, chunk_overlap=0)
    expected = [c.text for c in chunk_paper(paper, 128, 0, embedder.name)]
    report = Store(no_overlap).ingest([paper], embedder)
    assert (report.updated, report.chunks_embedded) == (1, len(expected))
    store = Store(no_overlap)
    assert stored_texts(store) == expected  # the old, overlapping chunks are gone
