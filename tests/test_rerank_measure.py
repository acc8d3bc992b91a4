"""The reranker's measurement and training helpers that need no torch: evals/rerank_measure.py's ranking
metrics on a hand-built case, train/reranker.py's example building, train/export.py's Spearman.

The tests that train and export a model need torch (the `[train]` extra) and live in train/tests, which CI
does not collect: `pip install -e '.[train]' && pytest train/tests`."""

from __future__ import annotations

import argparse
import importlib.util
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from rag.rerank import PASSAGE_WORDS as ABSTRACT_WORDS
from train.export import spearman
from train.reranker import build_examples, document, parse_mix

MEASURE = Path(__file__).resolve().parent.parent / "evals" / "rerank_measure.py"


@pytest.fixture(scope="module")
def measure():
    spec = importlib.util.spec_from_file_location("rerank_measure", MEASURE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_rerank_orders_by_score_and_keeps_ties_in_retriever_order(measure):
    assert measure.rerank(["a", "b", "c", "d"], [0.1, 2.0, 0.1, 1.0]) == ["b", "d", "a", "c"]
    assert measure.rerank([], []) == []


def test_summarize_on_a_hand_built_case(measure):
    rows = [
        # gold ranked 3rd, then 1st after reranking
        {"type": "fact", "gold_ids": ["g"], "base": ["a", "b", "g", "c"], "reranked": ["g", "a", "b", "c"]},
        # two gold: one in the top 5, one 6th; reranking puts both on top
        {
            "type": "paraphrase",
            "gold_ids": ["x", "y"],
            "base": ["x", "a", "b", "c", "d", "y"],
            "reranked": ["y", "x", "a", "b", "c", "d"],
        },
        # gold not among the candidates: 0 everywhere, whatever the order
        {"type": "paraphrase", "gold_ids": ["z"], "base": ["a", "b"], "reranked": ["b", "a"]},
        # unanswerable: left out of every mean
        {"type": "unanswerable", "gold_ids": [], "base": ["a"], "reranked": ["a"]},
    ]
    base = measure.summarize(rows, "base")
    assert base["n"] == 3
    assert base["recall@1"] == pytest.approx((0 + 0.5 + 0) / 3)
    assert base["recall@5"] == pytest.approx((1 + 0.5 + 0) / 3)
    assert base["mrr"] == pytest.approx((1 / 3 + 1 + 0) / 3)
    assert base["paraphrase_recall@5"] == pytest.approx(0.25)
    assert base["recall@all"] == pytest.approx(2 / 3)
    reranked = measure.summarize(rows, "reranked")
    assert reranked["recall@1"] == pytest.approx((1 + 0.5 + 0) / 3)
    assert reranked["recall@5"] == pytest.approx(2 / 3)
    assert reranked["mrr"] == pytest.approx(2 / 3)
    assert reranked["paraphrase_recall@5"] == pytest.approx(0.5)
    assert reranked["recall@all"] == base["recall@all"]  # reordering never changes the candidates


def test_summarize_without_paraphrases_gives_none(measure):
    rows = [{"type": "fact", "gold_ids": ["g"], "base": ["g"], "reranked": ["g"]}]
    assert measure.summarize(rows, "base")["paraphrase_recall@5"] is None


def test_document_is_title_then_abstract_start():
    words = [f"w{i}" for i in range(ABSTRACT_WORDS + 50)]
    text = document("A Title", " ".join(words))
    assert text.startswith("A Title w0 w1")
    assert text.split()[-1] == f"w{ABSTRACT_WORDS - 1}"


def test_build_examples_groups_positive_with_negatives_and_respects_the_cap():
    pairs = [
        {"query": f"q{i}", "positive_id": f"p{i}", "negative_ids": [f"n{i}a", f"n{i}b", f"n{i}c"]} for i in range(5)
    ]
    texts = {pid: f"text {pid}" for i in range(5) for pid in (f"p{i}", f"n{i}a", f"n{i}b", f"n{i}c")}
    del texts["n2b"]  # a negative missing from the corpus is skipped
    examples = build_examples(pairs, texts, max_pairs=None, negatives=2, seed=0)
    assert sum(label for _, _, label in examples) == 5
    assert len(examples) == 5 * 3 - 1
    by_query = {q: sorted((p, label) for qq, p, label in examples if qq == q) for q, _, _ in examples}
    assert by_query["q0"] == [("text n0a", 0.0), ("text n0b", 0.0), ("text p0", 1.0)]
    capped = build_examples(pairs, texts, max_pairs=7, negatives=2, seed=0)
    assert 0 < len(capped) <= 7
    for query in {q for q, _, _ in capped}:  # whole groups only: a query brings its positive and its negatives
        assert sorted(e for e in capped if e[0] == query) == sorted(e for e in examples if e[0] == query)
    assert build_examples(pairs, texts, max_pairs=7, negatives=2, seed=0) == capped  # seeded


def test_build_examples_fills_each_kind_its_share_of_the_cap():
    kinds = ["conjunction"] * 30 + ["keyword"] * 30 + ["title"] * 10
    pairs = [
        {"query": f"q{i}", "positive_id": f"p{i}", "negative_ids": [f"n{i}"], "kind": kind}
        for i, kind in enumerate(kinds)
    ]
    texts = {pid: f"text {pid}" for i in range(len(kinds)) for pid in (f"p{i}", f"n{i}")}
    tally = Counter()
    examples = build_examples(
        pairs, texts, max_pairs=40, negatives=1, seed=0, kinds={"conjunction", "keyword"},
        shares={"conjunction": 0.6, "keyword": 0.4}, tally=tally,
    )  # fmt: skip
    assert tally == {"conjunction": 24, "keyword": 16} and len(examples) == 40  # 2 examples a query
    kind_of = {f"q{i}": kind for i, kind in enumerate(kinds)}
    assert Counter(kind_of[q] for q, _, _ in examples) == tally  # no title query: it has no share
    again = build_examples(pairs, texts, 40, 1, 0, kinds={"conjunction", "keyword"}, shares={"conjunction": 0.6,
                           "keyword": 0.4})  # fmt: skip
    assert again == examples
    plain = build_examples(pairs, texts, max_pairs=40, negatives=1, seed=0)  # no shares: the old behaviour
    assert len(plain) == 40 and any(kind_of[q] == "title" for q, _, _ in plain)


def test_parse_mix():
    assert parse_mix("conjunction=0.6,keyword=0.12, template=0.28") == {
        "conjunction": 0.6, "keyword": 0.12, "template": 0.28
    }  # fmt: skip
    for bad in ("conjunction=0.7,keyword=0.4", "conjunction", "conjunction=0", "a=0.1,a=0.2", "=0.5", "a=x"):
        with pytest.raises(argparse.ArgumentTypeError):
            parse_mix(bad)


def test_spearman():
    a = np.array([1.0, 2.0, 3.0, 4.0])
    assert spearman(a, a * 10 + 3) == pytest.approx(1.0)
    assert spearman(a, -a) == pytest.approx(-1.0)
    assert spearman(np.array([1.0, 1.0, 2.0]), np.array([1.0, 1.0, 2.0])) == pytest.approx(1.0)


def test_build_examples_hides_a_describe_querys_sentence_from_its_positive_only():
    hidden = "We propose  DiVeQ, a quantizer."
    pairs = [{"query": "a quantizer", "positive_id": "p", "negative_ids": ["n"], "kind": "describe", "hidden": hidden}]
    texts = {
        "p": "Title Codebooks collapse. We propose DiVeQ, a quantizer. It works.",
        "n": "Other We propose DiVeQ, a quantizer.",
    }
    examples = sorted(build_examples(pairs, texts, max_pairs=None, negatives=1, seed=0), key=lambda e: -e[2])
    assert examples == [
        ("a quantizer", "Title Codebooks collapse. It works.", 1.0),
        ("a quantizer", "Other We propose DiVeQ, a quantizer.", 0.0),
    ]
