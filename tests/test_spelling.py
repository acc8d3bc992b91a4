"""Misspelled questions (rag/spelling.py): corrected against the store's words, coined names and unknown words
left alone, and the correction reaching retrieval and the user."""

from __future__ import annotations

import pytest

from .helpers import retrieve


@pytest.fixture()
def speller(seed_store):
    from rag.lexical import get_index
    from rag.spelling import speller_for

    store, _ = seed_store
    return speller_for(get_index(store))


@pytest.mark.parametrize(
    ("typed", "meant"),
    [
        ("which papers study spiking nueral networks?", "which papers study spiking neural networks?"),  # swap
        ("papers on kolmogorov arnold netwroks", "papers on kolmogorov arnold networks"),
        (
            "bayesian optimization with gausian process surrogates",
            "bayesian optimization with gaussian process surrogates",
        ),
        ("hashing methods for cross-modal retreival", "hashing methods for cross-modal retrieval"),
        ("Retreival augmented generation", "Retrieval augmented generation"),  # capital kept
    ],
)
def test_misspelled_words_are_corrected(speller, typed, meant):
    assert speller.correct(typed) == meant


@pytest.mark.parametrize(
    "question",
    [
        "what is syre?",  # a coined name the store holds: its stem is in the index
        "what is AGREST?",
        "concept erasure in text-to-image diffusion models",  # real words, some absent from the store
        "zorblax quantization",  # no word within one edit: stays, so abstention still sees it
        "papers on GNNs",  # short words are never touched
    ],
)
def test_known_and_unknown_words_are_left_alone(speller, question):
    assert speller.correct(question) == question


def test_the_corrected_question_is_what_retrieval_searched_and_finds_the_paper(seed_store, seed_settings):
    store, embedder = seed_store
    found = retrieve("which papers study spiking nueral netwroks?", store, embedder, seed_settings, k=5)
    assert found.query.search == "spiking neural networks"
    assert found.sources[0].id == "002-15"


def test_dense_mode_is_left_as_typed(seed_store, seed_settings):
    """The dense retriever is the comparison baseline: it sees the words as typed."""
    store, embedder = seed_store
    found = retrieve("spiking nueral networks", store, embedder, seed_settings, k=3, mode="dense")
    assert found.query.search == "spiking nueral networks"


def test_rag_spelling_off_searches_the_words_as_typed(seed_store, seed_settings):
    from dataclasses import replace

    store, embedder = seed_store
    typed = retrieve("spiking nueral netwroks", store, embedder, replace(seed_settings, spelling=False), k=3)
    assert typed.query.search == "spiking nueral netwroks"


def test_an_abbreviation_is_not_a_typo(speller):
    """ "backprop" is two letters short of the stem "backpropag": a typo changes a word's length by one at most."""
    assert speller.correct("how to backprop through a quantizer") == "how to backprop through a quantizer"
