"""Citation parsing and enforcement, on whole texts and on streams split at awkward places."""

from __future__ import annotations

from dataclasses import replace

import pytest

from rag.backends import Generation
from rag.backends.extractive import ExtractiveBackend
from rag.backends.openai_compatible import OpenAICompatibleBackend
from rag.citations import CitationStreamFilter, enforce_citations, find_citations
from rag.config import Settings
from rag.embedding import get_embedder
from rag.errors import LLMError
from rag.pipeline import answer_of, respond
from rag.policy import Policy
from rag.query import parse
from rag.types import Answer, Source, Verdict

from .helpers import answer_from
from .llm_server import ScriptedLLM

VALID = ["000-01", "002-07", "KRVnpTbx7R"]


def test_find_citations_in_order_without_duplicates():
    text = "A [002-07]. B [000-01, 002-07]; C [KRVnpTbx7R] and again [000-01]."
    assert find_citations(text) == ["002-07", "000-01", "KRVnpTbx7R"]


def test_non_citation_brackets_with_spaces_are_left_alone():
    assert find_citations("a set [of words here] and a link [see the appendix]") == []


def test_invalid_ids_are_removed_and_reported():
    text = "Quantization helps [000-01]. It also helps [999-99]. Both agree [000-01, 123-45]."
    cleaned, dropped = enforce_citations(text, VALID)
    assert cleaned == "Quantization helps [000-01]. It also helps. Both agree [000-01]."
    assert dropped == ["999-99", "123-45"]


def test_duplicate_ids_inside_one_group_collapse():
    cleaned, dropped = enforce_citations("X [000-01; 000-01].", VALID)
    assert (cleaned, dropped) == ("X [000-01].", [])


@pytest.mark.parametrize("size", [1, 2, 3, 7, 100])
def test_stream_filter_matches_whole_text_enforcement(size):
    text = "Start [000-01]. Bad one [999-99]. Mixed [002-07, 888-88].\nBracket [not a citation] shown [KRVnpTbx7R]"
    stream = CitationStreamFilter(VALID)
    shown = "".join(stream.feed(text[i : i + size]) for i in range(0, len(text), size)) + stream.flush()
    assert "999-99" not in shown and "888-88" not in shown
    # brackets are for checked citations only: any other group is shown in parentheses
    assert shown == "Start [000-01]. Bad one. Mixed [002-07].\nBracket (not a citation) shown [KRVnpTbx7R]"
    assert stream.dropped == ["999-99", "888-88"]


def test_stream_filter_releases_an_unclosed_bracket_at_the_end():
    stream = CitationStreamFilter(VALID)
    # Released, but in parentheses: an unfinished "[000" would read as a citation.
    assert stream.feed("an open [000") + stream.flush() == "an open (000"
    stream = CitationStreamFilter(VALID)
    assert stream.feed("an open [bracket") + stream.flush() == "an open (bracket"


def test_a_removed_citation_takes_no_stray_space_with_it():
    # A citation dropped before punctuation or between two spaces leaves "helps ." or "agree  now" behind.
    assert enforce_citations("It helps [999-99] .", VALID) == ("It helps.", ["999-99"])
    assert enforce_citations("Both [000-01] [999-99]  agree.", VALID) == ("Both [000-01] agree.", ["999-99"])


def test_a_bracket_left_open_at_a_line_break_is_shown_as_text_and_later_citations_still_count():
    stream = CitationStreamFilter(VALID)
    shown = stream.feed("see [the appendix\nfor details [000-01] and [999-99].") + stream.flush()
    assert shown == "see (the appendix\nfor details [000-01] and."
    assert stream.dropped == ["999-99"]


def test_an_open_bracket_is_held_back_for_at_most_300_characters():
    # A model that opens "[" and writes on must not have its answer held back until the end.
    stream = CitationStreamFilter(VALID)
    assert stream.feed("[" + "a" * 299) == ""  # 300 characters held: could still be a citation
    assert stream.feed("a") == "(" + "a" * 300  # the 301st releases them, as text
    assert stream.feed(" [000-01]") + stream.flush() == " [000-01]"  # and the filter goes on as before


# -- through an answer: what the user is shown while an LLM streams -----------------------------------------

QUESTION = "how is vector quantization made differentiable?"


def sources() -> list[Source]:
    abstracts = {
        "000-01": "We propose DiVeQ, which treats vector quantization as adding an error vector. Codebooks train "
        "end to end with plain gradients.",
        "002-07": "We study differentiable relaxations of discrete choices. Straight-through estimators are biased.",
    }
    return [
        Source(pid, None, 2026, "ICLR 2026", score, text.split(". ")[0], text)
        for (pid, text), score in zip(abstracts.items(), (0.8, 0.7), strict=True)
    ]


@pytest.fixture()
def llm():
    with ScriptedLLM() as server:
        yield server


def openai_backend(llm: ScriptedLLM, model: str) -> tuple[OpenAICompatibleBackend, Policy]:
    settings = replace(Settings(), llm_base_url=llm.url, llm_model=model, llm_timeout=10.0, llm_max_retries=0)
    return OpenAICompatibleBackend(settings), Policy.from_settings(settings)


POLICY = Policy.from_settings(Settings())


def extractive(policy: Policy = POLICY) -> ExtractiveBackend:
    return ExtractiveBackend(get_embedder(Settings()), policy)


