"""A list lists: with the rules judge, "which papers study X?" names every reranked candidate that passes the list's
test (calibrated relevance at the cite bar, every facet of the topic held), also those ranked below k: the first
k quoted, the rest by title and id (rag.judge.list_beyond)."""

from __future__ import annotations

import pytest

from rag.config import Settings
from rag.judge import judge, list_beyond
from rag.policy import Policy
from rag.query import parse
from rag.types import Source

from .helpers import ask

RULES = Policy.from_settings(Settings(judge="rules"))
CITE_BAR = RULES.calibration.cite_bar
CLUSTERING = "We propose a fast k-means clustering algorithm. It clusters millions of points in seconds."
DIFFUSION = "We train diffusion models for image generation with fewer sampling steps."


def paper(pid: str, relevance: float, abstract: str, shares: tuple = (("clustering", 1.0),)) -> Source:
    return Source(pid, None, 2026, "ICLR 2026", 0.5, abstract, abstract, relevance=relevance, facet_shares=shares)


def test_a_list_gains_the_candidates_below_k_that_pass_its_test_and_no_others():
    query = parse("which papers study clustering?")
    top = [paper("a", 0.95, CLUSTERING), paper("b", 0.9, CLUSTERING)]
    more = [
        paper("c", CITE_BAR + 0.05, CLUSTERING),  # relevant and on the topic: a member
        paper("d", 0.9, DIFFUSION, shares=(("clustering", 0.0),)),  # relevant, but not on the topic
        paper("e", CITE_BAR - 0.05, CLUSTERING),  # on the topic, under the bar
    ]
    verdict = list_beyond(query, judge(query, top, RULES), more, RULES)
    assert verdict.answers and verdict.beyond == ("c",)
    assert verdict.holding is not None and "c" in verdict.holding
    assert not verdict.more_may_match  # the last candidate read ("e") is no member: the list is whole


def test_a_list_whose_last_candidate_read_matches_says_more_may_match():
    from rag.backends.extractive import ExtractiveBackend
    from rag.embedding import get_embedder
    from rag.llm import drain

    query = parse("which papers study clustering?")
    top = [paper("a", 0.95, CLUSTERING), paper("b", 0.9, CLUSTERING)]
    more = [paper("c", 0.8, CLUSTERING.replace("millions", "billions"))]
    verdict = list_beyond(query, judge(query, top, RULES), more, RULES)
    assert verdict.more_may_match
    text = drain(ExtractiveBackend(get_embedder(Settings()), RULES).generate(query, top + more, verdict)).text
    lines = text.splitlines()
    assert lines[0] == "3 papers match, and more may: the last paper read matched too (a larger -k reads more):"
    assert lines[-1] == f"- {more[0].label} [c]"  # below k: named, not quoted


def test_a_member_below_k_passes_the_sentence_check_of_those_above_it():
    """The last candidate read passes the judge's test (relevance, facets) but no sentence of it speaks to the
    question: it is not listed, as it would not be ranked above k, and the list does not say more may match."""
    from rag.backends.extractive import ExtractiveBackend
    from rag.embedding import get_embedder
    from rag.llm import drain

    query = parse("which papers study clustering?")
    top = [paper("a", 0.95, CLUSTERING), paper("b", 0.9, CLUSTERING)]
    more = [paper("c", 0.8, DIFFUSION)]  # its facet share says "on the topic"; its sentences do not
    verdict = list_beyond(query, judge(query, top, RULES), more, RULES)
    assert verdict.beyond == ("c",) and verdict.more_may_match  # the judge's test alone admits it
    text = drain(ExtractiveBackend(get_embedder(Settings()), RULES).generate(query, top + more, verdict)).text
    assert text.splitlines()[0] == "2 papers match:" and "[c]" not in text


def test_members_below_k_writing_the_topic_are_listed_without_embedding_their_sentences():
    """At 31.5k papers a list's members below k are most of an answer's sentences: one with a sentence writing every
    word of the topic passes the sentence check at once and is listed by title; only the quoted papers' sentences
    are embedded."""
    from rag.backends.extractive import ExtractiveBackend
    from rag.embedding import get_embedder
    from rag.llm import drain

    embedder = get_embedder(Settings())
    embedded: list[str] = []

    class Counting:
        def embed(self, texts):
            embedded.extend(texts)
            return embedder.embed(texts)

    query = parse("which papers study clustering?")
    top = [paper("a", 0.95, CLUSTERING), paper("b", 0.9, CLUSTERING)]
    below = [paper(pid, 0.8, f"Paper {pid} studies spectral clustering. It scales well.") for pid in "cdefg"]
    verdict = list_beyond(query, judge(query, top, RULES), below, RULES)
    assert verdict.beyond == tuple("cdefg")
    text = drain(ExtractiveBackend(Counting(), RULES).generate(query, top + below, verdict)).text
    lead = "7 papers match, and more may: the last paper read matched too (a larger -k reads more):"
    assert text.splitlines()[0] == lead
    assert all(f"- {s.label} [{s.id}]" in text for s in below)  # named by title, not quoted
    assert not any("spectral" in sentence for sentence in embedded)  # no listed member's sentence embedded
    assert sum("k-means" in sentence for sentence in embedded) == 2  # the quoted papers' sentences are


@pytest.mark.parametrize(
    "question",
    ["what does the clustering paper report?", "how many clusters does the k-means paper use?"],
)
def test_a_question_that_asks_for_no_list_gains_nothing(question):
    query = parse(question)
    top = [paper("a", 0.95, CLUSTERING)]
    verdict = judge(query, top, RULES)
    assert list_beyond(query, verdict, [paper("c", 0.9, CLUSTERING)], RULES).beyond == ()


def test_a_seed_list_names_the_same_papers_whatever_k_quoting_the_first_k(seed_store, seed_settings):
    store, embedder = seed_store
    question = "which papers study clustering?"
    wide = ask(question, store, embedder, seed_settings, k=10)
    narrow = ask(question, store, embedder, seed_settings, k=3)
    assert len(wide.citations) > 3  # the seeds hold more clustering papers than k=3 shows
    assert set(narrow.citations) == set(wide.citations)
    lines = narrow.answer.splitlines()
    assert lines[0] == f"{len(narrow.citations)} papers match:"
    listed = {s.id: s for s in narrow.sources}
    further = lines[4:]  # after the 3 quoted papers: each further member by its label and id
    assert further and all(
        any(line == f"- {listed[pid].label} [{pid}]" for pid in narrow.citations[3:]) for line in further
    )
    assert [s.id for s in narrow.sources[:3]] == narrow.citations[:3]


def test_a_topic_refusal_shows_first_the_paper_it_names():
    from rag.backends.extractive import ExtractiveBackend
    from rag.embedding import get_embedder

    from .helpers import answer_from

    question = "which papers study adversarial robustness of graph neural networks for drug discovery?"
    query = parse(question)
    # The most relevant paper holds one part of the topic; a less relevant one holds two: the refusal names it.
    robust = paper("a", 0.9, "We study adversarial robustness of image classifiers.", (("x", 1.0), ("y", 0), ("z", 0)))
    graphs = paper("b", 0.5, "Graph neural networks for drug discovery.", (("x", 0), ("y", 1.0), ("z", 1.0)))
    assert query.is_topic
    answer = answer_from(question, [robust, graphs], ExtractiveBackend(get_embedder(Settings()), RULES), RULES)
    assert answer.abstained and "the closest (b, relevance 0.50)" in answer.answer
    assert [s.id for s in answer.sources] == ["b", "a"]
