"""Which papers answer (Selector.select on hand-built candidates) and which of their sentences are quoted."""

from __future__ import annotations

import pytest

from rag.config import Settings
from rag.embedding import get_embedder
from rag.evidence import Quote, Selector, _quote, is_pointer
from rag.policy import Policy
from rag.query import parse
from rag.types import Source, Verdict

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
        "On ScanNet200 val. set, our Open-YOLO 3D achieves mean average precision (mAP) of 24.7% while operating at "
        "22 seconds per scene. github.com/aminebdj/OpenYOLO3D",  # a link beside a claim of more than 20 words
    ],
)
def test_a_claim_is_not_a_pointer(sentence):
    assert not is_pointer(sentence, POLICY.pointer_words)


def test_a_code_link_is_quoted_only_when_the_question_asks_for_code(seed_store, seed_settings):
    store, embedder = seed_store
    assert "github.com/machoshi/SelKD" not in ask("What is SelKD?", store, embedder, seed_settings).answer
    where = ask("where is the code for SelKD?", store, embedder, seed_settings).answer
    assert "https://github.com/machoshi/SelKD" in where and "\\href" not in where


# -- which papers answer: Selector.select on hand-built reranked candidates -----------------------------------

CALIBRATION = POLICY.calibration
assert CALIBRATION is not None and CALIBRATION.cite_bar < CALIBRATION.detail_bar  # the cases below sit between
ANSWER = Verdict(True, "evidence")
ON_TOPIC = "We study machine unlearning for language models. Unlearning removes data while keeping utility."


def paper(paper_id: str, relevance: float, abstract: str = ON_TOPIC, score: float = 0.6) -> Source:
    return Source(paper_id, None, 2026, "ICLR 2026", score, abstract, abstract, relevance=relevance)


def select(question: str, sources: list[Source], verdict: Verdict = ANSWER) -> tuple[list[str], bool]:
    kept, wants_list = Selector(get_embedder(Settings()), POLICY).select(parse(question), sources, verdict)
    return [source.id for source, _ in kept], wants_list


def test_a_list_keeps_every_paper_at_or_above_the_cite_bar_and_a_detail_only_above_the_detail_bar():
    cite, detail = CALIBRATION.cite_bar, CALIBRATION.detail_bar
    sources = [paper("top", 0.9), paper("at-detail", detail), paper("at-cite", cite), paper("under", cite - 0.01)]
    assert select("which papers study machine unlearning?", sources) == (["top", "at-detail", "at-cite"], True)
    assert select("how does machine unlearning keep utility?", sources) == (["top", "at-detail"], False)


def test_a_list_of_one_paper_is_not_shown_as_a_list():
    assert select("which papers study machine unlearning?", [paper("top", 0.9), paper("low", 0.1)]) == (
        ["top"],
        False,
    )


def test_a_paper_with_no_sentence_speaking_to_the_question_is_dropped_whatever_its_relevance():
    off = paper("off", 0.9, "Protein folding is studied with lattice models. Results hold on CASP.")
    assert select("which papers study machine unlearning?", [paper("top", 0.9), off])[0] == ["top"]


PURGE = "We introduce PURGE for unlearning. PURGE keeps 98% of utility."
RWKU = "A survey of forgetting. We evaluate on RWKU."


def test_a_detail_question_naming_a_method_is_answered_by_the_paper_naming_it():
    sources = [paper("general", 0.9), paper("purge", 0.5, PURGE), paper("rwku", 0.1, RWKU)]
    assert select("what does PURGE reach on RWKU?", sources)[0] == ["purge"]  # RWKU under the bar: not quoted


def test_a_list_naming_a_benchmark_keeps_the_papers_not_naming_it_and_an_unknown_name_filters_nothing():
    sources = [paper("general", 0.9), paper("rwku", 0.5, "We evaluate forgetting on RWKU.")]
    assert select("which papers use RWKU?", sources)[0] == ["general", "rwku"]  # names filter details only
    assert select("what does ZORB reach on machine unlearning?", sources)[0] == ["general"]  # no paper names it


