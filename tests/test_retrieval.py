"""Hybrid retrieval: fusion order, the BM25 index (tiny and hand-built, and in step with the store), filters
recognised in the question, and what the hybrid default buys over dense on the seeds."""

from __future__ import annotations

from dataclasses import replace

import pytest

from rag.config import Settings
from rag.corpus import Paper
from rag.embedding import get_embedder
from rag.ingest import ingest, write
from rag.lexical import LexicalIndex, get_index, index_dir, term_coverage
from rag.policy import Policy
from rag.query import parse_filters
from rag.retrieval import build_where, reciprocal_rank_fusion, score_fusion, venues_named
from rag.store import Store

from .helpers import ask, retrieve

RRF_K = Policy.rrf_k  # the usual constant, 60


def test_reciprocal_rank_fusion_by_hand():
    # a: 1/61 + 1/63; b: 1/62 + 1/61; c: 1/63; d: 1/62  → b > a > d > c
    assert RRF_K == 60
    assert reciprocal_rank_fusion([["a", "b", "c"], ["b", "d", "a"]], RRF_K) == ["b", "a", "d", "c"]
    # one list alone keeps its order; ties keep the first ranking's order
    assert reciprocal_rank_fusion([["x", "y"]], RRF_K) == ["x", "y"]
    assert reciprocal_rank_fusion([["p"], ["q"]], RRF_K) == ["p", "q"]


def test_score_fusion_by_hand():
    dense = {"a": 0.80, "b": 0.60, "c": 0.40}  # cosines, best first
    lexical = {"c": 20.0, "d": 10.0}  # BM25
    # a: .6*1 = .60; b: .6*.75 = .45; c: .6*.5 + .4*1 = .70; d: .6*(.40/.80) + .4*.5 = .50 (dense floor for d)
    assert score_fusion(dense, lexical, 0.6) == ["c", "a", "d", "b"]
    # a strong BM25 match moves up further than a weak one, which rank fusion cannot tell apart
    assert score_fusion(dense, {"c": 20.0, "d": 19.0}, 0.6).index("d") < score_fusion(dense, lexical, 0.6).index("d")
    # all weight on one side reproduces that side's order; one list alone keeps its order
    assert score_fusion(dense, lexical, dense_weight=1.0)[:3] == ["a", "b", "c"]
    assert score_fusion(dense, lexical, dense_weight=0.0)[:2] == ["c", "d"]
    assert score_fusion(dense, {}, 0.6) == ["a", "b", "c"]
    assert score_fusion({}, lexical, 0.6) == ["c", "d"]


def test_score_fusion_when_no_cosine_is_positive():
    # Dividing by a negative best would flip the dense side (the worst cosine would score best) and a best of 0
    # would divide by zero: cosines are used as they are then. a: .5*-.1 + .5*.4 = .15; b: .5*-.9 + .5*1 = .05
    assert score_fusion({"a": -0.1, "b": -0.9}, {"b": 1.0, "a": 0.4}, 0.5) == ["a", "b"]
    assert score_fusion({"a": 0.0, "b": -0.5}, {"b": 1.0}, 0.5) == ["b", "a"]  # b: -.25 + .5; a: 0


def test_reciprocal_rank_fusion_counts_ranks_from_one_with_k_60():
    # The standard constant (Cormack et al.): a at ranks 5 and 27 scores 1/65 + 1/87 = .0268782, b at 12 and 17
    # 1/72 + 1/77 = .0268759; with ranks counted from 2 (the same as k = 61), b comes first.
    first = [f"x{i}" for i in range(40)]
    second = [f"y{i}" for i in range(40)]
    first[4], first[11] = "a", "b"
    second[26], second[16] = "a", "b"
    fused = reciprocal_rank_fusion([first, second], RRF_K)
    assert fused.index("a") < fused.index("b")


def tiny_index() -> LexicalIndex:
    texts = [
        "We propose DiVeQ, a differentiable vector quantization method.",
        "Vector databases store embeddings for retrieval.",
        "Sparse attention kernels for long sequences.",
        "Quantization of language models to four bits.",
    ]
    metas = [
        {"paper_id": "p1", "year": 2026, "venue": "ICLR 2026"},
        {"paper_id": "p2", "year": 2025, "venue": "ICLR 2025"},
        {"paper_id": "p3", "year": 2025, "venue": "ICLR 2025"},
        {"paper_id": "p4", "year": 2026, "venue": "ICLR 2026"},
    ]
    return LexicalIndex.build([f"{m['paper_id']}#0" for m in metas], texts, metas, generation="g1")


