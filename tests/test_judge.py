"""The judge (rag/judge.py), on hand-built sources: one verdict per question, each reason it gives, and the one
line a refusal says."""

from __future__ import annotations

from dataclasses import replace

import pytest

from rag.config import Settings
from rag.judge import judge, refusal
from rag.policy import Policy
from rag.query import parse
from rag.types import Source

POLICY = Policy.from_settings(Settings())  # min_score 0.365, the packaged calibration
assert POLICY.calibration is not None
BAR = POLICY.calibration.relevance_bar
LEAD = "The indexed abstracts don't answer this: "

TOPIC = "which papers study adversarial robustness of graph neural networks?"
HALF = (("adversarial robustness", 0.0), ("graph neural networks", 1.0))
FULL = (("adversarial robustness", 1.0), ("graph neural networks", 1.0))
NEITHER = (("adversarial robustness", 0.0), ("graph neural networks", 0.2))
COUNT = "how many games does Octax ship with?"


def paper(pid: str, score: float, abstract: str = "", relevance: float | None = None, shares=None) -> Source:
    abstract = abstract or f"We study the topic of paper {pid}. It has results."
    return Source(pid, None, 2026, "ICLR 2026", score, abstract, abstract, relevance=relevance, facet_shares=shares)


def test_the_verdict_answers_on_evidence_and_names_the_evidence():
    topic = judge(parse(TOPIC), [paper("a", 0.6, shares=HALF), paper("b", 0.5, shares=FULL)], POLICY)
    assert topic.answers and topic.reason == "evidence" and topic.holding == frozenset({"b"})
    assert topic.counting is None  # not a count question: the rule does not apply
    counted = paper("octax", 0.6, "Octax ships 21 classic arcade games in JAX.")
    count = judge(parse(COUNT), [counted, paper("other", 0.5, "We study games.")], POLICY)
    assert count.answers and count.reason == "evidence" and count.counting == frozenset({"octax"})
    assert count.holding is None  # a question about a detail: no facet rule
    plain = judge(parse("which papers study unlearning?"), [paper("a", POLICY.min_score)], POLICY)
    assert plain.answers and plain.reason == "evidence"  # the bar is inclusive
    at_bar = judge(parse("which papers study unlearning?"), [paper("a", 0.2, relevance=BAR)], POLICY)
    assert at_bar.answers and at_bar.reason == "evidence"  # the relevance bar too


# (question, year, sources, policy, reason, the paper a refusal names, the refusal's end)
REFUSED = {
    "no_papers": (
        "which papers study unlearning?",
        None,
        [],
        POLICY,
        None,
        "no paper in the store matches the question.",
    ),
    "no_papers:in_a_year": (
        "which papers study unlearning?",
        2027,
        [],
        POLICY,
        None,
        "the store has no paper from 2027.",
    ),
    "topic": (
        TOPIC,
        None,
        [paper("a", 0.6, shares=HALF), paper("b", 0.7, shares=NEITHER)],
        POLICY,
        "a",  # the paper holding most of the topic's facets, though another is closer
        "no paper found covers all of “adversarial robustness of graph neural networks”; the closest (a, 0.60) "
        "covers “graph neural networks” but not “adversarial robustness”.",
    ),
    "topic:never_mentioned": (
        "which papers study quantum computing?",
        None,
        [paper("a", 0.6, shares=(("quantum computing", 0.0),))],
        POLICY,
        "a",
        "no paper found covers “quantum computing”; the closest (a, 0.60) never mentions it.",
    ),
    "topic:in_a_year": (
        TOPIC,
        2026,
        [paper("b", 0.7, shares=NEITHER)],
        POLICY,
        "b",
        "no paper from 2026 found covers all of “adversarial robustness of graph neural networks”; the closest "
        "(b, 0.70) shares only some of its terms.",
    ),
    "count": (
        COUNT,
        None,
        [paper("octax", 0.6, "Octax is a suite of classic arcade games in JAX.")],
        POLICY,
        "octax",
        "none of the papers found gives a number of games; the closest (octax, 0.60) gives none.",
    ),
    "detail": (
        "What FID does DiVeQ reach on ImageNet?",
        None,
        [
            paper("other", 0.7, "We train diffusion models on ImageNet.", relevance=0.4),
            paper("diveq", 0.6, "We propose DiVeQ. On VQGAN generation it improves sample quality.", relevance=0.9),
        ],
        POLICY,
        "diveq",  # the paper the question names, not the closest of all
        "the paper that writes DiVeQ (diveq, relevance 0.90) never mentions FID; what it does report: “We "
        "propose DiVeQ.”",
    ),
    "relevance": (
        "which papers study unlearning?",
        None,
        [paper("a", 0.8, relevance=BAR - 0.05), paper("b", 0.7, relevance=BAR - 0.01)],
        POLICY,
        "b",  # the most relevant, not the first ranked nor the best cosine
        f"the closest paper (b) has relevance {BAR - 0.01:.2f}, below the bar {BAR:g}.",
    ),
    "score": (
        "which papers study unlearning?",
        None,
        [paper("a", 0.30), paper("b", 0.33)],
        POLICY,
        "b",  # the best cosine, whatever fusion ranked first
        f"the closest paper (b) scores 0.33, below the evidence threshold {POLICY.min_score:g}.",
    ),
}


