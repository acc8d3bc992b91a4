"""A list naming a filter and no topic ("list the ICLR 2026 orals") names every paper of the store the filter keeps
(rag.catalogue); a list with a topic, or a topic no paper has, goes the usual way."""

from __future__ import annotations

import pytest

from rag.catalogue import Catalogue, catalogue_answer
from rag.query import parse
from rag.types import Source

from .helpers import ask


def kept(papers, year=None, status=None) -> list[str]:
    return sorted(p.id for p in papers if (year is None or p.year == year) and (status is None or p.status == status))


@pytest.mark.parametrize(
    ("question", "year", "status"),
    [
        ("list the ICLR 2026 orals in this collection and what they are about", 2026, "oral"),
        ("which papers in this collection are from ICLR 2025?", 2025, None),
        ("show me all spotlight papers", None, "spotlight"),
    ],
)
def test_a_filter_without_a_topic_lists_every_paper_it_keeps(
    question, year, status, seed_store, seed_settings, seed_papers
):
    store, embedder = seed_store
    expected = kept(seed_papers, year, status)
    assert expected  # the seeds hold such papers
    answer = ask(question, store, embedder, seed_settings)
    assert not answer.abstained
    assert answer.citations == expected
    assert answer.answer.splitlines()[0].startswith(f"{len(expected)} papers match (")
    assert all(f"[{pid}]" in answer.answer for pid in expected)


def test_a_filter_no_paper_passes_says_so(seed_store, seed_settings, seed_papers):
    store, embedder = seed_store
    assert not kept(seed_papers, 2025, "oral")
    answer = ask("list the oral papers from ICLR 2025 in this collection", store, embedder, seed_settings)
    assert answer.abstained and answer.citations == []
    assert answer.answer == "No paper in the store is ICLR 2025, oral."


@pytest.mark.parametrize("question", ["iclr 2025 clustering papers", "2025 papers on cats"])
def test_a_list_with_a_topic_is_judged_on_it_not_listed_whole(question, seed_store, seed_settings, seed_papers):
    store, embedder = seed_store
    answer = ask(question, store, embedder, seed_settings)
    of_2025 = kept(seed_papers, 2025)
    assert len(answer.citations) < len(of_2025)
    if "cats" in question:  # no paper is on cats: refused, not answered with every 2025 paper
        assert answer.abstained


def test_a_filter_keeping_more_papers_than_shown_says_how_many_and_which_are_shown():
    papers = [Source(f"p{i:03}", f"Title {i}", 2026, "ICLR 2026", 1.0, "x", "x") for i in range(3)]
    text = catalogue_answer(Catalogue(papers, 250), parse("list the ICLR 2026 orals"), "extractive", 0.0).answer
    assert (
        text.splitlines()[0] == "250 papers match (ICLR 2026, oral); the first 3 by id (name a topic to narrow them):"
    )
    assert text.splitlines()[1:] == ["- Title 0 [p000]", "- Title 1 [p001]", "- Title 2 [p002]"]