def test_bm25_ranks_the_exact_rare_term_first_and_stems():
    index = tiny_index()
    assert [h.paper_id for h in index.search("what is DiVeQ?", 4)] == ["p1"]
    assert {h.paper_id for h in index.search("quantizing vectors", 4)} == {"p1", "p2", "p4"}
    assert index.search("what is it?", 4) == []  # only question words: no evidence at all


def test_bm25_filters_by_year_venue_and_paper():
    index = tiny_index()
    assert {h.paper_id for h in index.search("quantization", 4, year=2026)} == {"p1", "p4"}
    assert {h.paper_id for h in index.search("vector", 4, venue="ICLR 2025")} == {"p2"}
    assert [h.paper_id for h in index.search("quantization", 4, paper_ids=["p4"])] == ["p4"]
    assert index.search("quantization", 4, year=1999) == []
    assert {h.paper_id for h in index.search("quantization", 4, since=2026)} == {"p1", "p4"}
    assert {h.paper_id for h in index.search("vector", 4, since=2025)} == {"p1", "p2"}
    assert {h.paper_id for h in index.search("vector", 4, since=2026)} == {"p1"}
    assert {h.paper_id for h in index.search("vector", 4, until=2025)} == {"p2"}
    assert {h.paper_id for h in index.search("vector", 4, since=2025, until=2026)} == {"p1", "p2"}


def test_term_coverage_ignores_question_words():
    assert term_coverage("what is DiVeQ?", ["We propose DiVeQ."]) == 1.0
    assert term_coverage("federated unlearning", ["machine unlearning of LLMs", "federated learning"]) == 0.5
    assert term_coverage("what is it", ["anything"]) == 0.0


@pytest.mark.parametrize(
    ("question", "text", "year", "venue"),
    [
        ("which ICLR 2025 papers study unlearning?", "which papers study unlearning?", 2025, "ICLR 2025"),
        ("iclr 2026 clustering papers", "clustering papers", 2026, "ICLR 2026"),
        ("papers on diffusion in 2026", "papers on diffusion", 2026, None),
        ("2025 papers on reinforcement learning", "papers on reinforcement learning", 2025, None),
        ("graph transformers from 2025?", "graph transformers ?", 2025, None),
    ],
)
def test_year_and_venue_are_recognised_in_the_question(question, text, year, venue):
    parsed = parse_filters(question)
    assert (parsed.text, parsed.year, parsed.venue) == (text, year, venue)


@pytest.mark.parametrize(
    "question",
    [
        "what does GPT-2025 report?",
        "results of Model2025 on ImageNet",
        "is SOTA-2025-bench harder?",
        "accuracy of 2025.5 points",
        "the 2025b variant",
        "which papers study unlearning?",
    ],
)
def test_years_inside_names_and_numbers_are_not_filters(question):
    parsed = parse_filters(question)
    assert (parsed.text, parsed.year, parsed.venue) == (question, None, None)


@pytest.fixture()
def settings(tmp_path):
    return replace(Settings(), store=tmp_path / "store")


def papers(b_abstract: str) -> list[Paper]:
    return [
        Paper(id="a", abstract="We study machine unlearning for large language models.", year=2026),
        Paper(id="b", abstract=b_abstract, year=2025),
    ]


def test_lexical_index_stays_in_step_with_reingest_of_a_changed_paper(settings):
    embedder = get_embedder(settings)
    ingest(Store(settings), papers("Sparse attention kernels for long sequences."), embedder)
    store = Store(settings)
    first = get_index(store)
    assert [h.paper_id for h in first.search("sparse attention kernels", 5)] == ["b"]

    ingest(Store(settings), papers("Tokenizer-free byte-level language models."), embedder)
    store = Store(settings)
    index = get_index(store)
    assert index.generation == store.generation() != first.generation
    assert index.search("sparse attention kernels", 5) == []
    assert [h.paper_id for h in index.search("byte-level tokenizer-free", 5)] == ["b"]
    assert sorted(index.chunk_ids) == sorted(store.collection().get(include=[])["ids"])  # no stale chunks
    # what is on disk is the new index too: a fresh process loads it without rebuilding
    assert LexicalIndex.load(index_dir(store)).generation == store.generation()