@pytest.mark.parametrize("case", list(REFUSED))
def test_each_refusal_has_its_reason_and_says_it_in_one_line(case):
    question, year, sources, policy, closest, ending = REFUSED[case]
    query = parse(question, year=year)
    verdict = judge(query, sources, policy)
    assert not verdict.answers and verdict.reason == case.partition(":")[0]
    assert (verdict.closest.id if verdict.closest else None) == closest
    text = refusal(verdict, query, policy)
    assert text == LEAD + ending and "\n" not in text


def test_a_venue_that_empties_the_search_is_named():
    query = parse("which papers study unlearning?", venue="NeurIPS 2024")
    text = refusal(judge(query, [], POLICY), query, POLICY)
    assert text == LEAD + "the store has no paper from NeurIPS 2024."


def test_papers_the_user_chose_or_bars_set_to_zero_are_answered_whatever_the_evidence():
    weak = [paper("a", 0.05, relevance=0.01, shares=HALF)]
    for policy in (replace(POLICY, papers_chosen=True), replace(POLICY, min_score=0.0)):
        assert policy.bars_off
        verdict = judge(parse(TOPIC), weak, policy)
        assert verdict.answers and verdict.reason == "chosen"
    # nothing found is still nothing found, chosen or not
    assert judge(parse(TOPIC), [], replace(POLICY, papers_chosen=True)).reason == "no_papers"


def test_a_name_a_paper_writes_is_answered_under_the_relevance_bar():
    camel = paper("c", 0.3, "We propose ConstAnt degree Matrix-drivEn Learning (CAMEL).", relevance=BAR - 0.05)
    verdict = judge(parse("what is CAMEL?"), [camel], POLICY)
    assert verdict.answers and verdict.reason == "evidence" and verdict.defined
    unnamed = judge(parse("what is Zorblax?"), [camel], POLICY)
    assert not unnamed.answers and unnamed.reason == "relevance" and not unnamed.defined


def test_the_evidence_rows_give_each_rule_as_a_number_per_candidate():
    from rag.judge import EVIDENCE, evidence_rows

    counted = paper("octax", 0.6, "OCTAX ships 21 classic arcade games in JAX.", relevance=0.8, shares=FULL)
    other = paper("other", 0.5, "We study games.", relevance=0.2, shares=HALF)
    rows = evidence_rows(parse("how many games does OCTAX ship with?"), [counted, other], POLICY)
    named = [dict(zip(EVIDENCE, row, strict=True)) for row in rows]
    assert [r["count_missing"] for r in named] == [0.0, 1.0]  # the count rule, as evidence
    assert [r["names_held"] for r in named] == [1.0, 0.0]  # "OCTAX" written, or not
    assert [r["facet_min"] for r in named] == [1.0, 0.0] and [r["rank"] for r in named] == [0.0, 1.0]
    assert named[1]["relevance_gap"] == pytest.approx(-0.6) and named[0]["relevance_logit"] > 0


DIVEQ = "We propose DiVeQ, a quantizer. On VQGAN generation with CIFAR10 it improves FID."


@pytest.mark.parametrize(
    "question",
    [
        "what FID does DiVeQ reach on CIFAR-10?",  # written "CIFAR10": case, hyphens and spaces aside
        "how does DiVeQ compare with PURGE?",  # two papers named, each writes its own name
        "what is DiVeQ?",  # one name: nothing else asked of the paper
        "which papers use VQGAN or ImageNet?",  # a list: its names are its topic (the facet rule's)
    ],
)
def test_a_question_whose_every_name_a_shown_paper_writes_is_answered(question):
    sources = [paper("diveq", 0.6, DIVEQ, relevance=0.9), paper("purge", 0.5, "We propose PURGE.", relevance=0.2)]
    verdict = judge(parse(question), sources, POLICY)
    assert verdict.reason != "detail"


