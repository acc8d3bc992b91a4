"""The Python API, `rag.Papers`: ask, search, get and stream against the real seed store."""

from __future__ import annotations

import subprocess
import sys

import pytest

from rag import NotFoundError, Papers
from rag.errors import InputError, StoreError
from rag.wire import answer_json, event_json, query_json

QUESTION = "which papers study unlearning?"


@pytest.fixture()
def papers(seed_store_dir) -> Papers:
    return Papers(store=seed_store_dir)


def test_ask_answers_with_checked_citations_and_the_parsed_query(papers):
    answer = papers.ask(QUESTION, k=5)
    assert not answer.abstained and answer.backend == "extractive"
    assert {"001-02", "001-18"} <= set(answer.citations) <= {s.id for s in answer.sources}
    assert all(f"[{c}]" in answer.answer for c in answer.citations)
    assert query_json(answer.query) == {
        "search": "unlearning",
        "year": None,
        "since": None,
        "until": None,
        "venue": None,
        "area": None,
        "status": None,
        "list": True,
        "excluding": None,
        "excluded": [],
    }
    payload = answer_json(answer)
    assert payload["query"] == query_json(answer.query) and payload["question"] == QUESTION


def test_ask_applies_year_and_venue_given_as_arguments(papers):
    answer = papers.ask("which papers study clustering?", year=2025, venue="iclr 2025")
    assert answer.query.year == 2025 and answer.query.venue == "ICLR 2025"
    assert answer.sources and all(s.year == 2025 and s.venue == "ICLR 2025" for s in answer.sources)


def test_a_lower_bound_on_the_year_keeps_that_year_and_later_and_says_when_none_is_left(papers):
    """ "nothing older than 2020" admits every paper of a 2025-2026 store; it was read as 2020 alone, and refused."""
    plain = papers.ask("which papers study knowledge distillation?")
    bounded = papers.ask("knowledge distillation papers, nothing older than 2020")
    assert bounded.query.since == 2020 and bounded.query.year is None
    assert plain.citations and set(bounded.citations) == set(plain.citations)
    onwards = papers.ask("knowledge distillation papers from 2026 onwards")
    assert onwards.citations and set(onwards.citations) < set(plain.citations)
    assert all(s.year >= 2026 for s in onwards.sources)
    later = papers.ask("knowledge distillation papers since 2027")
    assert later.abstained and "the store has no paper from 2027 on." in later.answer


def test_search_returns_ranked_sources(papers):
    hits = papers.search("what is AGREST?", k=3)
    assert len(hits) == 3 and hits[0].id == "000-15"
    assert [h.id for h in papers.search("unlearning", k=2, year=2026)] and all(
        h.year == 2026 for h in papers.search("unlearning", k=4, year=2026)
    )


def test_get_returns_the_paper_or_a_clear_not_found(papers, seed_papers):
    paper = papers.get("001-02")
    expected = next(p for p in seed_papers if p.id == "001-02")
    assert (paper.id, paper.abstract, paper.year) == (expected.id, expected.abstract, expected.year)
    with pytest.raises(NotFoundError, match="no paper with id '999-99'"):
        papers.get("999-99")


def test_stream_events_come_in_order_and_end_with_the_same_answer_as_ask(papers):
    events = list(papers.stream(QUESTION))
    types = [e.type for e in events]
    assert types[:2] == ["query", "sources"] and types[-1] == "answer" and set(types[2:-1]) == {"text"}
    final = events[-1].answer
    assert "".join(e.text for e in events if e.type == "text") == final.answer
    assert [s.id for s in events[1].sources] == [s.id for s in final.sources]
    assert events[0].query == final.query
    expected = papers.ask(QUESTION)
    assert (final.answer, final.citations) == (expected.answer, expected.citations)
    assert event_json(events[-1])["answer"]["citations"] == final.citations


def test_a_streamed_abstention_is_an_answer_too(papers):
    events = list(papers.stream("which papers study federated unlearning?"))
    assert events[-1].type == "answer" and events[-1].answer.abstained
    assert events[-1].answer.citations == []


