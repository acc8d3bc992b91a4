"""Quoting the chosen sentences (the selection itself is tested through `answer_from_sources` in test_answer)."""

from __future__ import annotations

import pytest

from rag.evidence import CONTRIBUTION_MARGIN, _quote, quote
from rag.retrieval import Source


@pytest.mark.parametrize(
    ("sentence", "quoted"),
    [
        ("Additionally, we develop a generative model framework.", "We develop a generative model framework."),
        (
            "Furthermore, we derive a novel, fine-grained convergence rate.",
            "We derive a novel, fine-grained convergence rate.",
        ),
        ("However, little research has been done.", "However, little research has been done."),  # meaning kept
        ("In addition, we cite [001-02].", "We cite (001-02)."),  # brackets never read as a citation
        (r"It keeps 98\% of utility.", "It keeps 98% of utility."),  # LaTeX shown as text
    ],
)
def test_a_quoted_sentence_drops_an_additive_opener(sentence, quoted):
    assert _quote(sentence) == quoted


SOURCE = Source("a", None, 2026, "ICLR 2026", 0.6, "Snippet [x].", "unused")
BACKGROUND = (0.80, 0, "Unlearning is hard.")
DETAIL = (0.70, 2, "Results hold on RWKU.")


def test_a_list_quotes_what_the_paper_does_over_background_within_the_margin():
    close = (0.80 - CONTRIBUTION_MARGIN, 1, "We propose PURGE.")
    far = (0.80 - CONTRIBUTION_MARGIN - 0.01, 1, "We propose PURGE.")
    assert quote(SOURCE, [BACKGROUND, close], wants_list=True, first=True) == "We propose PURGE."
    assert quote(SOURCE, [BACKGROUND, far], wants_list=True, first=True) == "Unlearning is hard."


def test_a_detail_answer_quotes_two_sentences_of_the_first_paper_in_the_abstracts_order():
    ranked = [DETAIL, BACKGROUND]  # best first
    assert quote(SOURCE, ranked, wants_list=False, first=True) == "Unlearning is hard. Results hold on RWKU."
    assert quote(SOURCE, ranked, wants_list=False, first=False) == "Results hold on RWKU."


def test_a_paper_with_no_scored_sentence_is_quoted_by_its_snippet_without_brackets():
    assert quote(SOURCE, [], wants_list=True, first=True) == "Snippet (x)."


@pytest.mark.parametrize(
    ("question", "cited"),
    [
        ("How do PURGE and Sharp MinMax differ in how they perform unlearning?", {"001-02", "001-18"}),
        ("compare CAMEL and SIIHPC for incomplete multi-view clustering", {"002-06", "004-05"}),
        ("what does PURGE reach on RWKU?", {"001-02"}),  # a benchmark named beside the method: one paper
    ],
)
def test_a_question_comparing_named_methods_cites_a_paper_for_each_name(seed_store, seed_settings, question, cited):
    from rag.answer import ask

    store, embedder = seed_store
    assert set(ask(question, store, embedder, seed_settings).citations) == cited