def test_a_store_written_without_the_index_gets_one_at_its_first_question(settings):
    """`write` alone leaves the BM25 index stale (`ingest` refreshes it): the first search builds it."""
    from rag import lexical

    embedder = get_embedder(settings)
    ingest(Store(settings), papers("Sparse attention kernels."), embedder)
    write(Store(settings), papers("Tokenizer-free byte-level language models."), embedder)
    lexical._loaded.clear()
    store = Store(settings)
    assert LexicalIndex.load(index_dir(store)).generation != store.generation()  # on disk: the old contents
    assert [h.paper_id for h in get_index(store).search("byte-level tokenizer-free", 5)] == ["b"]
    assert LexicalIndex.load(index_dir(store)).generation == store.generation()


def test_while_one_thread_rebuilds_the_index_the_others_answer_from_the_last_one(settings, monkeypatch):
    """Another process's ingest changed the store: the first question rebuilds BM25 (minutes at 31.5k papers);
    a server's other questions meanwhile search the index they had instead of queueing behind the rebuild."""
    import threading

    from rag import lexical

    embedder = get_embedder(settings)
    ingest(Store(settings), papers("Sparse attention kernels."), embedder)
    old = get_index(Store(settings))
    write(Store(settings), papers("Tokenizer-free byte-level language models."), embedder)  # index now stale

    rebuilding, finish = threading.Event(), threading.Event()
    real_build = LexicalIndex.from_store.__func__

    def slow_build(cls, store):
        rebuilding.set()
        assert finish.wait(30)
        return real_build(cls, store)

    monkeypatch.setattr(LexicalIndex, "from_store", classmethod(slow_build))
    rebuilt: list[LexicalIndex] = []
    first = threading.Thread(target=lambda: rebuilt.append(get_index(Store(settings))))
    first.start()
    assert rebuilding.wait(30)
    try:
        assert get_index(Store(settings)) is old  # at once, not after the rebuild
    finally:
        finish.set()
        first.join(30)
    store = Store(settings)
    assert rebuilt[0].generation == store.generation() != old.generation
    assert get_index(store) is rebuilt[0]
    assert [h.paper_id for h in get_index(store).search("byte-level tokenizer-free", 5)] == ["b"]
    lexical._loaded.clear()


def test_unchanged_reingest_keeps_the_generation(settings):
    embedder = get_embedder(settings)
    write(Store(settings), papers("Sparse attention."), embedder)
    before = Store(settings).generation()
    write(Store(settings), papers("Sparse attention."), embedder)
    assert Store(settings).generation() == before


def test_a_missing_or_stale_index_on_disk_is_rebuilt_from_the_store(settings):
    import shutil

    from rag import lexical

    ingest(Store(settings), papers("Sparse attention kernels."), get_embedder(settings))
    store = Store(settings)
    shutil.rmtree(index_dir(store))
    lexical._loaded.clear()
    assert [h.paper_id for h in get_index(store).search("sparse attention", 5)] == ["b"]
    assert (index_dir(store) / "manifest.json").is_file()


def test_an_index_saved_under_other_stopwords_is_rebuilt(settings):
    import json

    from rag import lexical

    ingest(Store(settings), papers("Sparse attention kernels."), get_embedder(settings))
    store = Store(settings)
    manifest_path = index_dir(store) / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    assert manifest["tokenizer"] == lexical.tokenizer_fingerprint()
    # An index written by a version with another stopword list: its terms need not be the ones a query makes now.
    (index_dir(store) / "docs.json").write_text(
        json.dumps({"chunk_ids": [], "paper_ids": [], "venues": [], "areas": [], "statuses": []})
    )
    manifest_path.write_text(json.dumps({**manifest, "tokenizer": "an-older-list"}))
    lexical._loaded.clear()
    assert [h.paper_id for h in get_index(store).search("sparse attention", 5)] == ["b"]
    assert json.loads(manifest_path.read_text())["tokenizer"] == lexical.tokenizer_fingerprint()


def test_hybrid_answers_an_acronym_question_dense_alone_abstains_on(seed_store, seed_settings):
    store, embedder = seed_store
    off = replace(seed_settings, reranker=False)  # the retrievers' own evidence, cosine rules
    dense = ask("what is DiVeQ?", store, embedder, replace(off, retriever="dense"), "extractive")
    hybrid = ask("what is DiVeQ?", store, embedder, off, "extractive")
    assert dense.abstained
    assert not hybrid.abstained and hybrid.citations == ["000-01"] and "DiVeQ" in hybrid.answer
    # reranked (the default), the name is answered as well
    reranked = ask("what is DiVeQ?", store, embedder, seed_settings, "extractive")
    assert not reranked.abstained and reranked.citations[0] == "000-01"


