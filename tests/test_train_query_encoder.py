"""train/query_encoder.py without torch: which chunks a describe query's sentence hides, and the query sample."""

from __future__ import annotations

from train.query_encoder import hidden_chunks, select_queries


def test_hidden_chunks_are_those_holding_the_sentence_start_whatever_the_spacing():
    sentence = "In this work, we propose DiVeQ, a technique that treats quantization as adding an error vector."
    chunks = [
        "Codebooks collapse. In this work, we propose  DiVeQ, a technique that treats quantization",  # overlap: starts
        "In this work,\nwe propose DiVeQ, a technique that treats quantization as adding an error vector. It works.",
        "It works on ImageNet.",
    ]
    assert hidden_chunks(chunks, sentence) == [0, 1]
    assert hidden_chunks(chunks, "Nothing of the kind appears in these chunks at all.") == []


def test_select_queries_keeps_the_kinds_asked_for_in_a_seeded_order():
    pairs = [{"query": f"q{i}", "kind": "describe" if i % 2 else "title"} for i in range(20)]
    chosen = select_queries(pairs, {"describe"}, 5, seed=3)
    assert len(chosen) == 5 and {p["kind"] for p in chosen} == {"describe"}
    assert chosen == select_queries(pairs, {"describe"}, 5, seed=3) != select_queries(pairs, {"describe"}, 5, seed=4)
    assert len(select_queries(pairs, None, None, seed=0)) == 20
