"""The Chroma store: incremental ingest (hash per paper), replacement of changed papers, rebuild, model check."""

from __future__ import annotations

from dataclasses import replace

import pytest

from rag.chunking import paper_hash
from rag.config import Settings
from rag.corpus import Paper
from rag.embedding import get_embedder
from rag.errors import NotFoundError, StoreError
from rag.ingest import write
from rag.store import Store

from .conftest import REPO

LONG = " ".join(f"Finding {i} concerns sparse attention kernels on long sequences." for i in range(40))


def papers(long_abstract: str = LONG) -> list[Paper]:
    return [
        Paper(
            id="a",
            abstract="We study machine unlearning for large language models.",
            year=2026,
            venue="ICLR 2026",
        ),
        Paper(id="b", abstract=long_abstract, title="Sparse attention", year=2025, venue="ICLR 2025"),
        Paper(id="c", abstract="Graph neural networks for molecule property prediction.", year=2025),
    ]


@pytest.fixture()
def settings(tmp_path):
    return replace(Settings(), store=tmp_path / "store")


def chunk_ids(store: Store) -> list[str]:
    return sorted(store.collection().get(include=[])["ids"])


def test_reingesting_unchanged_papers_embeds_nothing(settings):
    embedder = get_embedder(settings)
    first = write(Store(settings), papers(), embedder)
    assert (first.added, first.updated, first.unchanged) == (3, 0, 0)
    assert first.chunks_embedded > 3  # the long abstract is several chunks
    before = chunk_ids(Store(settings))
    again = write(Store(settings), papers(), embedder)
    assert (again.added, again.updated, again.unchanged, again.chunks_embedded) == (0, 0, 3, 0)
    assert chunk_ids(Store(settings)) == before


def test_changed_abstract_replaces_all_of_that_papers_old_chunks(settings):
    embedder = get_embedder(settings)
    write(Store(settings), papers(), embedder)
    store = Store(settings)
    assert len([i for i in chunk_ids(store) if i.startswith("b#")]) > 1

    report = write(Store(settings), papers("Now a short abstract about tokenizer-free language models."), embedder)
    assert (report.added, report.updated, report.unchanged) == (0, 1, 2)
    store = Store(settings)
    assert [i for i in chunk_ids(store) if i.startswith("b#")] == ["b#0"]  # no stale chunks left
    assert store.get_paper("b").abstract.startswith("Now a short abstract")
    hits = store.query(embedder.embed(["tokenizer-free language models"])[0], n=3)
    assert hits[0].paper_id == "b" and "Finding" not in hits[0].text


def test_rebuild_reembeds_everything_into_a_fresh_collection(settings):
    embedder = get_embedder(settings)
    write(Store(settings), papers(), embedder)
    report = write(Store(settings), papers()[:2], embedder, rebuild=True)
    assert (report.added, report.unchanged) == (2, 0)
    store = Store(settings)
    assert store.count_papers() == 2  # paper c was not in the rebuild
    assert [c.name for c in store.client.list_collections()] == [settings.collection]


def test_store_records_its_embedding_model_and_refuses_another(settings):
    embedder = get_embedder(settings)
    write(Store(settings), papers(), embedder)
    store = Store(settings)
    assert store.collection().metadata["embedding_model"] == "all-MiniLM-L6-v2-onnx-int8"
    assert store.collection().metadata["embedding_dim"] == 384

    class OtherModel:
        name = "some-other-model"
        dimension = 384

    with pytest.raises(StoreError, match="built with embedding model 'all-MiniLM-L6-v2-onnx-int8'"):
        Store(settings).collection(OtherModel())


def test_unknown_paper_id_is_a_clear_error(settings):
    write(Store(settings), papers(), get_embedder(settings))
    with pytest.raises(NotFoundError, match="no paper with id 'zz'"):
        Store(settings).get_paper("zz")


def test_year_filter_is_applied_in_chroma(settings):
    embedder = get_embedder(settings)
    write(Store(settings), papers(), embedder)
    hits = Store(settings).query(embedder.embed(["unlearning"])[0], n=10, where={"year": 2025})
    assert hits and {h.paper_id for h in hits} <= {"b", "c"}


def test_papers_mentioning_a_name_matches_whole_words_only(seed_store):
    store, _ = seed_store
    assert store.papers_mentioning("PURGE") == ["001-02"]
    assert store.papers_mentioning("DiVeQ") == ["000-01"]
    assert store.papers_mentioning("GCN") == ["002-05"]  # not 000-16, which only says "FGCN-DKS"
    assert len(store.papers_mentioning("LLMs")) == 2  # a common word: several papers (capped at the limit)
    assert store.papers_mentioning("Purge") == []  # names are case-sensitive