def test_year_in_the_question_filters_both_retrievers(seed_store, seed_settings):
    store, embedder = seed_store
    for mode in ("dense", "lexical", "hybrid"):
        found = retrieve("which ICLR 2025 papers study clustering?", store, embedder, seed_settings, mode=mode)
        assert found.filters == {"year": 2025, "venue": "ICLR 2025"}
        assert found.sources and all(s.year == 2025 for s in found.sources), mode
    explicit = retrieve("ICLR 2025 clustering papers", store, embedder, seed_settings, year=2026)
    assert all(s.year == 2026 for s in explicit.sources)  # a flag beats the question


def test_two_years_in_the_question_keep_the_papers_of_both_in_every_retriever(seed_store, seed_settings):
    """ "from ICLR 2025 or 2026" was read as ICLR 2025 alone: a list over the store's two years lost its 2026 papers."""
    store, embedder = seed_store
    for mode in ("dense", "lexical", "hybrid"):
        found = retrieve("clustering papers from ICLR 2025 or 2026", store, embedder, seed_settings, mode=mode)
        assert found.filters == {"since": 2025, "until": 2026}
        assert {s.year for s in found.sources} == {2025, 2026}, mode
    older = retrieve("clustering papers from 2023 or 2024", store, embedder, seed_settings)
    assert older.sources == []  # the seeds are from 2025 and 2026


def test_a_venue_named_without_a_year_keeps_its_papers_where_the_store_holds_other_venues(settings):
    """ "NeurIPS papers on X" keeps NeurIPS papers; in a store of one venue's papers its name filters nothing."""
    embedder = get_embedder(settings)
    text = "We study machine unlearning for large language models."
    ingest(
        Store(settings),
        [
            Paper(id="a", abstract=text, year=2026, venue="ICLR 2026"),
            Paper(id="b", abstract=text + " At scale.", year=2025, venue="ICLR 2025"),
            Paper(id="c", abstract=text + " With proofs.", year=2024, venue="NeurIPS 2024"),
            Paper(id="d", abstract=text + " On images.", year=2024, venue="CVPR 2024"),
        ],
        embedder,
    )
    store = Store(settings)
    for mode in ("dense", "lexical", "hybrid"):
        iclr = retrieve("ICLR papers on machine unlearning", store, embedder, settings, mode=mode)
        assert {s.id for s in iclr.sources} == {"a", "b"}, mode
        neurips = retrieve("machine unlearning at NeurIPS", store, embedder, settings, mode=mode)
        assert {s.id for s in neurips.sources} == {"c"}, mode
        either = retrieve("ICLR or NeurIPS papers on machine unlearning", store, embedder, settings, mode=mode)
        assert {s.id for s in either.sources} == {"a", "b", "c"}, mode
    assert venues_named(("ICLR",), frozenset({"ICLR 2025", "ICLR 2026"})) is None  # one venue: no filter
    assert venues_named(("CVPR",), frozenset({"ICLR 2025", "NeurIPS 2024"})) is None  # a venue it lacks: none
    with store.reading():
        vector = embedder.embed([text])[0]
        where = build_where(venue=("ICLR 2025", "ICLR 2026"))
        assert [h.chunk_id for h in store.query(vector, 5, where)] == [
            h.chunk_id for h in store._query(vector, 5, where)
        ]


def test_a_paraphrase_is_left_to_the_dense_retriever(seed_store, seed_settings):
    store, embedder = seed_store
    question = "how to backprop through the nearest-prototype snapping step in discrete-latent image autoencoders"
    plain = replace(seed_settings, reranker=False)  # the fusion gate alone
    dense = retrieve(question, store, embedder, plain, mode="dense")
    hybrid = retrieve(question, store, embedder, plain, mode="hybrid")
    assert [s.id for s in hybrid.sources] == [s.id for s in dense.sources]


def test_every_mode_scores_sources_by_cosine(seed_store, seed_settings):
    store, embedder = seed_store
    for mode in ("dense", "lexical", "hybrid"):
        sources = retrieve("vector quantization codebook", store, embedder, seed_settings, mode=mode).sources
        assert sources[0].id == "000-01" and 0.3 < sources[0].score <= 1.0, mode


