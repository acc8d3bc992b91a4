"""Quoting the chosen sentences (the selection itself is tested through `rag.pipeline.respond` in test_answer)."""

from __future__ import annotations

import pytest

from rag.config import Settings
from rag.embedding import get_embedder
from rag.evidence import Quote, Selector, _quote, is_pointer
from rag.policy import Policy
from rag.types import Source

from .helpers import ask

POLICY = Policy.from_settings(Settings())
CONTRIBUTION_MARGIN = POLICY.contribution_margin


def quote(source: Source, ranked, wants_list: bool, first: bool) -> Quote:
    return Selector(get_embedder(Settings()), POLICY).quote(source, ranked, wants_list, first)


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
    assert quote(SOURCE, [BACKGROUND, close], wants_list=True, first=True) == Quote("We propose PURGE.", (1,))
    assert quote(SOURCE, [BACKGROUND, far], wants_list=True, first=True) == Quote("Unlearning is hard.", (0,))


def test_a_detail_answer_quotes_two_sentences_of_the_first_paper_in_the_abstracts_order():
    ranked = [DETAIL, BACKGROUND]  # best first
    both = Quote("Unlearning is hard. Results hold on RWKU.", (0, 2))  # the sentences' places in the abstract
    assert quote(SOURCE, ranked, wants_list=False, first=True) == both
    assert quote(SOURCE, ranked, wants_list=False, first=False) == Quote("Results hold on RWKU.", (2,))


def test_a_paper_with_no_scored_sentence_is_quoted_by_its_snippet_without_brackets():
    assert quote(SOURCE, [], wants_list=True, first=True) == Quote("Snippet (x).", ())  # no sentence quoted


@pytest.mark.parametrize(
    ("question", "cited"),
    [
        ("How do PURGE and Sharp MinMax differ in how they perform unlearning?", {"001-02", "001-18"}),
        ("compare CAMEL and SIIHPC for incomplete multi-view clustering", {"002-06", "004-05"}),
        ("what does PURGE reach on RWKU?", {"001-02"}),  # a benchmark named beside the method: one paper
    ],
)
def test_a_question_comparing_named_methods_cites_a_paper_for_each_name(seed_store, seed_settings, question, cited):
    store, embedder = seed_store
    assert set(ask(question, store, embedder, seed_settings).citations) == cited


@pytest.mark.parametrize(
    ("question", "introduced"),
    [
        ("what is CAMEL?", "(CAMEL)"),  # "we propose ConstAnt degree Mtrix-drivEn … (CAMEL)", not its 3rd mention
        ("what is UniCon?", "(UniCon)"),
        ("what is PURGE?", "We introduce PURGE (Policy Unlearning through Relative Group Erasure)"),
    ],
)
def test_what_is_a_name_quotes_the_sentence_introducing_it(seed_store, seed_settings, question, introduced):
    store, embedder = seed_store
    answer = ask(question, store, embedder, seed_settings)
    assert introduced in answer.answer.split("\n")[1]  # the first line quoted


@pytest.mark.parametrize(
    "sentence",
    [
        r"The source code is available at: \href{https://github.com/machoshi/SelKD}",
        "Code is available at https://github.com/WINTERWEEL/S4M.git.",
        "Website: https://textgroundedtraj.github.io.",
        r"Codes are available at \href{https://anonymous.4open.science/r/EvoMAS-DEF4}{EvoMAS}.",
    ],
)
def test_a_sentence_only_pointing_to_code_is_a_pointer(sentence):
    assert is_pointer(sentence, POLICY.pointer_words)


@pytest.mark.parametrize(
    "sentence",
    [
        "We propose SelKD, which distills only the selected classes.",  # no link
        "Despite its simplicity, xTED demonstrates superior performance in extensive simulation and "
        "[real-robot experiments](https://xted24.github.io/xTED/).",  # a link inside a claim
    ],
)
def test_a_claim_is_not_a_pointer(sentence):
    assert not is_pointer(sentence, POLICY.pointer_words)


def test_a_code_link_is_quoted_only_when_the_question_asks_for_code(seed_store, seed_settings):
    store, embedder = seed_store
    assert "github.com/machoshi/SelKD" not in ask("What is SelKD?", store, embedder, seed_settings).answer
    where = ask("where is the code for SelKD?", store, embedder, seed_settings).answer
    assert "https://github.com/machoshi/SelKD" in where and "\\href" not in where