@pytest.mark.parametrize(
    "change",
    [
        {"title": "Unlearning, revisited"},
        {"year": 2025},
        {"venue": "ICLR 2025"},
        {"keywords": ("unlearning", "privacy")},
    ],
)
def test_a_change_to_any_field_of_a_paper_replaces_it_on_the_next_ingest(settings, change):
    embedder = get_embedder(settings)
    write(Store(settings), papers(), embedder)
    changed = [replace(papers()[0], **change), *papers()[1:]]
    report = write(Store(settings), changed, embedder)
    assert (report.added, report.updated, report.unchanged) == (0, 1, 2)
    stored = Store(settings).get_paper("a")
    assert [getattr(stored, name) for name in change] == list(change.values())


def test_a_new_chunk_size_re_embeds_every_paper(settings):
    embedder = get_embedder(settings)
    write(Store(settings), papers(), embedder)
    report = write(Store(replace(settings, chunk_tokens=64)), papers(), embedder)
    assert (report.added, report.updated, report.unchanged) == (0, 3, 0)
    assert len([i for i in chunk_ids(Store(settings)) if i.startswith("b#")]) > 5  # the long abstract, re-split


def test_the_content_hash_is_part_of_the_store_format():
    # Stores on disk hold this hash on every chunk: a release that computed it differently would re-embed every
    # paper of every existing store on its first ingest (hours at 31k papers). Change it only on purpose.
    paper = Paper(
        id="001-02",
        abstract="We study machine unlearning for large language models.",
        title="PURGE",
        year=2026,
        venue="ICLR 2026",
        keywords=("unlearning",),
    )
    assert paper_hash(paper, 128, 24, "all-MiniLM-L6-v2-onnx-int8") == "df1210789abfbb63a4abf68a8feaa0d1"


def test_the_nearest_chunks_are_the_true_nearest_as_deep_as_fusion_reads(seed_store):
    """Hybrid fusion reads 80 dense chunks (20 candidates × 4) and scores a BM25-only paper by the last one's
    cosine, so a chunk the approximate index skips there changes rankings: every eval question's 80 nearest
    chunks must be the exact cosine top 80, each scored by its cosine."""
    import json

    import numpy as np

    from rag.policy import Policy

    store, embedder = seed_store
    policy = Policy.from_settings(store.settings)
    depth = policy.calibration.candidates * policy.chunks_per_paper
    rows = store.collection().get(include=["embeddings"])
    ids, vectors = rows["ids"], np.asarray(rows["embeddings"], dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    questions = [
        json.loads(line)["question"]
        for name in ("questions.jsonl", "dev2.jsonl", "dev3.jsonl", "heldout.jsonl")
        for line in (REPO / "evals" / name).read_text().splitlines()
    ]
    for question in questions:
        vector = embedder.embed([question])[0]
        cosines = vectors @ (vector / np.linalg.norm(vector))
        exact = {ids[i]: float(cosines[i]) for i in np.argsort(-cosines)[:depth]}
        hits = {hit.chunk_id: hit.score for hit in store.query(vector, n=depth, details=False)}
        assert hits.keys() == exact.keys(), question
        assert all(abs(hits[c] - exact[c]) < 1e-4 for c in exact), question  # scores are cosines


def test_an_ingest_raises_an_older_collections_search_beam(settings):
    """A collection made with Chroma's default beam (a store from an earlier version, or another tool's) searches
    as exactly as a new one on its next ingest, even one that changes nothing."""
    import chromadb

    from rag.store import EF_SEARCH

    client = chromadb.PersistentClient(str(settings.store))
    client.create_collection(settings.collection, embedding_function=None, metadata={"hnsw:space": "cosine"})
    assert client.get_collection(settings.collection).configuration_json["hnsw"]["ef_search"] < EF_SEARCH
    write(Store(settings), papers(), get_embedder(settings))
    client.get_collection(settings.collection).modify(configuration={"hnsw": {"ef_search": 100}})
    assert write(Store(settings), papers(), get_embedder(settings)).unchanged == len(papers())
    reopened = chromadb.PersistentClient(str(settings.store)).get_collection(settings.collection)
    assert reopened.configuration_json["hnsw"]["ef_search"] == EF_SEARCH


def test_a_papers_best_cosine_is_its_nearest_chunks_over_all_its_chunks(seed_store):
    """A list's candidate found by the whole text alone is re-read by its cosine to the topic (rag.pipeline): the
    cosine of the paper's nearest chunk, however many chunks it has; a paper the store lacks is left out."""
    import numpy as np

    store, embedder = seed_store
    rows = store.collection().get(include=["embeddings", "metadatas"])
    vector = embedder.embed(["implicit neural representations"])[0]
    exact: dict[str, float] = {}
    for meta, row in zip(rows["metadatas"], rows["embeddings"], strict=True):
        exact[meta["paper_id"]] = max(exact.get(meta["paper_id"], -1.0), float(np.asarray(row) @ vector))
    several = sorted(p for p in exact if sum(m["paper_id"] == p for m in rows["metadatas"]) > 1)
    assert len(several) >= 3  # papers whose best chunk may be any of theirs
    best = store.best_cosines(vector, [*several, "no-such-paper"])
    assert best.keys() == set(several)
    assert all(abs(best[p] - exact[p]) < 1e-5 for p in several)