def test_top_k_among_scoring_chunks_matches_bm25s_own_retrieve(seed_store):
    """`LexicalIndex.search` picks its top k itself (bm25s's argpartition is slow on mostly-zero scores):
    it must return what bm25s's own retrieve returns, filters included."""
    from rag.lexical import tokenize

    store, _ = seed_store
    index = get_index(store)
    cases = [
        ("unlearning", {}),
        ("multi-view clustering with anchors", {}),
        ("reinforcement learning", {"year": 2025}),
        ("vector quantization codebook gradients", {"year": 2026}),
        ("diffusion", {"venue": "ICLR 2025"}),
    ]
    for query, filters in cases:
        hits = index.search(query, 8, **filters)
        mask = None
        if "year" in filters:
            mask = (index.years == filters["year"]).astype("float32")
        if "venue" in filters:
            mask = (index._column("venues") == filters["venue"]).astype("float32")
        docs, scores = index.bm25.retrieve(tokenize([query]), k=8, weight_mask=mask, n_threads=0, show_progress=False)
        expected = [(float(sc), int(d)) for d, sc in zip(docs[0], scores[0], strict=True) if sc > 0]
        assert hits, query
        assert [h.score for h in hits] == pytest.approx([sc for sc, _ in expected]), query
        # equal scores may come in either order, and a tie at the k-th place may pick either chunk
        last = expected[-1][0]
        assert {h.doc for h in hits if h.score > last} == {d for sc, d in expected if sc > last}, query


def test_index_coverage_equals_term_coverage_over_the_indexed_texts(seed_store):
    """The postings shortcut used at query time must agree with tokenizing the chunks' texts."""
    store, _ = seed_store
    index = get_index(store)
    questions = [
        "what is DiVeQ?",
        "federated unlearning",
        "multi-view clustering with anchors",
        "graph neural networks for molecules",
        "contrastive learning InfoNCE mutual information",
    ]
    seen = []
    for question in questions:
        hits = index.search(question, 3)
        got = store.collection().get(ids=[h.chunk_id for h in hits], include=["documents", "metadatas"])
        by_id = {
            cid: f"{m['title']}. {d}" for cid, d, m in zip(got["ids"], got["documents"], got["metadatas"], strict=True)
        }
        expected = term_coverage(question, [by_id[h.chunk_id] for h in hits])
        assert index.coverage(question, [h.doc for h in hits]) == pytest.approx(expected), question
        seen.append(expected)
    assert min(seen) > 0 and max(seen) == 1.0  # the cases cover partial and full matches, not just zeros


def test_filtered_queries_match_chromas_own_filter(seed_store):
    """The over-fetch-and-check path for year/venue filters returns what Chroma's `where` returns."""
    store, embedder = seed_store
    vector = embedder.embed(["graph neural networks and clustering"])[0]
    for where in (
        {"year": 2025},
        {"year": 2026},
        {"$and": [{"year": 2025}, {"venue": "ICLR 2025"}]},
        {"venue": "no such venue"},
    ):
        fast = store.query(vector, 12, where)
        exact = store._query(vector, 12, where)
        assert [h.chunk_id for h in fast] == [h.chunk_id for h in exact], where
        assert all(h.metadata["year"] == where.get("year", h.metadata["year"]) for h in fast)


# -- fusion through `retrieve` and `ask`: a tiny store where meaning and exact words disagree ----------------

# Five papers about optimizers, and one that names a coined method ("Zorblax") but is about something else. For
# "Zorblax optimizer" MiniLM ranks the Zorblax paper 4th (the word carries no meaning to it); BM25 ranks it first
# (a rare, exact term). Only score fusion puts it first: rank fusion (RRF) puts it second, dense fourth.
NAMED_PAPERS = [
    Paper(
        id="p1",
        title="Adaptive optimizers for training large transformers",
        abstract="We study adaptive gradient optimizers such as Adam for training large transformer language models "
        "and show how learning-rate warmup stabilizes training.",
        year=2025,
    ),
    Paper(
        id="p2",
        title="Second-order optimization for deep networks",
        abstract="We propose a second-order optimizer that approximates curvature with Kronecker factors and speeds "
        "up training of deep networks.",
        year=2025,
    ),
    Paper(
        id="p3",
        title="Learning-rate schedules revisited",
        abstract="We analyze learning-rate schedules for stochastic gradient descent and derive a schedule that "
        "matches cosine decay without tuning.",
        year=2026,
    ),
    Paper(
        id="p4",
        title="Sharpness-aware minimization at scale",
        abstract="Sharpness-aware minimization improves generalization of neural networks; we make it cheaper for "
        "large models.",
        year=2026,
    ),
    Paper(
        id="p5",
        title="Protein structure tokens",
        abstract="We introduce Zorblax, a tokenizer that turns protein backbone geometry into discrete tokens for "
        "language models of proteins.",
        year=2026,
    ),
    Paper(
        id="p6",
        title="Optimizer state compression",
        abstract="We compress optimizer states to eight bits, cutting the memory of Adam for large models with no "
        "loss in accuracy.",
        year=2025,
    ),
]
NAMED_QUESTION = "Zorblax optimizer"