def test_a_detail_no_shown_paper_writes_is_refused_naming_the_paper_and_the_detail():
    query = parse("which robot arm did FSD use for its 8 real-world tasks — Franka or UR5?")
    sources = [paper("fsd", 0.6, "FSD reaches 72% success across 8 real-world tasks with a Franka arm.", relevance=0.9)]
    verdict = judge(query, sources, POLICY)
    assert not verdict.answers and verdict.reason == "detail"
    # "Franka": a name the corpus writes capitalized (rag.terms.proper_names), written by the paper
    assert verdict.named == ("FSD", "Franka") and verdict.unnamed == ("UR5",)
    text = refusal(verdict, query, POLICY)
    assert "the paper that writes FSD and Franka (fsd, relevance 0.90) never mentions UR5" in text
    assert "“FSD reaches 72% success across 8 real-world tasks with a Franka arm.”" in text


DIVEQ_SAYS = "DiVeQ makes vector quantization differentiable; it improves VQGAN generation and VQ-VAE compression."


def test_a_named_paper_writing_too_few_of_the_other_words_is_refused_as_unsaid_naming_what_it_lacks():
    query = parse("what codebook size did DiVeQ use in its VQGAN experiments?")
    sources = [paper("diveq", 0.6, DIVEQ_SAYS, relevance=0.82)]
    verdict = judge(query, sources, POLICY)
    assert not verdict.answers and verdict.reason == "unsaid" and verdict.closest is sources[0]
    assert verdict.named == ("DiVeQ", "VQGAN") and set(verdict.unnamed) == {"codebook", "size", "experiments"}
    text = refusal(verdict, query, POLICY)
    assert text.startswith(f"{LEAD}the paper that writes DiVeQ and VQGAN (diveq, relevance 0.82) never mentions ")
    assert text.endswith(f"; what it does report: “{DIVEQ_SAYS}”")
    # The same words written, the same paper answers; and with the rule off (`unsaid_share` 0) it answers anyway.
    written = [paper("diveq", 0.6, f"{DIVEQ_SAYS} Our experiments use a codebook size of 1024.", relevance=0.82)]
    assert judge(query, written, POLICY).answers
    assert judge(query, sources, replace(POLICY, unsaid_share=0.0)).answers


@pytest.mark.parametrize(
    "question",
    [
        "which papers propose a codebook size schedule like DiVeQ?",  # a list: its topic is judged by the facets
        "what is DiVeQ?",  # a definition: a paper writing the name answers it
        "how many codebook sizes does DiVeQ try?",  # a count: the count rule reads it
        "which paper evaluates DiVeQ?",  # one other word: written or not, no share to weigh
    ],
)
def test_the_unsaid_rule_reads_no_list_definition_count_or_single_word(question):
    verdict = judge(parse(question), [paper("diveq", 0.6, DIVEQ_SAYS, relevance=0.82)], POLICY)
    assert verdict.reason != "unsaid"


def test_a_comparison_a_second_relevant_paper_or_a_common_name_is_no_near_miss():
    # "PURGE vs the SAM-based paper": the question is read across two papers, not as a detail of one.
    query = parse(
        "compare PURGE and the sharpness-aware minimization unlearning paper: what core mechanism does each use?"
    )
    purge = paper("purge", 0.6, "PURGE frames LLM unlearning as a verifiable task.", relevance=0.9)
    sam = paper("sam", 0.5, "Sharpness-aware minimization makes unlearning robust.", relevance=0.7)
    assert judge(query, [purge, sam], POLICY).reason == "evidence"
    assert judge(query, [purge, replace(sam, relevance=0.05)], POLICY).reason == "unsaid"  # PURGE's detail alone
    # "GPU", written by 556 of the corpus's abstracts, names no paper: a description in other words is not a near miss.
    described = parse("someone re-implemented old console games to run entirely on the GPU for parallel rollouts")
    octax = paper("octax", 0.6, "Octax runs arcade environments on the GPU.", relevance=0.8)
    assert judge(described, [octax], POLICY).reason == "evidence"
    assert judge(described, [octax], replace(POLICY, paper_name_df=1000)).reason == "unsaid"