def streamed(question: str, sources: list[Source], backend, policy: Policy, **options) -> tuple[Answer, list[str]]:
    """The answer `respond` streams, and the text pieces a reader saw as they came."""
    events = list(respond(parse(question), sources, backend, policy, stream=True, **options))
    return answer_of(events), [event.text for event in events if event.type == "text"]


def test_a_streamed_llm_answer_never_shows_a_citation_of_a_paper_not_retrieved(llm):
    backend, policy = openai_backend(llm, "bad-cite")
    answer, pieces = streamed(QUESTION, sources(), backend, policy)
    assert llm.requests[-1]["stream"] is True and len(pieces) > 1  # shown as it came, not at the end
    shown = "".join(pieces)
    assert shown == answer.answer == "The most relevant paper studies this directly [000-01]. Another paper agrees."
    assert answer.citations == ["000-01"] and answer.dropped_citations == ["999-99"]


def test_an_unstreamed_llm_answer_is_checked_the_same_and_keeps_its_token_counts(llm):
    # `rag ask --json` shows nothing until the end: one plain completion, whose usage the JSON reports.
    backend, policy = openai_backend(llm, "bad-cite")
    answer = answer_from(QUESTION, sources(), backend, policy)
    assert not llm.requests[-1].get("stream")
    assert answer.answer == "The most relevant paper studies this directly [000-01]. Another paper agrees."
    assert answer.citations == ["000-01"] and answer.dropped_citations == ["999-99"]
    assert answer.usage and answer.usage["total_tokens"] == 120


def test_a_stream_cut_halfway_keeps_the_citation_it_removed_on_record(llm):
    backend, policy = openai_backend(llm, "stream-cut")
    answer, pieces = streamed(QUESTION, sources(), backend, policy, fallback=extractive(policy))
    shown = "".join(pieces)
    # the half answer with [999-99] removed and the unclosed "[998-" never shown, then the extractive answer
    assert shown == "The most relevant paper studies this [000-01]. Another agrees. And\n" + answer.answer
    assert answer.backend == "extractive" and answer.citations == ["000-01", "002-07"]
    assert answer.dropped_citations == ["999-99"]
    assert answer.warnings == [
        f"the answer stream from {llm.url} ended before the model finished; "
        "the answer above is incomplete, here is the extractive answer instead"
    ]


class PiecesBackend:
    """A streaming backend that sends exactly these pieces, then fails if asked: no HTTP script ends a
    reply with an unclosed bracket, or fails while everything it sent is still held back."""

    name = "pieces"
    streams = True

    def __init__(self, pieces: list[str], fail: bool = False) -> None:
        self.pieces, self.fail = pieces, fail

    def generate(self, query, sources: list[Source], verdict, stream: bool = True):
        yield from self.pieces
        if self.fail:
            raise LLMError("the answer stream from http://127.0.0.1:1/v1 broke off (RemoteProtocolError)")
        return Generation(text="".join(self.pieces))


def test_a_bracket_still_open_when_the_stream_ends_is_shown_as_text():
    backend = PiecesBackend(["DiVeQ trains codebooks [000-01]; see [the", " appendix"])
    answer, pieces = streamed(QUESTION, sources(), backend, POLICY)
    assert "".join(pieces) == answer.answer == "DiVeQ trains codebooks [000-01]; see (the appendix"
    assert answer.citations == ["000-01"]


def test_a_stream_that_fails_while_its_text_is_held_back_has_shown_nothing():
    # Only an unclosed "[000-" reached the filter: the user saw nothing, so there is no half answer to end.
    backend = PiecesBackend(["  [000-"], fail=True)
    answer, pieces = streamed(QUESTION, sources(), backend, POLICY, fallback=extractive())
    assert "".join(pieces) == answer.answer and answer.answer.startswith("2 papers say:\n- ")
    assert answer.warnings == [
        "the answer stream from http://127.0.0.1:1/v1 broke off (RemoteProtocolError); "
        "showing the extractive answer instead"
    ]


def test_a_lists_members_below_k_reach_the_llm_as_their_first_sentence_only(llm):
    # A list of 20 members would send 20 abstracts, past a 2,048-token server's context: the quoted ones go whole,
    # the members an answer names by title and id go as their first sentence, still citable.
    backend, _ = openai_backend(llm, "bad-cite")
    papers = [
        Source(
            f"{i:03d}-01",
            None,
            2026,
            "ICLR 2026",
            0.9 - i / 100,
            f"Paper {i} studies unlearning.",
            f"Paper {i} studies unlearning. Its second sentence reports result {i}.",
        )
        for i in range(7)
    ]
    verdict = Verdict(True, "evidence", beyond=("005-01", "006-01"))
    list(backend.generate(parse("which papers study unlearning?"), papers, verdict, stream=False))
    prompt = llm.requests[-1]["messages"][1]["content"]
    for i in range(7):
        assert f'id="{i:03d}-01"' in prompt and f"Paper {i} studies unlearning." in prompt
        assert (f"reports result {i}." in prompt) == (i < 5)
    # the learned judge's members after the quoted ones are sent the same way
    members = Verdict(True, "evidence", members=tuple(p.id for p in papers))
    list(backend.generate(parse("which papers study unlearning?"), papers, members, stream=False))
    prompt = llm.requests[-1]["messages"][1]["content"]
    assert [f"reports result {i}." in prompt for i in range(7)] == [True] * 5 + [False] * 2
