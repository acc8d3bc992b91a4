"""Papers like a paper or like a draft (rag.similar), on the real seed store: the neighbours a reader expects, and
the sentences that show why."""

from __future__ import annotations

import pytest

from rag.errors import InputError, NotFoundError
from rag.evidence import display_sentences
from rag.similar import similar

# The seeds' four multi-view clustering papers (evals/questions.jsonl q002) and three unlearning papers (q001).
MULTI_VIEW = {"000-02", "002-05", "002-06", "004-05"}
UNLEARNING = {"001-02", "001-15", "001-18"}


@pytest.fixture(scope="module")
def opened(seed_store_dir):
    from rag.api import Papers

    papers = Papers(store=seed_store_dir)
    pipeline = papers.pipeline
    return pipeline.store, pipeline.embedder, papers.settings


def test_a_paper_s_neighbours_are_the_papers_on_its_topic_and_never_itself(opened):
    paper, results = similar(*opened, paper_id="000-02", k=5)
    assert paper is not None and paper.id == "000-02"
    ids = [r.source.id for r in results]
    assert "000-02" not in ids and len(ids) == 5
    assert set(ids[:3]) == MULTI_VIEW - {"000-02"}
    closeness = [r.source.score for r in results]
    assert closeness == sorted(closeness, reverse=True)


def test_each_neighbour_shows_a_sentence_of_each_paper_sharing_topic_words(opened):
    paper, results = similar(*opened, paper_id="001-02", k=3)
    assert {r.source.id for r in results[:2]} <= UNLEARNING
    mine = display_sentences(paper.abstract)
    for result in results[:2]:
        theirs = display_sentences(result.source.abstract)
        assert result.overlaps
        for overlap in result.overlaps:
            assert overlap.yours in mine and overlap.theirs in theirs
            assert overlap.shared and all(w.lower() in overlap.theirs.lower() for w in overlap.shared)
        # The words shown name the topic, not the prose every abstract shares.
        shown = {w.lower() for o in result.overlaps for w in o.shared}
        assert any(w.startswith("unlearn") for w in shown)
        assert not shown & {"we", "propose", "novel", "results", "method"}


def test_a_draft_paragraph_finds_the_papers_it_should_cite(opened):
    draft = (
        "We remove the influence of specific training examples from a trained language model without retraining "
        "from scratch, so that the forgotten data cannot be recovered by probing the model."
    )
    paper, results = similar(*opened, text=draft, k=3)
    assert paper is None
    assert len({r.source.id for r in results} & UNLEARNING) >= 2


def test_a_filter_keeps_only_matching_papers(opened):
    _, results = similar(*opened, paper_id="000-02", k=5, where={"year": 2025})
    assert results and all(r.source.year == 2025 for r in results)
    assert results[0].source.id == "004-05"  # the one 2025 multi-view clustering paper


def test_bad_requests_are_one_clear_error(opened):
    with pytest.raises(NotFoundError, match="no paper 'nope-01'"):
        similar(*opened, paper_id="nope-01")
    with pytest.raises(InputError, match="too short"):
        similar(*opened, text="graph neural nets")
    with pytest.raises(InputError, match="either a paper id or a text"):
        similar(*opened, paper_id="000-02", text="a paragraph about multi-view clustering methods and graphs")