@pytest.fixture(scope="module")
def named_store(tmp_path_factory):
    settings = replace(Settings(), store=tmp_path_factory.mktemp("named") / "store")
    embedder = get_embedder(settings)
    write(Store(settings), NAMED_PAPERS, embedder)
    return Store(settings), embedder, settings


def ranked_ids(named_store, mode: str, question: str = NAMED_QUESTION, dense_weight: float | None = None) -> list[str]:
    store, embedder, settings = named_store
    policy = Policy.from_settings(settings)
    if dense_weight is not None:
        policy = replace(policy, dense_weight=dense_weight)
    return [s.id for s in retrieve(question, store, embedder, settings, k=6, mode=mode, policy=policy).sources]


def test_hybrid_puts_the_exact_name_first_where_dense_ranks_it_low(named_store):
    dense = ranked_ids(named_store, "dense")
    assert dense.index("p5") >= 2  # the embedding alone does not bring the named paper near the top
    hybrid = ranked_ids(named_store, "hybrid")
    assert hybrid[:2] == ["p5", "p6"]  # the named paper, then the best optimizer paper by meaning
    assert sorted(hybrid) == sorted(dense)  # fusion reorders the candidates; it neither drops nor invents any
    assert ranked_ids(named_store, "hybrid-rrf")[:2] == ["p6", "p5"]  # rank fusion cannot tell a strong match


def test_ask_cites_the_named_paper_only_with_fusion(named_store):
    store, embedder, settings = named_store
    settings = replace(settings, k=2)
    hybrid = ask(NAMED_QUESTION, store, embedder, settings, "extractive")
    assert not hybrid.abstained and hybrid.citations[0] == "p5" and "Zorblax" in hybrid.answer
    dense = ask(NAMED_QUESTION, store, embedder, replace(settings, retriever="dense"), "extractive")
    # Dense retrieval leaves the named paper out of the top 2, and no paper left holds "Zorblax": the facet rule
    # abstains rather than quoting an optimizer paper that never names it.
    assert "p5" not in [s.id for s in dense.sources] and dense.citations == []
    assert dense.abstained and "no paper found covers “Zorblax optimizer”" in dense.answer


def test_the_fusion_weight_decides_between_meaning_and_exact_words(named_store):
    # The shipped weight (0.6): the exact name first, then the optimizer papers, the one sharing the question's
    # word "optimizer" (p2) ahead of the one closer in meaning (p1). From 0.7 on, meaning wins that pair.
    assert ranked_ids(named_store, "hybrid")[:4] == ["p5", "p6", "p2", "p1"]
    # All weight on BM25: the papers holding the question's words lead, in BM25's order.
    lexical = ranked_ids(named_store, "lexical")
    assert ranked_ids(named_store, "hybrid", dense_weight=0.0)[: len(lexical)] == lexical
    # Mostly cosine: the paper closest in meaning overtakes the exact name; all cosine: the dense order.
    assert ranked_ids(named_store, "hybrid", dense_weight=0.9)[:2] == ["p6", "p5"]
    assert ranked_ids(named_store, "hybrid", dense_weight=1.0) == ranked_ids(named_store, "dense")


def test_a_question_the_embedding_misses_is_found_by_its_exact_name_in_the_seeds(seed_store, seed_settings):
    """AGREST is named in one seed abstract (000-15): MiniLM ranks that paper outside its top 5, BM25 first."""
    store, embedder = seed_store
    dense = retrieve("what is AGREST?", store, embedder, seed_settings, mode="dense")
    hybrid = retrieve("what is AGREST?", store, embedder, seed_settings, mode="hybrid")
    assert "000-15" not in [s.id for s in dense.sources]
    assert hybrid.sources[0].id == "000-15"
