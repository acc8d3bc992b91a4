"""Counts over a conference (rag.trend) on the real seed store: the members a list would cite, counted by year."""

from __future__ import annotations

import pytest

from rag.query import parse
from rag.trend import trend

MULTI_VIEW = {"000-02", "002-05", "002-06", "004-05"}  # evals/questions.jsonl q002; 004-05 is the 2025 one
UNLEARNING = {"001-02", "001-15", "001-18"}  # q001
CONFORMAL = {"002-02", "004-09"}  # "which papers use conformal prediction?": 2026 and 2025


@pytest.fixture(scope="module")
def pipeline(seed_store_dir):
    from rag.api import Papers

    return Papers(store=seed_store_dir).pipeline


def test_the_count_is_the_papers_on_the_topic_by_year_with_each_year_s_share(pipeline):
    counted = trend(pipeline, parse("conformal prediction"))
    assert {s.id for s in counted.members} == CONFORMAL
    assert counted.count == 2 and counted.complete
    assert counted.by_year == {2025: 1, 2026: 1}
    assert sum(counted.papers_by_year.values()) == 95
    assert counted.share(2025) == pytest.approx(1 / counted.papers_by_year[2025])
    # Every paper "which papers study multi-view clustering?" cites is counted.
    assert {s.id for s in trend(pipeline, parse("multi-view clustering")).members} >= MULTI_VIEW


def test_a_question_is_counted_on_its_topic_words(pipeline):
    asked = trend(pipeline, parse("how many papers study machine unlearning?"))
    assert asked.topic == "machine unlearning"
    assert {s.id for s in asked.members} == UNLEARNING


def test_a_year_filter_counts_what_the_whole_count_gives_that_year(pipeline):
    whole = trend(pipeline, parse("multi-view clustering"))
    counted = trend(pipeline, parse("multi-view clustering", year=2025))
    assert [s.id for s in counted.members] == [s.id for s in whole.members if s.year == 2025]
    # The 2025 multi-view clustering paper counts first; the cite bar (0.20) also admits a multi-view learning paper
    # at relevance 0.25 (004-17), in the whole count as in the filtered one.
    assert counted.members[0].id == "004-05"
    assert counted.count < whole.count
    assert counted.papers_by_year == {}  # no per-year share within a filter


def test_a_topic_no_paper_holds_counts_none(pipeline):
    counted = trend(pipeline, parse("neural decoders for quantum error correction"))
    assert counted.count == 0 and counted.by_year == {}


def test_asking_how_many_papers_answers_with_the_count_citing_the_members(seed_store_dir):
    from rag.api import Papers

    papers = Papers(store=seed_store_dir)
    answer = papers.ask("how many papers study machine unlearning?")
    assert answer.answer.startswith("3 papers in the store are on \u201cmachine unlearning\u201d (2026: 3).")
    assert set(answer.citations) == UNLEARNING and not answer.abstained
    assert all(f"[{pid}]" in answer.answer for pid in UNLEARNING)
    assert "half the papers counted were on the topic" in answer.answer  # how right a count is, said with it
    one = papers.ask("how many ICLR 2025 papers are on conformal prediction?")
    assert one.answer.startswith("1 paper in the store is on") and one.citations == ["004-09"]
    none = papers.ask("how many works study neural decoders for quantum error correction?")
    assert none.abstained and none.answer.startswith("No paper in the store is on") and not none.citations


def test_a_count_of_something_papers_give_is_not_a_count_of_papers(seed_store_dir):
    from rag.api import Papers

    answer = Papers(store=seed_store_dir).ask("how many baselines does PURGE compare against?")
    assert "in the store are on" not in answer.answer and "baselines" in answer.answer


def test_a_count_leaves_out_what_its_question_excludes_and_says_how_many(pipeline):
    whole = trend(pipeline, parse("clustering"))
    assert {s.id for s in whole.members} >= MULTI_VIEW
    without = trend(pipeline, parse("clustering but not the multi-view ones"))
    assert not MULTI_VIEW & {s.id for s in without.members}
    assert set(without.left_out) == MULTI_VIEW and without.excluding == "multi-view"
    assert without.count == whole.count - len(MULTI_VIEW)