def test_one_name_asked_about_twice_adds_no_paper_under_the_bar():
    sources = [paper("general", 0.9), paper("purge", 0.1, PURGE)]
    assert select("what does PURGE keep and what does it drop?", sources)[0] == ["general"]


def test_a_comparison_of_named_methods_keeps_a_paper_for_each_name_under_the_bar():
    smm = "We propose SMM, a sharp minimax method for unlearning. SMM separates the forget set."
    sources = [paper("purge", 0.9, PURGE), paper("general", 0.8), paper("smm", 0.05, smm)]
    assert select("how do PURGE and SMM differ?", sources)[0] == ["purge", "smm"]


CAMEL = (
    "Incomplete multi-view data is common. CAMEL outperforms baselines. We propose a method (CAMEL) for "
    "partial views. Specifically, it learns a shared degree matrix. Experiments confirm CAMEL works."
)


def test_what_is_a_name_answers_with_the_paper_writing_it_and_its_introducing_sentences_first():
    sources = [paper("other", 0.9), paper("camel", 0.05, CAMEL)]
    kept, _ = Selector(get_embedder(Settings()), POLICY).select(parse("what is CAMEL?"), sources, ANSWER)
    assert [s.id for s, _ in kept] == ["camel"]
    ranked = kept[0][1]
    assert [j for _, j, _ in ranked[:2]] == [1, 2]  # the first sentence writing CAMEL, then the one after it


def test_the_judges_holding_papers_are_the_only_answers_of_a_topic():
    sources = [paper("a", 0.9), paper("b", 0.8), paper("c", 0.1)]
    question = "which papers study machine unlearning?"
    assert select(question, sources, Verdict(True, "evidence", holding=frozenset({"b"})))[0] == ["b"]
    # Only a paper under the bar holds the topic: that paper, not the best one.
    assert select(question, sources, Verdict(True, "evidence", holding=frozenset({"c"})))[0] == ["c"]
    assert select(question, sources, Verdict(True, "evidence", holding=frozenset()))[0] == ["a"]
    # Several under the bar hold it: the best of them alone.
    under = [*sources, paper("d", 0.05)]
    assert select(question, under, Verdict(True, "evidence", holding=frozenset({"c", "d"})))[0] == ["c"]


def test_a_count_question_is_answered_only_by_the_papers_giving_the_count():
    sources = [paper("a", 0.9), paper("b", 0.8)]
    question = "how many baselines do machine unlearning papers compare?"
    assert select(question, sources, Verdict(True, "evidence", counting=frozenset({"b"})))[0] == ["b"]
    assert select(question, sources, Verdict(True, "evidence", counting=frozenset())) == ([], False)


def test_a_question_about_the_paper_quotes_one_paper():
    sources = [paper("a", 0.9), paper("b", 0.8)]
    assert select("what does the unlearning paper keep?", sources)[0] == ["a"]
    assert select("how does the unlearning paper differ from the other paper?", sources)[0] == ["a", "b"]


def test_a_list_asking_for_one_line_per_paper_lists_every_paper():
    """ "… the full list with one line per paper" writes "the … paper" once: it was cut to one paper, though the
    list reader read a list (the pipeline's `wants_list`)."""
    from dataclasses import replace

    sources = [paper("a", 0.9), paper("b", 0.8)]
    query = replace(parse("machine unlearning: give me the full list with one line per paper"), wants_list=True)
    kept, wants_list = Selector(get_embedder(Settings()), POLICY).select(query, sources, ANSWER)
    assert ([source.id for source, _ in kept], wants_list) == (["a", "b"], True)


def test_a_code_link_sentence_is_never_quoted_as_evidence():
    # "where is the code?" is answered from the paper's record (rag.record), not by quoting the pointer.
    linked = paper("a", 0.9, "We propose PURGE for unlearning. Code: https://github.com/x/purge.")
    selector = Selector(get_embedder(Settings()), POLICY)
    for question in ("where is the code for PURGE?", "what is PURGE for?"):
        sentences = {s for _, _, s in selector.select(parse(question), [linked], ANSWER)[0][0][1]}
        assert sentences == {"We propose PURGE for unlearning."}
