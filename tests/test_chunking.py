"""Chunks fit the embedding model's window (checked with its real tokenizer) and carry flat metadata."""

from __future__ import annotations

from rag.chunking import chunk_paper
from rag.corpus import Paper
from rag.embedding import MAX_TOKENS, load_tokenizer

LONG = " ".join(
    f"Sentence number {i} describes a distinct experimental finding about model calibration and robustness."
    for i in range(60)
)


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


def test_a_sentence_tokenizer_timeout_falls_back_to_a_plain_split():
    """nltk's punkt runs under a 5 s wall-clock regex limit; when it trips, the paper is still chunked."""
    from rag.chunking import sentences_with_fallback

    def timing_out(text):
        raise TimeoutError("regular-expression match exceeded its 5.0s time limit")

    text = "We propose X. It works well! Does it scale? Yes, to 31.5k papers"
    pieces = sentences_with_fallback(text, timing_out)
    assert "".join(pieces) == text
    assert [p.strip() for p in pieces] == ["We propose X.", "It works well!", "Does it scale?", "Yes, to 31.5k papers"]
    # Without a timeout, punkt decides (it reads "X." as an initial, hence its own pieces).
    assert "".join(sentences_with_fallback(text)).replace(" ", "") == text.replace(" ", "")