def test_bad_questions_and_missing_stores_are_clear_errors(papers, tmp_path):
    with pytest.raises(InputError, match="the question is empty"):
        papers.ask("  \x00 ")
    with pytest.raises(InputError, match="the question is empty"):
        next(iter(papers.stream("   ")))
    with pytest.raises(StoreError, match=f"no store at {tmp_path / 'nowhere'}"):
        Papers(store=tmp_path / "nowhere").search("unlearning")
    assert not (tmp_path / "nowhere").exists()  # a mistyped store is not created


def test_import_rag_loads_nothing_heavy():
    """`import rag` (and `from rag import Papers`) must stay instant: the heavy libraries load on first use."""
    code = "import sys, rag; from rag import Papers; print(' '.join(sorted(sys.modules)))"
    loaded = set(
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    )
    heavy = {"chromadb", "numpy", "onnxruntime", "openai", "llama_index", "tokenizers", "bm25s", "rich", "typer"}
    assert not heavy & loaded


def test_leaving_a_stream_early_leaves_the_papers_usable(papers):
    stream = papers.stream(QUESTION)
    assert next(stream).type == "query"
    stream.close()  # the consumer went away (a closed connection, a `break`)
    assert papers.ask(QUESTION).citations


def test_a_follow_up_with_history_is_read_as_rag_chat_reads_it(papers):
    """Earlier turns sent back (as a stateless client does) make "the third one" and "only 2025 ones" mean what they
    mean in `rag chat`: the third paper the last answer cited, the same question narrowed to 2025."""
    from rag.api import PastTurn

    first = papers.ask("which papers study unlearning?", history=[])
    history = [PastTurn("which papers study unlearning?", first.answer)]
    third = papers.ask("what does the third one find?", history=history)
    assert third.citations == [first.citations[2]]
    events = list(papers.stream("only 2025 ones", history=history))
    query = event_json(events[0])
    assert query["resolved"]["year"] == 2025 and query["query"]["search"] == "unlearning"
    assert all(source.year == 2025 for source in events[-1].answer.sources)
    with pytest.raises(InputError, match="no list to count in"):
        papers.ask("the second one", history=[])


def test_a_follow_up_leaving_papers_out_asks_the_last_question_without_them(papers):
    """ "but not the multi-view ones" after "clustering papers" is that question less those papers (it searched
    "multi-view" alone, listing exactly the papers to leave out)."""
    from rag.api import PastTurn

    multi_view = {"000-02", "002-05", "002-06", "004-05"}
    first = papers.ask("clustering papers", history=[])
    assert multi_view & set(first.citations)
    later = papers.ask("but not the multi-view ones", history=[PastTurn("clustering papers", first.answer)])
    assert later.citations and not multi_view & set(later.citations)
    assert {"000-16", "004-07"} <= set(later.citations) and multi_view <= set(later.query.excluded)


def test_compare_them_after_an_answer_citing_several_papers_sets_them_side_by_side(papers):
    """ "compare them" is about the papers the last answer cited: each is quoted on the topic, side by side, none
    dropped as a weaker match (it used to raise a TypeError through `Papers.stream`)."""
    from rag.api import PastTurn

    first = papers.ask(QUESTION)
    assert len(first.citations) >= 2
    history = [PastTurn(QUESTION, first.answer)]
    events = list(papers.stream("compare them", history=history))
    assert [event.type for event in events] == ["query", "sources", "text", "answer"]
    assert events[0].resolved is not None and list(events[0].resolved.paper_ids) == first.citations
    assert [s.id for s in events[1].sources] == first.citations
    answer = events[-1].answer
    assert not answer.abstained and answer.citations == first.citations
    lead, *lines = answer.answer.splitlines()
    assert lead == f"{len(first.citations)} papers side by side:"
    assert [line.rsplit(" [", 1)[1] for line in lines] == [f"{pid}]" for pid in first.citations]  # one line each
    assert events[2].text == answer.answer
    assert papers.ask("compare them", history=history).citations == first.citations  # whole, the same
