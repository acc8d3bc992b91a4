"""Citation parsing and enforcement, on whole texts and on streams split at awkward places."""

from __future__ import annotations

import pytest

from rag.citations import CitationStreamFilter, enforce_citations, find_citations

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
