"""The packaged int8 MiniLM: unit vectors of the right size, stable, batch-independent, meaningful."""

from __future__ import annotations

import numpy as np

from rag.embedding import OnnxMiniLM


def test_vectors_are_unit_length_384_floats():
    vectors = OnnxMiniLM().embed(["machine unlearning for language models", "x"])
    assert vectors.shape == (2, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_batching_and_length_sorting_do_not_change_vectors():
    texts = [
        "short",
        "a much longer text about graph neural networks and their expressive power " * 5,
        "mid text",
    ]
    batched = OnnxMiniLM(batch_size=16).embed(texts)
    single = np.vstack([OnnxMiniLM(batch_size=1).embed([t]) for t in texts])
    assert np.allclose(batched, single, atol=1e-4)


def test_similar_texts_are_closer_than_unrelated_ones():
    a, b, c = OnnxMiniLM().embed(
        [
            "removing memorized data from a trained model",
            "machine unlearning",
            "baking sourdough bread at home",
        ]
    )
    assert a @ b > a @ c + 0.1


def test_empty_input_gives_empty_matrix():
    assert OnnxMiniLM().embed([]).shape == (0, 384)
